// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chaos harness's checker must catch each kind of violation: a tick
// that never ran, a repeat under the same token, a repeat or an overlap far
// from any fault or after a deploy, a dead letter given up early, tokens
// that fall across a data loss or from one occurrence to the next, a data
// loss nobody reported. (Its passing
// verdict means nothing unless it can fail.)
#include <boost/test/unit_test.hpp>

#include "checker.hpp"

#include <string>
#include <utility>

namespace chaos = chronopool::durable::chaos;

namespace {

chaos::run_record run(std::int64_t due, std::uint64_t token, std::int64_t start, std::int64_t end) {
  chaos::run_record r;
  r.schedule = "s";
  r.due = due;
  r.token = token;
  r.pid = 1;
  r.start = start;
  r.end = end;
  return r;
}

chaos::fault_record chaos_checker_fault(const char* kind, std::int64_t start, std::int64_t end, long target = 0,
                                        std::string problem = {}) {
  chaos::fault_record f;
  f.kind = kind;
  f.start = start;
  f.end = end;
  f.target = target;
  f.problem = std::move(problem);
  return f;
}

chaos::schedule_grid chaos_checker_grid(std::int64_t first_due, std::int64_t period, std::uint32_t max_attempts = 0) {
  chaos::schedule_grid g;
  g.first_due = first_due;
  g.period = period;
  g.max_attempts = max_attempts;
  return g;
}

// Ticks at 1000, 1100, 1200, each run once, no faults.
chaos::check_input clean() {
  chaos::check_input in;
  in.schedules["s"] = chaos_checker_grid(1000, 100);
  in.check_until = 1200;
  in.margin = 50;
  in.runs = {run(1000, 1, 1001, 1010), run(1100, 2, 1101, 1110), run(1200, 3, 1201, 1210)};
  return in;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(chaos_checker)

BOOST_AUTO_TEST_CASE(a_clean_run_passes) {
  auto rep = chaos::check(clean());
  BOOST_TEST(rep.ok());
  BOOST_TEST(rep.ticks_expected == 3u);
  BOOST_TEST(rep.ticks_run == 3u);
}

BOOST_AUTO_TEST_CASE(a_tick_that_never_ran_fails) {
  auto in = clean();
  in.runs.erase(in.runs.begin() + 1);
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.missing == 1u);
}

BOOST_AUTO_TEST_CASE(a_repeat_under_the_same_token_fails_even_near_a_fault) {
  auto in = clean();
  in.faults.push_back(chaos_checker_fault("kill", 1100, 1105));
  in.runs.push_back(run(1100, 2, 1150, 1160));
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_repeat_far_from_faults_fails_and_near_one_passes) {
  auto in = clean();
  in.runs.push_back(run(1100, 9, 1150, 1160));
  BOOST_TEST(!chaos::check(in).ok());
  in.faults.push_back(chaos_checker_fault("kill", 1120, 1125));
  auto rep = chaos::check(in);
  BOOST_TEST(rep.ok());
  BOOST_TEST(rep.duplicated_ticks == 1u);
}

BOOST_AUTO_TEST_CASE(overlapping_runs_need_a_fault_near_them) {
  auto in = clean();
  in.runs[1] = run(1100, 2, 1101, 1500);  // still running when the next tick starts
  in.check_until = 1200;
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.overlaps == 1u);
  in.faults.push_back(chaos_checker_fault("SIGSTOP", 1102, 1400));
  BOOST_TEST(chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(the_first_token_of_each_occurrence_must_grow) {
  auto in = clean();
  in.runs[2].token = 2;  // 1200 first ran under 1100's token
  auto rep = chaos::check(in);
  BOOST_TEST_REQUIRE(!rep.ok());
  BOOST_TEST(rep.violations.front().find("a token went back: s@1200 token 2") != std::string::npos);
  in.runs[2].token = 1;  // below it
  BOOST_TEST(!chaos::check(in).ok());
  // A repeat of 1100 after 1200 ran (writes rolled back by a failover),
  // under a higher token: the occurrences' first tokens still grow.
  in = clean();
  in.runs.push_back(run(1100, 9, 1250, 1260));
  in.faults.push_back(chaos_checker_fault("kill -9 master, replica promoted", 1215, 1240));
  BOOST_TEST(chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(runs_off_the_grid_fail) {
  auto in = clean();
  in.runs.push_back(run(1150, 7, 1151, 1160));
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_tick_that_never_ran_passes_only_as_a_dead_letter_after_max_attempts) {
  auto in = clean();
  in.runs.erase(in.runs.begin() + 1);
  in.max_attempts = 3;
  in.dead_letters["s@1100"] = 3;
  auto rep = chaos::check(in);
  BOOST_TEST(rep.ok());
  BOOST_TEST(rep.dead_lettered == 1u);
  in.dead_letters["s@1100"] = 2;  // given up too early
  rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.violations.front().find("dead-lettered after 2 of 3") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dead_letters_are_held_to_their_own_schedules_max_attempts) {
  auto in = clean();
  in.schedules["poison"] = chaos_checker_grid(1000, 100, 3);
  in.max_attempts = 1000;  // the ticks' policy: never give up
  for (std::int64_t t = 1000; t <= 1200; t += 100) in.dead_letters["poison@" + std::to_string(t)] = 3;
  auto rep = chaos::check(in);
  BOOST_TEST(rep.ok());
  BOOST_TEST(rep.dead_lettered == 3u);
  in.dead_letters["poison@1100"] = 2;
  BOOST_TEST(!chaos::check(in).ok());
  in.dead_letters["poison@1100"] = 3;
  in.dead_letters["s@1100"] = 3;  // a tick schedule's fire, far below its 1000
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_periodic_schedule_must_move_on_past_its_dead_letters) {
  auto in = clean();
  in.schedules["poison"] = chaos_checker_grid(1000, 100, 3);
  in.dead_letters["poison@1000"] = 3;  // and then stuck: 1100 and 1200 never came
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.missing == 2u);
}

namespace {

// A data loss at 1050 (the fleet seen caught up then), schedules re-created
// from 1300 on: 1100 and 1200 are lost with the data.
chaos::check_input chaos_checker_data_loss() {
  auto in = clean();
  in.check_until = 1400;
  in.runs = {run(1000, 5, 1001, 1010), run(1300, 1'000'001, 1301, 1310), run(1400, 1'000'002, 1401, 1410)};
  in.faults.push_back(chaos_checker_fault(chaos::data_loss_fault, 1050, 1300));
  in.data_lost_reports = {1120};
  return in;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ticks_due_inside_a_reported_data_loss_are_lost_with_it) {
  auto in = chaos_checker_data_loss();
  auto rep = chaos::check(in);
  BOOST_TEST(rep.ok());
  BOOST_TEST(rep.lost_with_data == 2u);
  in.runs.pop_back();  // 1400, due after the re-creation, must run
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_data_loss_nobody_reported_fails) {
  auto in = chaos_checker_data_loss();
  in.data_lost_reports = {900};  // before it: a report of another loss
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.violations.front().find("no worker reported data_lost") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(tokens_after_a_data_loss_must_exceed_those_before_it) {
  auto in = chaos_checker_data_loss();
  in.runs[1].token = 5;  // the counter restarted: equal to one handed out before
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.violations.front().find("not above those before it") != std::string::npos);
  in.runs[1].token = 1;
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_repeat_or_overlap_after_a_deploy_or_at_maxmemory_fails) {
  for (const char* kind : {chaos::deploy_fault, chaos::maxmemory_fault}) {
    auto in = clean();
    in.faults.push_back(chaos_checker_fault(kind, 1120, 1125));
    in.runs.push_back(run(1100, 9, 1150, 1160));  // completed, then run again
    auto rep = chaos::check(in);
    BOOST_TEST(!rep.ok(), kind);
    BOOST_TEST(rep.violations.front().find("ran twice") != std::string::npos, kind);
    in.runs.pop_back();
    in.runs[1] = run(1100, 2, 1101, 1500);  // overlapping the next tick
    BOOST_TEST(!chaos::check(in).ok(), kind);
    in.faults.push_back(chaos_checker_fault("kill -9 worker", 1102, 1104));  // a real cause
    BOOST_TEST(chaos::check(in).ok(), kind);
  }
  auto in = clean();
  in.faults.push_back(chaos_checker_fault(chaos::deploy_fault, 1120, 1125));
  in.runs.push_back(run(1100, 9, 1150, 1160));
  BOOST_TEST(chaos::check(in).violations.front() ==
             "a tick ran twice during deploy (upsert) and no other fault: s@1100 token 2 pid 1 [1101, 1110]");
}

BOOST_AUTO_TEST_CASE(a_fault_the_harness_saw_go_wrong_fails) {
  auto in = clean();
  in.faults.push_back(
      chaos_checker_fault(chaos::maxmemory_fault, 1120, 1125, 0, "a schedule was created at maxmemory"));
  auto rep = chaos::check(in);
  BOOST_TEST(!rep.ok());
  BOOST_TEST(rep.violations.front() == "redis at maxmemory: a schedule was created at maxmemory");
}

BOOST_AUTO_TEST_CASE(log_lines_are_parsed_strictly) {
  chaos::run_record r;
  BOOST_TEST(chaos::parse_run("s1@1795441582889 12 4242 100 130", r));
  BOOST_TEST(r.schedule == "s1");
  BOOST_TEST(r.due == 1795441582889);
  BOOST_TEST(r.token == 12u);
  BOOST_TEST(r.pid == 4242);
  BOOST_TEST(!chaos::parse_run("s1 12 4242 100 130", r));
  BOOST_TEST(!chaos::parse_run("s1@x 12 4242 100 130", r));
  BOOST_TEST(!chaos::parse_run("s1@5 12 4242 130 100", r));
  BOOST_TEST(!chaos::parse_run("s1@5 12", r));
}

BOOST_AUTO_TEST_SUITE_END()

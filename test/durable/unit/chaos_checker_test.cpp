// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chaos harness's checker must catch each kind of violation: a tick
// that never ran, a repeat under the same token, a repeat or an overlap far
// from any fault. (Its passing verdict means nothing unless it can fail.)
#include <boost/test/unit_test.hpp>

#include "checker.hpp"

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

// Ticks at 1000, 1100, 1200, each run once, no faults.
chaos::check_input clean() {
  chaos::check_input in;
  in.schedules["s"] = {1000, 100};
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
  in.faults.push_back({"kill", 1100, 1105});
  in.runs.push_back(run(1100, 2, 1150, 1160));
  BOOST_TEST(!chaos::check(in).ok());
}

BOOST_AUTO_TEST_CASE(a_repeat_far_from_faults_fails_and_near_one_passes) {
  auto in = clean();
  in.runs.push_back(run(1100, 9, 1150, 1160));
  BOOST_TEST(!chaos::check(in).ok());
  in.faults.push_back({"kill", 1120, 1125});
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
  in.faults.push_back({"SIGSTOP", 1102, 1400});
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

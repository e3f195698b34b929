// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43, item 5: durable cron schedules in a time zone, on a real Redis:
// the first instant after Redis's TIME, the next ones computed from each
// fire's instant with the shared cron code (DST across New York's
// spring-forward and fall-back, through backfill), misfires after the fleet
// was down (skip, fire once, catch up), failures moving on to the next
// instant, upsert keeping the position, trigger, listing, bad input refused.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"

#include <chronopool/cron_schedule.hpp>
#include <chronopool/durable/detail/function_calls.hpp>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cron_durable_test {

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
namespace sc = std::chrono;

// The dues a handler saw, per schedule id, in the order they ran.
struct cron_run_log {
  mutable std::mutex m;
  std::vector<std::pair<std::string, sc::system_clock::time_point>> runs;

  cd::scheduler::task_handler handler() {
    return [this](const cd::fire_context& c) {
      std::lock_guard lk(m);
      runs.emplace_back(c.schedule_id, c.due);
      if (c.fire_id != c.schedule_id + "@" + std::to_string(sc::duration_cast<sc::milliseconds>(c.due.time_since_epoch()).count()))
        throw std::logic_error("fire id " + c.fire_id + " does not name its due");
    };
  }
  std::vector<sc::system_clock::time_point> of(const std::string& id) const {
    std::lock_guard lk(m);
    std::vector<sc::system_clock::time_point> out;
    for (const auto& [s, due] : runs)
      if (s == id) out.push_back(due);
    return out;
  }
};

sc::system_clock::time_point cron_utc(int y, unsigned mo, unsigned d, int h, int mi) {
  return sc::sys_days{sc::year{y} / sc::month{mo} / sc::day{d}} + sc::hours(h) + sc::minutes(mi);
}

std::string cron_refusal(cd::scheduler& s, const std::string& expression, const std::string& zone) {
  try {
    s.async_schedule_cron("refused", "job", "", expression, zone, {}, boost::asio::use_future).get();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

BOOST_FIXTURE_TEST_SUITE(durable_cron, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(the_first_instant_follows_redis_time_and_listing_shows_the_expression_and_zone) {
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  const auto before = s.async_server_time(boost::asio::use_future).get();
  const auto due =
      s.async_schedule_cron("nightly", "job", "", "30 2 * * *", "America/New_York", {}, boost::asio::use_future).get();
  const auto expected = chronopool::cron_schedule("30 2 * * *", "America/New_York").next_after(before);
  BOOST_TEST_REQUIRE(expected.has_value());
  BOOST_TEST((due == *expected));
  const auto page = s.async_list_schedules({}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(page.schedules.size() == 1u);
  const auto& e = page.schedules[0];
  BOOST_TEST((e.kind == cd::schedule_kind::cron));
  BOOST_TEST(e.cron == "30 2 * * *");
  BOOST_TEST(e.time_zone == "America/New_York");
  BOOST_TEST(e.period.count() == 0);
  BOOST_TEST((e.next_due == due));
  const auto d = s.async_inspect("nightly", boost::asio::use_future).get();
  BOOST_TEST(d.summary.cron == "30 2 * * *");
}

BOOST_AUTO_TEST_CASE(bad_expressions_and_unknown_zones_are_refused_naming_the_value_and_nothing_is_created) {
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  const std::string bad_expr = cron_refusal(s, "61 * * * *", "UTC");
  BOOST_TEST(bad_expr.find("expression '61 * * * *'") != std::string::npos, bad_expr);
  BOOST_TEST(bad_expr.find("minute") != std::string::npos, bad_expr);
  const std::string bad_zone = cron_refusal(s, "0 2 * * *", "Mars/Olympus_Mons");
  BOOST_TEST(bad_zone.find("time_zone 'Mars/Olympus_Mons'") != std::string::npos, bad_zone);
  BOOST_TEST(cron_refusal(s, "0 2 * * *", "Europe/Berlin") == "(accepted)");
  // Only the accepted one exists.
  const auto page = s.async_list_schedules({}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(page.schedules.size() == 1u);
  BOOST_TEST(page.schedules[0].time_zone == "Europe/Berlin");
}

BOOST_AUTO_TEST_CASE(backfill_runs_new_york_instants_across_spring_forward_and_fall_back_at_the_right_utc_times) {
  cron_run_log log;  // first: it outlives the scheduler, whose fires may run until it stops
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", log.handler());
  s.async_schedule_cron("spring", "job", "", "30 2 * * *", "America/New_York", {}, boost::asio::use_future).get();
  s.async_schedule_cron("fall", "job", "", "30 1 * * *", "America/New_York", {}, boost::asio::use_future).get();
  // 2026-03-08: 02:00 EST jumps to 03:00 EDT, so 02:30 runs at the
  // transition, 07:00 UTC; 2026-11-01: 01:30 EDT comes twice, runs once.
  const auto spring = s.async_backfill("spring", cron_utc(2026, 3, 6, 0, 0), cron_utc(2026, 3, 10, 0, 0),
                                       boost::asio::use_future).get();
  BOOST_TEST(spring.occurrences == 4u);
  BOOST_TEST(spring.added == 4u);
  const auto fall = s.async_backfill("fall", cron_utc(2026, 10, 31, 0, 0), cron_utc(2026, 11, 3, 0, 0),
                                     boost::asio::use_future).get();
  BOOST_TEST(fall.occurrences == 3u);
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return log.of("spring").size() >= 4 && log.of("fall").size() >= 3; }));
  std::this_thread::sleep_for(sc::milliseconds(300));  // nothing more may come
  const std::vector<sc::system_clock::time_point> spring_expected{
      cron_utc(2026, 3, 6, 7, 30), cron_utc(2026, 3, 7, 7, 30), cron_utc(2026, 3, 8, 7, 0), cron_utc(2026, 3, 9, 6, 30)};
  BOOST_TEST((log.of("spring") == spring_expected));
  const std::vector<sc::system_clock::time_point> fall_expected{cron_utc(2026, 10, 31, 5, 30),
                                                               cron_utc(2026, 11, 1, 5, 30), cron_utc(2026, 11, 2, 6, 30)};
  BOOST_TEST((log.of("fall") == fall_expected));
  // Over 1000 instants: too_many_fires, computed here, nothing enqueued.
  BOOST_CHECK_THROW(s.async_backfill("spring", cron_utc(2000, 1, 1, 0, 0), cron_utc(2026, 1, 1, 0, 0),
                                     boost::asio::use_future).get(),
                    boost::system::system_error);
}

BOOST_AUTO_TEST_CASE(a_second_level_expression_fires_each_instant_once_in_order) {
  cron_run_log log;  // first: it outlives the scheduler, whose fires may run until it stops
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", log.handler());
  const auto first = s.async_schedule_cron("tick", "job", "", "*/1 * * * * *", "America/New_York", {},
                                           boost::asio::use_future).get();
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return log.of("tick").size() >= 3; }));
  const auto dues = log.of("tick");
  BOOST_TEST((dues[0] == first));
  for (std::size_t i = 1; i < dues.size(); ++i) BOOST_TEST((dues[i] - dues[i - 1] == sc::seconds(1)));
  BOOST_TEST((sc::floor<sc::seconds>(dues[0]) == dues[0]));
}

BOOST_AUTO_TEST_CASE(after_the_fleet_was_down_the_misfire_policy_applies_on_redis_time) {
  cd::scheduler creator(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  cd::schedule_options skip, once, catch_up;
  skip.misfire = cd::misfire_policy::skip;
  once.misfire = cd::misfire_policy::fire_once_now;
  catch_up.misfire = cd::misfire_policy::catch_up;
  catch_up.catch_up_max = 2;
  creator.async_schedule_cron("skip", "job", "", "* * * * * *", "UTC", skip, boost::asio::use_future).get();
  creator.async_schedule_cron("once", "job", "", "* * * * * *", "UTC", once, boost::asio::use_future).get();
  creator.async_schedule_cron("catch", "job", "", "* * * * * *", "UTC", catch_up, boost::asio::use_future).get();
  // Nobody runs fires for over four instants.
  std::this_thread::sleep_for(sc::milliseconds(4300));
  cd::scheduler worker(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  cron_run_log log;
  worker.register_handler("job", log.handler());
  worker.start();
  BOOST_TEST_REQUIRE(dt::wait_until(
      [&] { return log.of("skip").size() >= 2 && log.of("once").size() >= 3 && log.of("catch").size() >= 4; }));
  worker.stop();
  // The pending instant runs late; then skip jumps to the first instant
  // ahead, fire_once_now makes up one missed instant first, catch_up two.
  const auto sk = log.of("skip");
  BOOST_TEST((sk[1] - sk[0] >= sc::seconds(3)));
  const auto on = log.of("once");
  BOOST_TEST((on[1] - on[0] == sc::seconds(1)));
  BOOST_TEST((on[2] - on[1] >= sc::seconds(2)));
  const auto cu = log.of("catch");
  BOOST_TEST((cu[1] - cu[0] == sc::seconds(1)));
  BOOST_TEST((cu[2] - cu[1] == sc::seconds(1)));
  BOOST_TEST((cu[3] - cu[2] >= sc::seconds(2)));
}

BOOST_AUTO_TEST_CASE(a_failed_last_attempt_is_dead_lettered_and_the_schedule_moves_to_the_next_instant) {
  std::mutex m;
  std::vector<std::string> ok_fires;
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  int calls = 0;
  s.register_handler("job", [&](const cd::fire_context& c) {
    std::lock_guard lk(m);
    if (calls++ == 0) throw std::runtime_error("first run fails");
    ok_fires.push_back(c.fire_id);
  });
  cd::schedule_options o;
  o.failure = cd::failure_policy{1, sc::milliseconds(10), 2.0, sc::milliseconds(10)};
  s.async_schedule_cron("flaky", "job", "", "* * * * * *", "UTC", o, boost::asio::use_future).get();
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] {
    std::lock_guard lk(m);
    return !ok_fires.empty();
  }));
  const auto dead = s.async_list_dead_letters(10, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(dead.size() == 1u);
  BOOST_TEST(dead[0].last_error == "first run fails");
  std::lock_guard lk(m);
  BOOST_TEST(ok_fires[0] > dead[0].fire_id);  // same id, a later instant (same digit count)
}

BOOST_AUTO_TEST_CASE(upserts_keep_the_position_and_trigger_runs_an_extra_fire) {
  cron_run_log log;  // first: it outlives the scheduler, whose fires may run until it stops
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  const auto due =
      s.async_schedule_cron("daily", "job", "v1", "0 3 * * *", "Europe/Berlin", {}, boost::asio::use_future).get();
  cd::schedule_options replace;
  replace.replace = true;
  // A deploy re-creating it unchanged keeps it as it is.
  std::vector<cd::schedule_spec> deploy(1);
  deploy[0].id = "daily";
  deploy[0].task = "job";
  deploy[0].payload = "v1";
  deploy[0].kind = cd::schedule_kind::cron;
  deploy[0].cron = "0 3 * * *";
  deploy[0].time_zone = "Europe/Berlin";
  deploy[0].options = replace;
  auto r = s.async_upsert_schedules(deploy, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(r.size() == 1u);
  BOOST_TEST((r[0].outcome == cd::upsert_outcome::unchanged));
  BOOST_TEST((r[0].due == due));
  // An update in place keeps the pending occurrence and takes the payload.
  cd::schedule_options update;
  update.update = true;
  const auto kept =
      s.async_schedule_cron("daily", "job", "v2", "0 3 * * *", "Europe/Berlin", update, boost::asio::use_future).get();
  BOOST_TEST((kept == due));
  BOOST_TEST(s.async_inspect("daily", boost::asio::use_future).get().payload == "v2");
  // Trigger now: an extra fire, the position stays.
  s.register_handler("job", log.handler());
  const auto t = s.async_trigger_now("daily", boost::asio::use_future).get();
  s.start();
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return log.of("daily").size() == 1; }));
  BOOST_TEST((log.of("daily")[0] == t.due));
  BOOST_TEST((s.async_inspect("daily", boost::asio::use_future).get().summary.next_due == due));
}

BOOST_AUTO_TEST_CASE(resume_runs_the_pending_instant_then_the_misfire_policy_and_an_update_takes_a_new_expression) {
  cron_run_log log;  // first: it outlives the scheduler, whose fires may run until it stops
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", log.handler());
  cd::schedule_options skip;
  skip.misfire = cd::misfire_policy::skip;
  const auto paused_due =
      s.async_schedule_cron("paused", "job", "", "* * * * * *", "UTC", skip, boost::asio::use_future).get();
  BOOST_TEST(s.async_pause("paused", boost::asio::use_future).get());
  // Every two seconds, then updated in place to every third second: the
  // pending instant stays, the ones after it follow the new expression.
  const auto even =
      s.async_schedule_cron("moved", "job", "", "*/2 * * * * *", "UTC", {}, boost::asio::use_future).get();
  cd::schedule_options update;
  update.update = true;
  const auto kept =
      s.async_schedule_cron("moved", "job", "", "*/3 * * * * *", "UTC", update, boost::asio::use_future).get();
  BOOST_TEST((kept == even));
  BOOST_TEST(s.async_inspect("moved", boost::asio::use_future).get().summary.cron == "*/3 * * * * *");
  s.start();
  std::this_thread::sleep_for(sc::milliseconds(3300));
  BOOST_TEST(log.of("paused").empty());  // paused: not claimed
  BOOST_TEST(s.async_resume("paused", boost::asio::use_future).get());
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return log.of("paused").size() >= 2 && log.of("moved").size() >= 3; }));
  const auto p = log.of("paused");
  BOOST_TEST((p[0] == paused_due));           // the pending instant, late
  BOOST_TEST((p[1] - p[0] >= sc::seconds(3)));  // skip: the instants missed while paused dropped
  const auto m = log.of("moved");
  BOOST_TEST((m[0] == even));
  for (std::size_t i = 1; i < m.size(); ++i)
    BOOST_TEST(sc::duration_cast<sc::seconds>(m[i].time_since_epoch()).count() % 3 == 0);
}

BOOST_AUTO_TEST_CASE(bulk_upsert_reports_each_schedule_and_a_refusal_loses_nothing_accepted) {
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns, dt::test_redis_options()));
  std::vector<cd::schedule_spec> specs(6);
  specs[0].id = "rate";
  specs[0].kind = cd::schedule_kind::fixed_rate;
  specs[0].delay = sc::hours(1);
  specs[0].period = sc::minutes(5);
  specs[1].id = "tokyo";
  specs[1].kind = cd::schedule_kind::cron;
  specs[1].cron = "0 9 * * MON-FRI";
  specs[1].time_zone = "Asia/Tokyo";
  specs[2].id = "rate";  // again, without replace: Redis refuses it
  specs[2].kind = cd::schedule_kind::one_shot;
  specs[2].delay = sc::hours(2);
  specs[3].id = "both";  // a cron expression and a fixed period
  specs[3].kind = cd::schedule_kind::cron;
  specs[3].cron = "0 9 * * *";
  specs[3].period = sc::seconds(5);
  specs[4].id = "nowhere";
  specs[4].kind = cd::schedule_kind::cron;
  specs[4].cron = "0 9 * * *";
  specs[4].time_zone = "Nowhere/Special";
  specs[5].id = "once";
  specs[5].kind = cd::schedule_kind::one_shot;
  specs[5].delay = sc::hours(3);
  for (auto& spec : specs) spec.task = "job";
  const auto r = s.async_upsert_schedules(specs, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(r.size() == 6u);
  BOOST_TEST((r[0].outcome == cd::upsert_outcome::created));
  BOOST_TEST((r[1].outcome == cd::upsert_outcome::created));
  BOOST_TEST((r[2].outcome == cd::upsert_outcome::failed));
  BOOST_TEST(r[2].error.find("EXISTS") != std::string::npos, r[2].error);
  BOOST_TEST((r[3].outcome == cd::upsert_outcome::failed));
  BOOST_TEST(r[3].error.find("schedule_spec.period") != std::string::npos, r[3].error);
  BOOST_TEST(r[3].error.find("5000 ms") != std::string::npos, r[3].error);
  BOOST_TEST((r[4].outcome == cd::upsert_outcome::failed));
  BOOST_TEST(r[4].error.find("Nowhere/Special") != std::string::npos, r[4].error);
  BOOST_TEST((r[5].outcome == cd::upsert_outcome::created));
  std::vector<std::string> ids;
  for (const auto& e : s.async_list_schedules({}, boost::asio::use_future).get().schedules) ids.push_back(e.id);
  BOOST_TEST((ids == std::vector<std::string>{"once", "rate", "tokyo"}));
  BOOST_TEST(s.async_inspect("rate", boost::asio::use_future).get().summary.period.count() == 300000);
  // Many: three function calls' worth, all created, then all unchanged.
  std::vector<cd::schedule_spec> many(1200);
  for (std::size_t i = 0; i < many.size(); ++i) {
    many[i].id = "m" + std::to_string(i);
    many[i].task = "job";
    many[i].kind = cd::schedule_kind::cron;
    many[i].cron = "0 0 * * *";
    many[i].options.replace = true;
  }
  for (const auto expected : {cd::upsert_outcome::created, cd::upsert_outcome::unchanged}) {
    const auto all = s.async_upsert_schedules(many, boost::asio::use_future).get();
    BOOST_TEST_REQUIRE(all.size() == many.size());
    std::size_t matching = 0;
    for (const auto& e : all) matching += e.outcome == expected ? 1u : 0u;
    BOOST_TEST(matching == many.size());
  }
}

BOOST_AUTO_TEST_SUITE_END()

// The library's one move without a process: a lease that ran out on the
// last attempt dead-letters the fire at a claim, and the schedule takes its
// stored next instant (cnext); without one, the fire gets one more attempt,
// whose nack brings the instants.
BOOST_AUTO_TEST_CASE(durable_cron_lease_expiry_on_the_last_attempt_moves_to_the_stored_next_instant) {
  namespace dd = chronopool::durable::detail;
  chronopool::durable::test::sync_redis redis(dt::test_redis_options());
  BOOST_TEST_REQUIRE(!redis.exec(dd::load_functions_call()).is_error());
  const dd::key_space ks(dt::unique_namespace());
  dd::put_request r;
  r.id = "c";
  r.task = "job";
  r.kind = dd::schedule_kind::cron;
  r.absolute = true;
  r.at_ms = 1000;
  r.cron = "0 * * * *";
  r.time_zone = "UTC";
  r.cron_next_ms = 3'600'000;
  r.failure.max_attempts = 1;
  BOOST_TEST_REQUIRE(!redis.exec(dd::put_call(ks, r)).is_error());
  const auto claim = [&] {
    dd::claim_result out;
    const auto ec = dd::parse_claim(redis.exec(dd::claim_call(ks, "w", 1, 16)), out);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    return out;
  };
  const auto hget = [&](const std::string& field) {
    return redis.exec({"HGET", ks.prefix() + "s:c", field});
  };
  auto first = claim();
  BOOST_TEST_REQUIRE(first.fires.size() == 1u);
  BOOST_TEST(first.fires[0].cron == "0 * * * *");
  BOOST_TEST(first.fires[0].time_zone == "UTC");
  std::this_thread::sleep_for(sc::milliseconds(20));  // the 1 ms lease runs out
  BOOST_TEST(claim().fires.empty());                  // dead-lettered there, moved on
  BOOST_TEST(hget("due").str == "3600000");
  BOOST_TEST(hget("cnext").is_nil());
  BOOST_TEST(redis.exec({"ZSCORE", ks.prefix() + "dead", "c@1000"}).is_text());
  // Now nobody knows the instant after 3600000: one more attempt instead.
  BOOST_TEST_REQUIRE(claim().fires.size() == 1u);
  std::this_thread::sleep_for(sc::milliseconds(20));
  const auto again = claim();
  BOOST_TEST_REQUIRE(again.fires.size() == 1u);
  BOOST_TEST(again.fires[0].attempt == 2u);
  BOOST_TEST(again.fires[0].due_ms == 3'600'000);
  // Its nack dead-letters it and takes the plan: a (7200000) is long past,
  // the misfire budget (1) makes it up; cnext follows it.
  const dd::cron_plan plan{7'200'000, 10'800'000, 9'000'000'000'000, 9'000'003'600'000};
  const auto v = redis.exec(dd::nack_call(ks, "c", again.fires[0].token, 0, "boom", again.epoch, &plan));
  bool dead = false;
  std::int64_t at = 0;
  BOOST_TEST_REQUIRE(!dd::parse_nack(v, dead, at));
  BOOST_TEST(dead);
  BOOST_TEST(at == 7'200'000);
  BOOST_TEST(hget("cnext").str == "10800000");
  BOOST_TEST(hget("cbudget").str == "0");
}

// A fixed-rate schedule updated in place to a cron one while its fire runs:
// that fire's ack has no plan (it was claimed as fixed rate), so the
// schedule goes on at the cron expression's first instant after the update.
BOOST_AUTO_TEST_CASE(durable_cron_update_of_a_running_fixed_rate_schedule_continues_at_the_first_cron_instant) {
  namespace dd = chronopool::durable::detail;
  chronopool::durable::test::sync_redis redis(dt::test_redis_options());
  BOOST_TEST_REQUIRE(!redis.exec(dd::load_functions_call()).is_error());
  const dd::key_space ks(dt::unique_namespace());
  dd::put_request r;
  r.id = "r";
  r.task = "job";
  r.kind = dd::schedule_kind::fixed_rate;
  r.absolute = true;
  r.at_ms = 1000;
  r.period_ms = 86'400'000;
  BOOST_TEST_REQUIRE(!redis.exec(dd::put_call(ks, r)).is_error());
  dd::claim_result claimed;
  BOOST_TEST_REQUIRE(!dd::parse_claim(redis.exec(dd::claim_call(ks, "w", 30000, 16)), claimed));
  BOOST_TEST_REQUIRE(claimed.fires.size() == 1u);
  BOOST_TEST(claimed.fires[0].cron.empty());
  // What async_schedule_cron(update) sends: the first instant after Redis's
  // now (here a made-up one) and the one after it.
  r.kind = dd::schedule_kind::cron;
  r.period_ms = 0;
  r.cron = "0 * * * *";
  r.time_zone = "UTC";
  r.at_ms = claimed.server_now_ms + 3'600'000;
  r.cron_next_ms = r.at_ms + 3'600'000;
  r.options.update = true;
  std::int64_t kept = 0;
  BOOST_TEST_REQUIRE(!dd::parse_put(redis.exec(dd::put_call(ks, r)), kept));
  BOOST_TEST(kept == claimed.fires[0].due_ms);  // the pending occurrence stays (misfire placed it)
  bool acked = false;
  std::int64_t next = 0;
  BOOST_TEST_REQUIRE(!dd::parse_ack(redis.exec(dd::ack_call(ks, "r", claimed.fires[0].token, claimed.epoch)),
                                    acked, next));
  BOOST_TEST(acked);
  BOOST_TEST(next == r.at_ms);
}

}  // namespace cron_durable_test

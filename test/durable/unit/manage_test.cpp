// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43, item 4: managing schedules through the scheduler's API, on a
// real Redis: listing, inspecting (history bounded), pause (no claims) and
// resume (misfire applied), trigger now (never overlapping), backfill (the
// exact occurrences, bounded), delete of a paused schedule, unknown ids.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"

#include <chronopool/durable/detail/function_calls.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::asio::use_future;
using dt::fast_options;
using dt::wait_until;
using clock_type = std::chrono::system_clock;

namespace {

// What handlers saw, recorded on the pool's threads and read on the test's.
struct run_log {
  struct run {
    std::string fire_id;
    clock_type::time_point due;
    std::chrono::steady_clock::time_point started, finished;
  };
  mutable std::mutex m;
  std::vector<run> runs;

  void add(run r) {
    std::lock_guard lk(m);
    runs.push_back(std::move(r));
  }
  std::size_t size() const {
    std::lock_guard lk(m);
    return runs.size();
  }
  std::vector<run> copy() const {
    std::lock_guard lk(m);
    return runs;
  }
};

// A handler recording each run, sleeping `work` in it.
cd::scheduler::task_handler manage_recorder(run_log& log, std::chrono::milliseconds work = 0ms) {
  return [&log, work](const cd::fire_context& c) {
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(work);
    log.add({c.fire_id, c.due, start, std::chrono::steady_clock::now()});
  };
}

clock_type::time_point server_now(cd::scheduler& s) { return s.async_server_time(use_future).get(); }

std::int64_t ms_of(clock_type::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Whole milliseconds, as Redis keeps times.
clock_type::time_point whole_ms(clock_type::time_point t) {
  return clock_type::time_point(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_manage, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(list_pages_through_schedules_in_id_order_with_their_kind_and_state) {
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  const auto later = server_now(s) + 1h;
  s.async_schedule_at("a1", "job", "", later, use_future).get();
  s.async_schedule_at_fixed_rate("a2", "job", "", later, 5min, {}, use_future).get();
  s.async_schedule_with_fixed_delay("a3", "job", "", 1h, 7s, {}, use_future).get();
  s.async_schedule_at("b1", "job", "", later, use_future).get();
  BOOST_TEST(s.async_pause("a2", use_future).get());

  cd::schedule_query q;
  q.prefix = "a";
  q.limit = 2;
  const auto page1 = s.async_list_schedules(q, use_future).get();
  BOOST_TEST_REQUIRE(page1.schedules.size() == 2u);
  BOOST_TEST(page1.schedules[0].id == "a1");
  BOOST_TEST((page1.schedules[0].kind == cd::schedule_kind::one_shot));
  BOOST_TEST((page1.schedules[0].next_due == whole_ms(later)));
  BOOST_TEST((page1.schedules[0].state == cd::schedule_state::active));
  BOOST_TEST(page1.schedules[0].eligible.has_value());
  BOOST_TEST(page1.schedules[1].id == "a2");
  BOOST_TEST((page1.schedules[1].kind == cd::schedule_kind::fixed_rate));
  BOOST_TEST(page1.schedules[1].period.count() == 300000);
  BOOST_TEST((page1.schedules[1].state == cd::schedule_state::paused));
  BOOST_TEST(!page1.schedules[1].eligible.has_value());  // paused: not in the due set
  BOOST_TEST(page1.next_cursor == "a2");
  q.after = page1.next_cursor;
  const auto page2 = s.async_list_schedules(q, use_future).get();
  BOOST_TEST_REQUIRE(page2.schedules.size() == 1u);
  BOOST_TEST(page2.schedules[0].id == "a3");
  BOOST_TEST((page2.schedules[0].kind == cd::schedule_kind::fixed_delay));
  BOOST_TEST(page2.schedules[0].period.count() == 7000);
  BOOST_TEST(page2.next_cursor.empty());
  // All of them, b1 included; a cancelled one is gone from the list.
  s.async_cancel("a1", use_future).get();
  const auto all = s.async_list_schedules({}, use_future).get();
  std::vector<std::string> ids;
  for (const auto& e : all.schedules) ids.push_back(e.id);
  BOOST_TEST((ids == std::vector<std::string>{"a2", "a3", "b1"}));
  BOOST_CHECK_THROW(s.async_list_schedules(cd::schedule_query{"", "", 0}, use_future), std::invalid_argument);
  BOOST_CHECK_THROW(s.async_list_schedules(cd::schedule_query{"", "", 1001}, use_future), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(schedules_created_by_the_previous_library_are_listed_too) {
  // chronopool_v3 kept no ids index: a schedule it created is in the due set
  // only. The first list adds it to the index.
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.async_schedule("new", "job", "", 1h, use_future).get();
  dt::sync_redis redis(dt::test_redis_options());
  const cd::detail::key_space ks(ns);
  redis.exec({"HSET", ks.prefix() + "s:old", "task", "job", "payload", "", "kind", "once", "period", "0", "due",
              "4000000000000", "misfire", "once", "catch_up", "1", "fires", "0", "last_token", "0"});
  redis.exec({"ZADD", ks.due_key(), "4000000000000", "old"});
  const auto all = s.async_list_schedules({}, use_future).get();
  BOOST_TEST_REQUIRE(all.schedules.size() == 2u);
  BOOST_TEST(all.schedules[0].id == "new");
  BOOST_TEST(all.schedules[1].id == "old");
}

BOOST_AUTO_TEST_CASE(a_paused_schedule_is_not_claimed_and_resume_fires_once_now_for_what_it_missed) {
  run_log log;
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", manage_recorder(log));
  const auto first = server_now(s) + 100ms;
  s.async_schedule_at_fixed_rate("tick", "job", "", first, 1s, {}, use_future).get();
  BOOST_TEST(s.async_pause("tick", use_future).get());
  BOOST_TEST(!s.async_pause("tick", use_future).get());  // paused already
  s.start();
  // Occurrences first, first + 1 s, first + 2 s pass while it is paused.
  BOOST_TEST(!wait_until([&] { return log.size() > 0; }, 2500ms), "a paused schedule ran");
  BOOST_TEST((s.async_inspect("tick", use_future).get().summary.state == cd::schedule_state::paused));
  const auto resumed_at = server_now(s);
  BOOST_TEST(s.async_resume("tick", use_future).get());
  BOOST_TEST(!s.async_resume("tick", use_future).get());  // not paused any more
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() >= 1; }));
  // fire_once_now: the latest missed occurrence, at once, not the first one.
  const auto runs = log.copy();
  const auto first_ms = ms_of(first);
  const auto latest_missed = first_ms + (ms_of(resumed_at) - first_ms) / 1000 * 1000;
  BOOST_TEST(ms_of(runs[0].due) == latest_missed);
  BOOST_TEST(ms_of(runs[0].due) >= first_ms + 2000);
  s.async_cancel("tick", use_future).get();
}

BOOST_AUTO_TEST_CASE(resume_skips_what_it_missed_when_the_misfire_policy_says_skip) {
  run_log log;
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", manage_recorder(log));
  const auto first = server_now(s) + 100ms;
  cd::schedule_options skip;
  skip.misfire = cd::misfire_policy::skip;
  s.async_schedule_at_fixed_rate("tick", "job", "", first, 1s, skip, use_future).get();
  s.async_pause("tick", use_future).get();
  s.start();
  std::this_thread::sleep_for(2300ms);
  const auto resumed_at = server_now(s);
  s.async_resume("tick", use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() >= 1; }, 5s));
  const auto runs = log.copy();
  // The next occurrence on the grid after the resume, on time; none missed.
  const auto first_ms = ms_of(first);
  const auto next = first_ms + ((ms_of(resumed_at) - first_ms) / 1000 + 1) * 1000;
  BOOST_TEST(ms_of(runs[0].due) == next);
  s.async_cancel("tick", use_future).get();
}

BOOST_AUTO_TEST_CASE(pausing_a_running_fire_lets_it_finish_and_nothing_more_runs) {
  run_log log;
  std::atomic<bool> started{false};
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", [&](const cd::fire_context& c) {
    started = true;
    std::this_thread::sleep_for(400ms);
    log.add({c.fire_id, c.due, {}, {}});
  });
  s.start();
  s.async_schedule_at_fixed_rate("r", "job", "", 0ms, 200ms, {}, use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return started.load(); }));
  BOOST_TEST(s.async_pause("r", use_future).get());
  const auto d = s.async_inspect("r", use_future).get();
  BOOST_TEST((d.summary.state == cd::schedule_state::paused));
  BOOST_TEST(d.lease_expires.has_value());  // still running
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1u; }));
  BOOST_TEST(!wait_until([&] { return log.size() > 1u; }, 800ms), "a paused schedule ran again");
  const auto after = s.async_inspect("r", use_future).get();
  BOOST_TEST(after.runs == 1u);  // the running fire was acknowledged
  BOOST_TEST(!after.summary.eligible.has_value());
}

BOOST_AUTO_TEST_CASE(trigger_now_runs_once_after_a_running_fire_without_moving_the_schedule) {
  run_log log;
  std::atomic<bool> running{false};
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", [&](const cd::fire_context& c) {
    running = true;
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(300ms);
    log.add({c.fire_id, c.due, start, std::chrono::steady_clock::now()});
  });
  s.start();
  const auto first = s.async_schedule_at_fixed_rate("hourly", "job", "", 0ms, 1h, {}, use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return running.load(); }));
  const auto t = s.async_trigger_now("hourly", use_future).get();
  BOOST_TEST(t.queued_behind_running);
  BOOST_TEST(t.fire_id == "hourly@" + std::to_string(ms_of(t.due)));
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 2u; }));
  const auto runs = log.copy();
  BOOST_TEST(runs[1].fire_id == t.fire_id);
  BOOST_TEST((runs[1].started >= runs[0].finished), "the triggered run overlapped the running one");
  BOOST_TEST(!wait_until([&] { return log.size() > 2u; }, 300ms));
  const auto d = s.async_inspect("hourly", use_future).get();
  BOOST_TEST((d.summary.next_due == first + 1h));  // the periodic position is where it was
  BOOST_TEST(d.summary.extra_fires == 0u);
  BOOST_TEST(d.runs == 2u);
  // Not running now: the extra fire is not queued behind anything.
  const auto t2 = s.async_trigger_now("hourly", use_future).get();
  BOOST_TEST(!t2.queued_behind_running);
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 3u; }));
  BOOST_TEST(log.copy()[2].fire_id == t2.fire_id);
}

BOOST_AUTO_TEST_CASE(backfill_runs_exactly_the_occurrences_of_the_range_before_the_pending_one) {
  run_log log;
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", manage_recorder(log));
  // Pending 30 s from now: the occurrences a minute apart before it are past.
  const auto pending = whole_ms(server_now(s) + 30s);
  s.async_schedule_at_fixed_rate("m", "job", "", pending, 1min, {}, use_future).get();
  // [pending - 5 min + 1 ms, pending - 2 min]: occurrences -4, -3, -2 min
  // (from rounds onto the grid upwards; to is excluded).
  const auto r = s.async_backfill("m", pending - 5min + 1ms, pending - 2min + 1ms, use_future).get();
  BOOST_TEST(r.occurrences == 3u);
  BOOST_TEST(r.added == 3u);
  // The same range again adds nothing; a range reaching past the pending
  // occurrence stops before it.
  BOOST_TEST(s.async_backfill("m", pending - 5min, pending - 2min + 1ms, use_future).get().added == 1u);  // -5 min
  const auto past = s.async_backfill("m", pending - 1min, pending + 10min, use_future).get();
  BOOST_TEST(past.occurrences == 1u);  // -1 min only
  BOOST_TEST(s.async_inspect("m", use_future).get().summary.extra_fires == 5u);
  s.start();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 5u; }));
  BOOST_TEST(!wait_until([&] { return log.size() > 5u; }, 300ms));
  std::vector<std::string> got, want;
  for (const auto& run : log.copy()) got.push_back(run.fire_id);
  for (int k = 5; k >= 1; --k) want.push_back("m@" + std::to_string(ms_of(pending - k * 1min)));
  BOOST_TEST(got == want, "oldest first, each once");
  const auto d = s.async_inspect("m", use_future).get();
  BOOST_TEST((d.summary.next_due == pending));
  BOOST_TEST(d.summary.extra_fires == 0u);
  BOOST_TEST(d.runs == 5u);
  s.async_cancel("m", use_future).get();
}

BOOST_AUTO_TEST_CASE(backfill_refuses_bad_ranges_one_shots_and_too_many_occurrences) {
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  const auto now = server_now(s);
  s.async_schedule_at_fixed_rate("sec", "job", "", now + 1h, 1s, {}, use_future).get();
  s.async_schedule("once", "job", "", 1h, use_future).get();
  try {
    s.async_backfill("sec", now, now, use_future);
    BOOST_FAIL("an empty range was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("from (" + std::to_string(ms_of(now))) != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(s.async_backfill("sec", now, now - 1s, use_future), std::invalid_argument);
  // 1001 occurrences of a 1 s schedule: refused whole, with the count.
  const auto ec = dt::error_of([&](auto h) { s.async_backfill("sec", now + 1h - 1001s, now + 1h, std::move(h)); });
  BOOST_TEST((ec == cd::error::too_many_fires));
  BOOST_TEST(ec.message().find("1001 occurrences") != std::string::npos, ec.message());
  BOOST_TEST(s.async_inspect("sec", use_future).get().summary.extra_fires == 0u);
  BOOST_TEST(s.async_backfill("sec", now + 1h - 1000s, now + 1h, use_future).get().occurrences == 1000u);
  BOOST_TEST((dt::error_of([&](auto h) { s.async_backfill("once", now - 1h, now, std::move(h)); }) ==
              cd::error::not_periodic));
  BOOST_TEST((dt::error_of([&](auto h) { s.async_trigger_now("once", std::move(h)); }) == cd::error::not_periodic));
}

BOOST_AUTO_TEST_CASE(history_keeps_the_last_runs_with_outcome_and_error_bounded_per_schedule) {
  auto o = fast_options(ns, dt::test_redis_options());
  o.failure.initial_backoff = 1ms;
  o.failure.max_backoff = 1ms;
  std::atomic<int> calls{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const cd::fire_context&) {
    if (++calls % 2 == 0) throw std::runtime_error("even call " + std::to_string(calls.load()));
  });
  cd::schedule_options keep3;
  keep3.history_length = 3;
  s.start();
  s.async_schedule_at_fixed_rate("h", "job", "", 0ms, 50ms, keep3, use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return calls.load() >= 8; }));
  s.async_pause("h", use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] {
    return s.async_inspect("h", use_future).get().summary.state == cd::schedule_state::paused &&
           !s.async_inspect("h", use_future).get().lease_expires;
  }));
  const auto d = s.async_inspect("h", use_future).get();
  BOOST_TEST(d.history_length == 3u);
  BOOST_TEST_REQUIRE(d.history.size() == 3u);  // bounded, although more ran
  BOOST_TEST(d.runs + d.failures == static_cast<std::uint64_t>(calls.load()));
  BOOST_TEST(d.failures >= 4u);
  bool saw_ok = false, saw_failed = false;
  for (std::size_t i = 0; i < d.history.size(); ++i) {
    const auto& r = d.history[i];
    BOOST_TEST(r.fire_id == "h@" + std::to_string(ms_of(r.due)));
    BOOST_TEST_REQUIRE(r.started.has_value());
    BOOST_TEST(r.token > 0u);
    BOOST_TEST(ms_of(*r.started) == static_cast<std::int64_t>(r.token / 1000));  // read from the token
    BOOST_TEST((*r.started <= r.finished));
    if (i > 0) BOOST_TEST((r.finished <= d.history[i - 1].finished), "newest first");
    if (r.outcome == cd::run_outcome::succeeded) {
      saw_ok = true;
      BOOST_TEST(r.error.empty());
    } else {
      saw_failed = true;
      BOOST_TEST((r.outcome == cd::run_outcome::failed));
      BOOST_TEST(r.error.rfind("even call ", 0) == 0u, r.error);
    }
  }
  BOOST_TEST((saw_ok && saw_failed));
  {
    // Redis keeps at most twice the history length (cut back in batches).
    dt::sync_redis redis(o.redis);
    const auto ks = dt::keys_of(o, "h");
    const auto len = redis.exec({"LLEN", ks.prefix() + "h:h"}).integer;
    BOOST_TEST(len >= 3);
    BOOST_TEST(len <= 6);
  }
  BOOST_TEST(d.last_error.rfind("even call ", 0) == 0u);
  // Without history: nothing recorded.
  cd::schedule_options none;
  none.history_length = 0;
  s.async_schedule_at_fixed_rate("quiet", "job", "", 0ms, 1h, none, use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return s.async_inspect("quiet", use_future).get().runs +
                                                 s.async_inspect("quiet", use_future).get().failures >= 1u; }));
  BOOST_TEST(s.async_inspect("quiet", use_future).get().history.empty());
  cd::schedule_options too_many;
  too_many.history_length = 1001;
  BOOST_CHECK_THROW(s.async_schedule_at_fixed_rate("x", "job", "", 0ms, 1h, too_many, use_future),
                    std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(delete_covers_a_paused_schedule_with_its_history_and_extra_fires) {
  run_log log;
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  s.register_handler("job", manage_recorder(log));
  s.start();
  s.async_schedule_at_fixed_rate("p", "job", "", 0ms, 1h, {}, use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1u; }));
  s.async_pause("p", use_future).get();
  s.async_trigger_now("p", use_future).get();  // waits for the resume
  BOOST_TEST(!wait_until([&] { return log.size() > 1u; }, 300ms));
  BOOST_TEST(s.async_cancel("p", use_future).get());
  BOOST_TEST((dt::error_of([&](auto h) { s.async_inspect("p", std::move(h)); }) == cd::error::no_such_schedule));
  const auto o = fast_options(ns, dt::test_redis_options());
  dt::sync_redis redis(o.redis);
  const auto ks = dt::keys_of(o, "p");  // one partition holds all three keys
  BOOST_TEST(redis.exec({"EXISTS", ks.prefix() + "h:p", ks.prefix() + "x:p", ks.prefix() + "s:p"}).integer == 0);
  BOOST_TEST(s.async_list_schedules({}, use_future).get().schedules.empty());
}

BOOST_AUTO_TEST_CASE(unknown_ids_fail_with_no_such_schedule) {
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  const auto now = clock_type::now();
  const auto no_such = [](boost::system::error_code ec) { return ec == cd::error::no_such_schedule; };
  BOOST_TEST(no_such(dt::error_of([&](auto h) { s.async_inspect("nope", std::move(h)); })));
  BOOST_TEST(no_such(dt::error_of([&](auto h) { s.async_pause("nope", std::move(h)); })));
  BOOST_TEST(no_such(dt::error_of([&](auto h) { s.async_resume("nope", std::move(h)); })));
  BOOST_TEST(no_such(dt::error_of([&](auto h) { s.async_trigger_now("nope", std::move(h)); })));
  BOOST_TEST(no_such(dt::error_of([&](auto h) { s.async_backfill("nope", now - 1h, now, std::move(h)); })));
  BOOST_TEST(!s.async_cancel("nope", use_future).get());  // deleting nothing is not an error
  BOOST_CHECK_THROW(s.async_inspect("", use_future), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

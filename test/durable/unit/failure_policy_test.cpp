// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43, item 1: the failure policy. A fire that keeps failing is retried
// with a growing backoff, then dead-lettered, and a periodic schedule moves
// on to its next occurrence; a task nobody has a handler for ends as a dead
// letter too; a handler past its timeout is asked to stop and its fire is
// retried; bad policies are refused up front.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::dead_letters;
using dt::fast_options;
using dt::wait_until;
using steady = std::chrono::steady_clock;

namespace {

cd::failure_policy quick_policy(std::uint32_t attempts, std::chrono::milliseconds initial, double multiplier = 2.0) {
  cd::failure_policy f;
  f.max_attempts = attempts;
  f.initial_backoff = initial;
  f.multiplier = multiplier;
  f.max_backoff = 10s;
  return f;
}

// Every run a handler sees: fire id, attempt, and when it started.
struct run_log {
  struct run {
    std::string fire_id;
    std::uint32_t attempt;
    steady::time_point at;
    std::chrono::system_clock::time_point wall;
    std::chrono::system_clock::time_point due;
  };
  std::mutex m;
  std::vector<run> runs;
  void add(const cd::fire_context& c) {
    std::lock_guard lk(m);
    runs.push_back({c.fire_id, c.attempt, steady::now(), std::chrono::system_clock::now(), c.due});
  }
  std::vector<run> copy() {
    std::lock_guard lk(m);
    return runs;
  }
  std::size_t distinct_fires() {
    std::lock_guard lk(m);
    std::map<std::string, int> n;
    for (auto& r : runs) ++n[r.fire_id];
    return n.size();
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_failure_policy, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(a_poison_fire_is_dead_lettered_and_later_occurrences_still_fire_on_time) {
  // Before: one fire of a 200 ms schedule was retried for ever and no later
  // occurrence ever fired.
  auto o = fast_options(ns, dt::test_redis_options());
  o.failure = quick_policy(3, 20ms);
  run_log log;
  cd::scheduler s(pool.get_executor(), o);
  std::string poison;  // the first fire id seen: it always fails
  std::mutex pm;
  s.register_handler("job", [&](const cd::fire_context& c) {
    log.add(c);
    std::lock_guard lk(pm);
    if (poison.empty()) poison = c.fire_id;
    if (c.fire_id == poison) throw std::runtime_error("poison pill " + c.fire_id);
  });
  s.start();
  s.async_schedule_at_fixed_rate("p", "job", "", 0ms, 200ms, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.distinct_fires() >= 4; }, 5s));
  const auto runs = log.copy();
  int poison_runs = 0;
  for (auto& r : runs) poison_runs += r.fire_id == poison ? 1 : 0;
  BOOST_TEST(poison_runs == 3);  // max_attempts, no more
  // The occurrences after it ran once each, on time: 20 + 40 ms of backoff
  // (at most) fit well inside the 200 ms period.
  for (auto& r : runs) {
    if (r.fire_id == poison) continue;
    BOOST_TEST(r.attempt == 1u);
    BOOST_TEST((r.wall >= r.due));
    BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(r.wall - r.due).count() < 150);
  }
  const auto dead = dead_letters(s);
  BOOST_TEST_REQUIRE(dead.size() == 1u);
  BOOST_TEST(dead[0].fire_id == poison);
  BOOST_TEST(dead[0].schedule_id == "p");
  BOOST_TEST(dead[0].task == "job");
  BOOST_TEST(dead[0].attempts == 3u);
  BOOST_TEST(dead[0].last_error.find("poison pill " + poison) != std::string::npos);
  BOOST_TEST((dead[0].dead_lettered_at >= dead[0].due));
  BOOST_TEST(s.stats().dead_lettered == 1u);
  s.async_cancel("p", boost::asio::use_future).get();
}

BOOST_AUTO_TEST_CASE(the_backoff_between_attempts_grows_by_the_multiplier) {
  // Before: every retry came after the same retry_delay.
  auto o = fast_options(ns, dt::test_redis_options());
  run_log log;
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("fail", [&](const cd::fire_context& c) {
    log.add(c);
    throw std::runtime_error("always");
  });
  s.start();
  cd::schedule_options so;
  so.failure = quick_policy(4, 100ms, 3.0);  // waits in [50, 100], [150, 300], [450, 900] ms
  s.async_schedule_at_fixed_rate("b", "fail", "", 0ms, 1h, so, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return dead_letters(s).size() == 1u; }, 8s));
  const auto runs = log.copy();
  BOOST_TEST_REQUIRE(runs.size() == 4u);
  std::vector<long> gaps;
  for (std::size_t i = 1; i < runs.size(); ++i)
    gaps.push_back(static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(runs[i].at - runs[i - 1].at).count()));
  BOOST_TEST_MESSAGE("gaps between attempts (ms): " << gaps[0] << ", " << gaps[1] << ", " << gaps[2]);
  BOOST_TEST(gaps[0] >= 50);
  BOOST_TEST(gaps[1] >= 150);
  BOOST_TEST(gaps[2] >= 450);
  BOOST_TEST(gaps[1] > gaps[0]);
  BOOST_TEST(gaps[2] > gaps[1]);
  for (std::size_t i = 0; i < runs.size(); ++i) BOOST_TEST(runs[i].attempt == i + 1);
  s.async_cancel("b", boost::asio::use_future).get();
}

BOOST_AUTO_TEST_CASE(a_task_nobody_handles_becomes_a_dead_letter_after_the_attempts) {
  // Before: it was claimed and given back for ever.
  auto o = fast_options(ns, dt::test_redis_options());
  o.failure = quick_policy(3, 20ms);
  cd::scheduler s(pool.get_executor(), o);
  s.start();
  s.async_schedule("orphan", "nobody", "data", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return dead_letters(s).size() == 1u; }, 5s));
  const auto d = dead_letters(s)[0];
  BOOST_TEST(d.schedule_id == "orphan");
  BOOST_TEST(d.attempts == 3u);
  BOOST_TEST(d.last_error.find("no handler for task 'nobody'") != std::string::npos);
  std::this_thread::sleep_for(200ms);
  BOOST_TEST(s.stats().no_handler == 3u);  // no claims after the dead letter
}

BOOST_AUTO_TEST_CASE(a_handler_past_its_timeout_is_asked_to_stop_and_its_fire_is_retried) {
  // Before: a hung handler's lease was extended for as long as it hung.
  auto o = fast_options(ns, dt::test_redis_options());
  o.failure = quick_policy(3, 20ms);
  std::atomic<bool> saw_stop{false};
  run_log log;
  cd::scheduler s(pool.get_executor(), o);
  cd::handler_options ho;
  ho.timeout = 200ms;
  s.register_handler(
      "hang",
      [&](const cd::fire_context& c) {
        log.add(c);
        if (c.attempt == 1) {
          // Hangs until asked to stop (at most 5 s).
          if (wait_until([&] { return c.stop.stop_requested(); }, 5s)) saw_stop = true;
        }
      },
      ho);
  s.start();
  s.async_schedule("h", "hang", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.copy().size() >= 2; }, 4s));
  BOOST_TEST(saw_stop.load());
  const auto runs = log.copy();
  BOOST_TEST(runs[1].attempt == 2u);
  BOOST_TEST(runs[1].fire_id == runs[0].fire_id);
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(runs[1].at - runs[0].at).count() >= 200);
  BOOST_TEST(s.stats().timed_out == 1u);
  // Attempt 2 returned in time: acknowledged, nothing dead-lettered.
  BOOST_TEST_REQUIRE(wait_until([&] { return s.stats().acked == 1u; }));
  BOOST_TEST(dead_letters(s).empty());
}

BOOST_AUTO_TEST_CASE(bad_failure_policies_and_timeouts_are_refused_naming_the_parameter_and_value) {
  struct bad_case {
    const char* what;
    cd::failure_policy policy;
    const char* needle;
  };
  const auto with = [](auto change) {
    cd::failure_policy f;
    change(f);
    return f;
  };
  const bad_case cases[] = {
      {"max_attempts 0", with([](auto& f) { f.max_attempts = 0; }), "max_attempts must be at least 1, got 0"},
      {"negative initial_backoff", with([](auto& f) { f.initial_backoff = -5ms; }),
       "initial_backoff must not be negative, got -5 ms"},
      {"negative max_backoff", with([](auto& f) { f.max_backoff = -1ms; }),
       "max_backoff must not be negative, got -1 ms"},
      {"multiplier below 1", with([](auto& f) { f.multiplier = 0.5; }), "multiplier must be finite and at least 1, got 0.5"},
      {"multiplier NaN", with([](auto& f) { f.multiplier = std::numeric_limits<double>::quiet_NaN(); }),
       "multiplier must be finite and at least 1, got nan"},
      {"multiplier infinite", with([](auto& f) { f.multiplier = std::numeric_limits<double>::infinity(); }),
       "multiplier must be finite and at least 1, got inf"},
  };
  const auto check = [](const char* what, const std::string& prefix, const char* needle, auto call) {
    BOOST_TEST_MESSAGE("bad input: " << prefix << " " << what);
    try {
      call();
      BOOST_ERROR(what << ": no exception");
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      BOOST_TEST(m.find(*needle ? prefix + "." + needle : prefix) != std::string::npos, what << ": " << m);
    }
  };
  for (const auto& c : cases) {
    auto o = fast_options(ns, dt::test_redis_options());
    o.failure = c.policy;
    check(c.what, "scheduler_options.failure", c.needle, [&] { cd::scheduler s(pool.get_executor(), o); });
  }
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  for (const auto& c : cases) {
    cd::schedule_options so;
    so.failure = c.policy;
    check(c.what, "schedule_options.failure", c.needle, [&] {
      s.async_schedule_at_fixed_rate("x", "job", "", 0ms, 1s, so, boost::asio::use_future).get();
    });
  }
  cd::handler_options ho;
  ho.timeout = -3ms;
  check("negative timeout", "handler_options", "timeout must not be negative, got -3 ms",
        [&] { s.register_handler("job", [](const cd::fire_context&) {}, ho); });
  check("zero limit", "chronopool::durable::scheduler::async_list_dead_letters: limit", "", [&] {
    s.async_list_dead_letters(0, boost::asio::use_future);
  });
}

BOOST_AUTO_TEST_SUITE_END()

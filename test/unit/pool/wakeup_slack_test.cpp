// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_thread_pool_options::wakeup_slack: tasks and the pool's own
// timers due within the slack of each other share one wake-up, none starts
// early, and a manual clock still runs each at its own deadline.
#include "pool_test_support.hpp"

#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include <boost/test/unit_test.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>

using namespace std::chrono_literals;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::steady;

namespace {

scheduled_thread_pool_options with_slack(std::chrono::nanoseconds slack) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.wakeup_slack = slack;
  return o;
}

/// When each of two runs started, read once both have.
struct two_starts {
  std::array<std::atomic<steady::rep>, 2> at{};
  std::atomic<int> done{0};
  void mark(std::size_t i) {
    at[i].store(steady::now().time_since_epoch().count());
    done.fetch_add(1);
  }
  steady::time_point operator[](std::size_t i) const { return steady::time_point(steady::duration(at[i].load())); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(wakeup_slack)

BOOST_AUTO_TEST_CASE(the_default_is_linuxs_timer_slack) {
  BOOST_TEST((scheduled_thread_pool_options{}.wakeup_slack == 50us));
}

BOOST_AUTO_TEST_CASE(tasks_within_the_slack_share_the_wake_up_of_the_last_none_early) {
  scheduled_thread_pool pool(with_slack(1ms));
  two_starts s;
  const auto first = steady::now() + 20ms;
  const auto last = first + 900us;
  pool.execute_at(first, [&] { s.mark(0); });
  pool.execute_at(last, [&] { s.mark(1); });
  BOOST_TEST_REQUIRE(pool_test::eventually([&] { return s.done.load() == 2; }));
  BOOST_TEST((s[0] >= last));
  BOOST_TEST((s[1] >= last));
}

BOOST_AUTO_TEST_CASE(the_pools_timers_within_the_slack_share_the_wake_up_of_the_last) {
  scheduled_thread_pool pool(with_slack(1ms));
  two_starts s;
  const auto first = steady::now() + 20ms;
  const auto last = first + 900us;
  // The slack applies when the shard's wake-up is armed: the opener's
  // expiry re-arms it with both queued.
  chronopool::steady_timer opener(pool.get_executor(), first - 10ms);
  opener.async_wait([](auto) {});
  chronopool::steady_timer a(pool.get_executor(), first);
  chronopool::steady_timer b(pool.get_executor(), last);
  a.async_wait([&](auto) { s.mark(0); });
  b.async_wait([&](auto) { s.mark(1); });
  BOOST_TEST_REQUIRE(pool_test::eventually([&] { return s.done.load() == 2; }));
  BOOST_TEST((s[0] >= last));
  BOOST_TEST((s[1] >= last));
}

BOOST_AUTO_TEST_CASE(a_manual_clock_runs_each_task_and_timer_at_its_own_deadline) {
  scheduled_thread_pool_options o = with_slack(1ms);
  o.use_manual_clock = true;
  scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  std::atomic<int> tasks{0};
  std::atomic<int> timers{0};
  pool.execute_after(10ms, [&] { ++tasks; });
  pool.execute_after(10ms + 500us, [&] { ++tasks; });
  chronopool::steady_timer a(pool.get_executor(), 10ms);
  chronopool::steady_timer b(pool.get_executor(), 10ms + 500us);
  a.async_wait([&](auto) { ++timers; });
  b.async_wait([&](auto) { ++timers; });
  clock.advance(10ms);
  BOOST_TEST_REQUIRE(pool_test::eventually([&] { return tasks.load() == 1 && timers.load() == 1; }));
  BOOST_TEST(tasks.load() == 1);
  BOOST_TEST(timers.load() == 1);
  clock.advance(500us);
  BOOST_TEST_REQUIRE(pool_test::eventually([&] { return tasks.load() == 2 && timers.load() == 2; }));
}

BOOST_AUTO_TEST_SUITE_END()

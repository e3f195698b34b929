// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Run-time policy setters and thread identity: the Java setters
// (setContinueExistingPeriodicTasksAfterShutdownPolicy & co.) and
// running_in_this_thread().
#include "pool_test_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <vector>

using namespace std::chrono_literals;
using pool_test::eventually;

BOOST_AUTO_TEST_SUITE(policy_setters)

BOOST_AUTO_TEST_CASE(getters_reflect_options_and_setters) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.rejection = chronopool::rejection_policy::discard;
  o.continue_existing_periodic_tasks_after_shutdown = true;
  o.execute_existing_delayed_tasks_after_shutdown = false;
  o.remove_on_cancel = false;
  o.allow_core_thread_timeout = true;
  chronopool::scheduled_thread_pool pool(o);
  BOOST_TEST(pool.core_pool_size() == 3u);
  BOOST_TEST((pool.get_rejection_policy() == chronopool::rejection_policy::discard));
  BOOST_TEST(pool.continue_existing_periodic_tasks_after_shutdown());
  BOOST_TEST(!pool.execute_existing_delayed_tasks_after_shutdown());
  BOOST_TEST(!pool.remove_on_cancel());
  BOOST_TEST(pool.allows_core_thread_timeout());

  pool.set_rejection_policy(chronopool::rejection_policy::caller_runs);
  pool.set_continue_existing_periodic_tasks_after_shutdown(false);
  pool.set_execute_existing_delayed_tasks_after_shutdown(true);
  pool.set_remove_on_cancel(true);
  pool.allow_core_thread_timeout(false);
  BOOST_TEST((pool.get_rejection_policy() == chronopool::rejection_policy::caller_runs));
  BOOST_TEST(!pool.continue_existing_periodic_tasks_after_shutdown());
  BOOST_TEST(pool.execute_existing_delayed_tasks_after_shutdown());
  BOOST_TEST(pool.remove_on_cancel());
  BOOST_TEST(!pool.allows_core_thread_timeout());
}

BOOST_AUTO_TEST_CASE(turning_off_periodic_policy_after_shutdown_cancels_queued_periodic_tasks) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.continue_existing_periodic_tasks_after_shutdown = true;
  chronopool::scheduled_thread_pool pool(o);
  auto tick = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  pool.shutdown();
  BOOST_TEST(!tick.done());  // kept by the policy
  BOOST_TEST(!pool.wait_for_termination(50ms));
  pool.set_continue_existing_periodic_tasks_after_shutdown(false);  // Java re-applies the policy
  BOOST_TEST(tick.cancelled());
  BOOST_TEST(pool.wait_for_termination(pool_test::long_wait));
}

BOOST_AUTO_TEST_CASE(turning_off_delayed_policy_after_shutdown_cancels_queued_delayed_tasks) {
  chronopool::scheduled_thread_pool pool(1);
  auto later = pool.schedule(1h, [] { return 1; });
  pool.shutdown();
  BOOST_TEST(!later.done());  // delayed tasks still run after shutdown by default
  pool.set_execute_existing_delayed_tasks_after_shutdown(false);
  BOOST_TEST(later.cancelled());
  BOOST_TEST(pool.wait_for_termination(pool_test::long_wait));
}

BOOST_AUTO_TEST_CASE(remove_on_cancel_can_be_switched_at_run_time) {
  chronopool::scheduled_thread_pool pool(1);
  pool.set_remove_on_cancel(false);
  auto a = pool.schedule(1h, [] {});
  BOOST_TEST(a.cancel());
  BOOST_TEST(pool.queued_count() == 1u);  // Java's behaviour: stays queued until purge()
  pool.set_remove_on_cancel(true);
  auto b = pool.schedule(1h, [] {});
  BOOST_TEST(pool.queued_count() == 2u);
  BOOST_TEST(b.cancel());
  BOOST_TEST(pool.queued_count() == 1u);  // removed at once
  BOOST_TEST(pool.purge() == 1u);
  BOOST_TEST(pool.queued_count() == 0u);
}

BOOST_AUTO_TEST_CASE(rejection_policy_switch_applies_to_later_submissions) {
  chronopool::scheduled_thread_pool pool(1);
  pool.shutdown();
  BOOST_CHECK_THROW(pool.submit([] {}), chronopool::rejected_execution);
  pool.set_rejection_policy(chronopool::rejection_policy::discard);
  auto f = pool.submit([] { return 1; });
  BOOST_TEST(f.cancelled());
}

BOOST_AUTO_TEST_CASE(running_in_this_thread_is_true_only_on_own_threads) {
  chronopool::scheduled_thread_pool a(1);
  chronopool::scheduled_thread_pool b(1);
  BOOST_TEST(!a.running_in_this_thread());
  auto on_a = a.submit([&] { return std::make_pair(a.running_in_this_thread(), b.running_in_this_thread()); });
  BOOST_REQUIRE(on_a.wait_for(pool_test::long_wait) == std::future_status::ready);
  BOOST_TEST(on_a.get().first);
  BOOST_TEST(!on_a.get().second);
}

BOOST_AUTO_TEST_CASE(remove_ignores_handles_of_another_pool) {
  chronopool::scheduled_thread_pool a(1);
  chronopool::scheduled_thread_pool b(1);
  auto f = a.schedule(1h, [] {});
  BOOST_TEST(!b.remove(f));
  BOOST_TEST(!f.done());
  BOOST_TEST(a.remove(f));
  BOOST_TEST(f.cancelled());
  BOOST_TEST(!a.remove(chronopool::scheduled_future<void>{}));
}

BOOST_AUTO_TEST_CASE(constructor_rejects_bad_options) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = chronopool::scheduled_thread_pool::max_core_pool_size + 1;
  BOOST_CHECK_THROW(chronopool::scheduled_thread_pool{o}, std::invalid_argument);
  o.core_pool_size = 1;
  o.keep_alive = 0ms;
  BOOST_CHECK_THROW(chronopool::scheduled_thread_pool{o}, std::invalid_argument);
  o.keep_alive = 10ms;
  o.precision_spin_limit = -1ns;
  BOOST_CHECK_THROW(chronopool::scheduled_thread_pool{o}, std::invalid_argument);
}

// Precision mode changes how the leader waits, not what runs when: delays
// are still never cut short, and every task runs once.
BOOST_AUTO_TEST_CASE(precision_mode_runs_every_task_once_and_never_early) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.precision_spin_limit = 500us;
  chronopool::scheduled_thread_pool pool(o);
  constexpr int n = 200;
  std::vector<std::atomic<int>> runs(n);
  std::atomic<int> early{0};
  std::vector<chronopool::scheduled_future<void>> fs;
  for (int i = 0; i < n; ++i) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(100 * (i % 50));
    fs.push_back(pool.schedule_at(deadline, [&runs, &early, i, deadline] {
      if (std::chrono::steady_clock::now() < deadline) early.fetch_add(1);
      runs[static_cast<std::size_t>(i)].fetch_add(1);
    }));
  }
  for (auto& f : fs) f.get();
  pool.shutdown();
  BOOST_TEST(pool.wait_for_termination(10s));
  int wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1 ? 1 : 0;
  BOOST_TEST(wrong == 0);
  BOOST_TEST(early.load() == 0);
}

// Any limit is valid: the longest one spins for every deadline (UBSan checks
// that no time arithmetic overflows on the way), the shortest one spins 1 ns.
BOOST_AUTO_TEST_CASE(precision_mode_accepts_extreme_limits) {
  for (const auto limit : {std::chrono::nanoseconds::max(), std::chrono::nanoseconds(1)}) {
    chronopool::scheduled_thread_pool_options o;
    o.precision_spin_limit = limit;
    chronopool::scheduled_thread_pool pool(o);
    const auto deadline = std::chrono::steady_clock::now() + 5ms;
    auto f = pool.schedule_at(deadline, [] { return std::chrono::steady_clock::now(); });
    BOOST_TEST((f.get() >= deadline));
  }
}

BOOST_AUTO_TEST_SUITE_END()

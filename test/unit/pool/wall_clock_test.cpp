// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// schedule_at / execute_at with a system_clock time point follow steps of
// the wall clock (detail/pool/wall_clock_tasks.hpp).
//
// The steps are injected (detail::inject_clock_step moves the library's
// system_now() for this whole process and notifies at once); Boost.Test
// runs these cases one after the other, and each steps back before it ends
// (test_support::injected_step), so the other cases of this executable see the real clock.
#include "pool_test_support.hpp"

#include "../../support/injected_step.hpp"
#include "../../support/machine_clock.hpp"

#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using chronopool::scheduled_thread_pool;
using namespace pool_test;
namespace cpd = chronopool::detail;
using sys = std::chrono::system_clock;

namespace {

/// A callable that records whether the library's clock had reached @p
/// instant when it ran, and counts its runs.
struct checked_run {
  sys::time_point instant;
  std::shared_ptr<std::atomic<int>> runs;
  std::shared_ptr<std::atomic<int>> early;
  void operator()() const {
    if (cpd::system_now() < instant) early->fetch_add(1);
    runs->fetch_add(1);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(wall_clock_tasks)

BOOST_AUTO_TEST_CASE(a_forward_step_over_the_instant_runs_the_task_at_once) {
  scheduled_thread_pool pool(2);
  const auto submitted = steady::now();
  auto fut = pool.schedule_at(cpd::system_now() + 1h, [] { return 42; });
  auto steady_task = pool.schedule(1h, [] {});
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(!fut.done());
  test_support::injected_step step(2h);
  BOOST_REQUIRE(fut.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(fut.get() == 42);
  BOOST_TEST((steady::now() - submitted < long_wait));  // not an hour later
  // A steady task does not follow the wall clock.
  BOOST_TEST(!steady_task.done());
  BOOST_TEST((steady_task.delay() > 50min));
  steady_task.cancel();
}

BOOST_AUTO_TEST_CASE(execute_at_follows_the_wall_clock_too) {
  scheduled_thread_pool pool(1);
  counter ran;
  pool.execute_at(cpd::system_now() + 1h, [&] { ran.bump(); });
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(ran.value() == 0u);
  test_support::injected_step step(61min);
  BOOST_TEST(ran.wait_for_at_least(1));
}

BOOST_AUTO_TEST_CASE(a_backward_step_delays_the_task_until_the_clock_is_back) {
  scheduled_thread_pool pool(2);
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto early = std::make_shared<std::atomic<int>>(0);
  const auto instant = cpd::system_now() + 200ms;
  auto fut = pool.schedule_at(instant, checked_run{instant, runs, early});
  auto steady_task = pool.schedule(200ms, [] {});
  test_support::injected_step step(-1h);
  // Its steady deadline passes; the wall clock is an hour short of it.
  BOOST_REQUIRE(steady_task.wait_for(long_wait) == std::future_status::ready);
  std::this_thread::sleep_for(400ms);
  BOOST_TEST(!fut.done());
  BOOST_TEST(runs->load() == 0);
  BOOST_TEST((fut.delay() > 50min));  // moved with the clock
  step.back();  // the instant is past again: it runs at once
  BOOST_REQUIRE(fut.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(runs->load() == 1);
  BOOST_TEST(early->load() == 0);
}

BOOST_AUTO_TEST_CASE(many_tasks_on_several_threads_run_exactly_when_the_step_passes_them) {
  scheduled_thread_pool pool(4);
  constexpr std::size_t n = 200;
  auto runs = std::make_shared<std::atomic<int>>(0);
  auto early = std::make_shared<std::atomic<int>>(0);
  const auto base = cpd::system_now();
  std::vector<chronopool::scheduled_future<void>> futs;
  std::vector<std::shared_ptr<std::atomic<int>>> each;
  for (std::size_t i = 0; i < n; ++i) {
    // Minute i + 1 from now; the steps land on half-minutes.
    const auto instant = base + std::chrono::minutes(static_cast<long>(i) + 1);
    each.push_back(std::make_shared<std::atomic<int>>(0));
    futs.push_back(pool.schedule_at(instant, checked_run{instant, each.back(), early}));
  }
  {
    test_support::injected_step step(std::chrono::seconds(100 * 60 + 30));  // past the first 100
    BOOST_TEST(eventually([&] {
      std::size_t done = 0;
      for (const auto& f : futs) done += f.done() ? 1 : 0;
      return done >= n / 2;
    }));
    std::this_thread::sleep_for(50ms);
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST(each[i]->load() == (i < n / 2 ? 1 : 0), "task " << i);
    // Back by the step and then some: the rest move further away.
    test_support::injected_step more(-1h);
    std::this_thread::sleep_for(50ms);
    for (std::size_t i = n / 2; i < n; ++i) BOOST_TEST(!futs[i].done());
  }
  // Back at the real clock: the rest are still ahead (once the pass for the
  // step back has run: steps are handled on a pool thread).
  BOOST_TEST(eventually([&] { return futs[n / 2].delay() > 49min; }));
  {
    test_support::injected_step step(4h);  // past them all
    BOOST_TEST(eventually([&] {
      for (const auto& f : futs)
        if (!f.done()) return false;
      return true;
    }));
  }
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST(each[i]->load() == 1, "task " << i);
  BOOST_TEST(early->load() == 0);
  BOOST_TEST(eventually([&] { return pool.queued_count() == 0u; }));  // a pass the step back queued, too
}

BOOST_AUTO_TEST_CASE(a_cancelled_wall_task_never_runs_and_leaves_the_queue) {
  scheduled_thread_pool pool(1);
  std::atomic<int> runs{0};
  auto fut = pool.schedule_at(cpd::system_now() + 1h, [&] { ++runs; });
  auto kept = pool.schedule_at(cpd::system_now() + 1h, [&] { ++runs; });
  BOOST_TEST(fut.cancel());
  BOOST_TEST(pool.queued_count() == 1u);
  {
    test_support::injected_step step(2h);
    BOOST_REQUIRE(kept.wait_for(long_wait) == std::future_status::ready);
  }
  BOOST_TEST(runs.load() == 1);
  BOOST_TEST(fut.cancelled());
  // The step back may have queued a pass (kept is forgotten just after its
  // future completes), which leaves the queue once run.
  BOOST_TEST(eventually([&] { return pool.queued_count() == 0u; }));
  // pool.remove() knows a wall-clock task as its own.
  auto removed = pool.schedule_at(cpd::system_now() + 1h, [&] { ++runs; });
  BOOST_TEST(pool.remove(removed));
  BOOST_TEST(removed.cancelled());
}

BOOST_AUTO_TEST_CASE(after_shutdown_a_kept_wall_task_still_follows_the_clock) {
  scheduled_thread_pool pool(1);  // execute_existing_delayed_tasks_after_shutdown: on
  auto fut = pool.schedule_at(cpd::system_now() + 1h, [] {});
  pool.shutdown();
  BOOST_TEST(!pool.is_terminated());
  test_support::injected_step step(2h);
  BOOST_REQUIRE(fut.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(pool.wait_for_termination(long_wait));
}

BOOST_AUTO_TEST_CASE(shutdown_drops_wall_tasks_when_delayed_tasks_do_not_survive_it) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.execute_existing_delayed_tasks_after_shutdown = false;
  scheduled_thread_pool pool(o);
  auto fut = pool.schedule_at(cpd::system_now() + 1h, [] {});
  pool.shutdown();
  BOOST_TEST(fut.cancelled());
  BOOST_TEST(pool.wait_for_termination(long_wait));
  test_support::injected_step step(2h);  // the pool has unsubscribed: nothing to move
}

BOOST_AUTO_TEST_CASE(shutdown_now_hands_back_pending_wall_tasks) {
  scheduled_thread_pool pool(2);
  std::atomic<int> runs{0};
  std::vector<chronopool::scheduled_future<void>> futs;
  for (int i = 0; i < 3; ++i) futs.push_back(pool.schedule_at(cpd::system_now() + 1h, [&] { ++runs; }));
  auto pending = pool.shutdown_now();
  BOOST_TEST(pending.size() == 3u);
  {
    test_support::injected_step step(2h);  // nothing follows the clock any more
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(runs.load() == 0);
  for (auto& p : pending) p.run();  // by hand, at once
  BOOST_TEST(runs.load() == 3);
  for (auto& f : futs) BOOST_TEST(f.done());
}

BOOST_AUTO_TEST_CASE(a_pool_destroyed_with_wall_tasks_pending_cancels_them_and_stops_listening) {
  std::vector<chronopool::scheduled_future<int>> futs;
  const auto seen = cpd::clock_steps_seen();
  {
    scheduled_thread_pool pool(2);
    for (int i = 0; i < 5; ++i) futs.push_back(pool.schedule_at(cpd::system_now() + 1h, [i] { return i; }));
    pool.execute_at(cpd::system_now() + 1h, [] {});
  }
  for (auto& f : futs) BOOST_TEST(f.cancelled());
  // A step after the pool is gone reaches nothing of it (ASan would see it).
  test_support::injected_step step(2h);
  step.back();
  BOOST_TEST(cpd::clock_steps_seen() == seen + 2);
}

BOOST_AUTO_TEST_CASE(a_task_already_past_runs_at_once_and_never_is_never) {
  scheduled_thread_pool pool(1);
  auto past = pool.schedule_at(cpd::system_now() - 1h, [] { return 1; });
  BOOST_REQUIRE(past.wait_for(long_wait) == std::future_status::ready);
  auto never = pool.schedule_at(sys::time_point::max(), [] {});
  {
    test_support::injected_step step(24h);
    std::this_thread::sleep_for(20ms);
    BOOST_TEST(!never.done());
  }
  never.cancel();
}

BOOST_AUTO_TEST_CASE(steps_racing_task_starts_run_every_task_exactly_once) {
  // Tasks come due while another thread steps the clock back and forth by
  // less than their spacing: each runs exactly once, none is lost in a
  // re-queue that crossed a take. Meant for the tsan preset.
  scheduled_thread_pool pool(3);
  constexpr std::size_t n = 300;
  std::vector<std::shared_ptr<std::atomic<int>>> each;
  std::vector<chronopool::scheduled_future<void>> futs;
  auto early = std::make_shared<std::atomic<int>>(0);
  const auto base = cpd::system_now();
  for (std::size_t i = 0; i < n; ++i) {
    const auto instant = base + std::chrono::milliseconds(static_cast<long>(i));
    each.push_back(std::make_shared<std::atomic<int>>(0));
    futs.push_back(pool.schedule_at(instant, checked_run{instant, each.back(), early}));
  }
  std::atomic<bool> stop{false};
  std::thread stepper([&] {
    while (!stop.load()) {
      cpd::inject_clock_step(-3ms);
      std::this_thread::sleep_for(100us);
      cpd::inject_clock_step(3ms);
      std::this_thread::sleep_for(100us);
    }
  });
  const bool all = eventually([&] {
    for (const auto& f : futs)
      if (!f.done()) return false;
    return true;
  });
  stop = true;
  stepper.join();
  BOOST_TEST(all);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST(each[i]->load() == 1, "task " << i);
}

// Opt-in (CHRONOPOOL_TEST_CLOCK_STEP=1): the machine's clock really stepped
// forward by 3 s runs a wall task due in 2 s at once; stepped back by 3 s,
// a task due in 1 s waits for the wall clock to come back to its instant.
// The clock is stepped back by as much each time.
BOOST_AUTO_TEST_CASE(real_steps_of_the_clock_move_pending_wall_tasks) {
  if (!test_support::may_step_the_machine_clock()) {
    BOOST_TEST_MESSAGE("skipped: set CHRONOPOOL_TEST_CLOCK_STEP=1 to let this test step the machine's clock");
    return;
  }
  scheduled_thread_pool pool(2);
  {
    std::atomic<bool> ran{false};
    const auto start = std::chrono::steady_clock::now();
    auto fut = pool.schedule_at(cpd::system_now() + 2s, [&] { ran = true; });
    std::this_thread::sleep_for(20ms);
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(3s), "errno " << errno);
    const bool done = fut.wait_for(long_wait) == std::future_status::ready;
    const auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(-3s), "errno " << errno);
    BOOST_REQUIRE(done);
    BOOST_TEST(ran.load());
    BOOST_TEST((took < 1s));  // not the 2 s of the steady deadline it had
  }
  {
    std::atomic<bool> ran{false};
    const auto instant = cpd::system_now() + 1s;
    auto fut = pool.schedule_at(instant, [&] { ran = true; });
    std::this_thread::sleep_for(20ms);
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(-3s), "errno " << errno);
    std::this_thread::sleep_for(1500ms);
    BOOST_TEST(!ran.load());  // its instant is 4 s away on the wall clock now
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(3s), "errno " << errno);
    BOOST_REQUIRE(fut.wait_for(long_wait) == std::future_status::ready);
    BOOST_TEST(ran.load());
    BOOST_TEST((cpd::system_now() >= instant));
  }
}

BOOST_AUTO_TEST_SUITE_END()

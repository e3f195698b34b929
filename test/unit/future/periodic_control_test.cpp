// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Control of a pool's periodic tasks through scheduled_future<void>: pause,
// resume, reschedule, reschedule_next, trigger_now, and the end conditions
// max_runs and until. Races run the controls from another thread while the
// task runs every millisecond and check what must hold whatever the timing:
// runs never overlap, no run starts while paused once the pause has taken
// effect, the future completes exactly once. Timing is otherwise checked
// only as counts over periods long enough not to depend on scheduling.
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::missed_tick_policy;
using chronopool::periodic_options;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;

namespace {

scheduled_thread_pool_options threads(std::size_t n) {
  scheduled_thread_pool_options o;
  o.core_pool_size = n;
  return o;
}

/// Counts runs and detects overlap.
struct run_counter {
  std::atomic<int> runs{0};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  void run() {
    if (inside.fetch_add(1) != 0) overlapped = true;
    runs.fetch_add(1);
    inside.fetch_sub(1);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(periodic_control)

BOOST_AUTO_TEST_CASE(pause_stops_runs_and_resume_restarts_them) {
  run_counter c;
  scheduled_thread_pool pool(threads(2));
  auto f = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { c.run(); });
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 3; }));
  BOOST_TEST(f.pause());
  BOOST_TEST(!f.pause());  // pausing already: a no-op
  BOOST_REQUIRE(eventually([&] { return f.paused(); }));
  const int at_pause = c.runs.load();
  std::this_thread::sleep_for(30ms);
  BOOST_TEST(c.runs.load() == at_pause);
  BOOST_TEST(!f.done());
  BOOST_TEST(f.resume());
  BOOST_TEST(!f.resume());  // not paused any more: a no-op
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= at_pause + 3; }));
  BOOST_TEST(f.cancel());
  BOOST_TEST(!c.overlapped.load());
}

BOOST_AUTO_TEST_CASE(a_paused_task_can_be_cancelled) {
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  BOOST_TEST(f.pause());
  BOOST_TEST(f.paused());
  BOOST_TEST(f.cancel());
  BOOST_TEST(f.done());
  BOOST_CHECK_THROW(f.get(), chronopool::task_cancelled);
  // Every control on a done task is a no-op.
  BOOST_TEST(!f.pause());
  BOOST_TEST(!f.resume());
  BOOST_TEST(!f.trigger_now());
  BOOST_TEST(!f.reschedule(1s));
  BOOST_TEST(!f.reschedule_next(steady::now()));
}

BOOST_AUTO_TEST_CASE(resume_with_skip_runs_once_for_the_missed_instants) {
  run_counter c;
  scheduled_thread_pool pool(threads(1));
  periodic_options o;
  o.missed_ticks = missed_tick_policy::skip;
  auto f = pool.schedule_at_fixed_rate(50ms, 50ms, [&] { c.run(); }, o);
  BOOST_TEST(f.pause());  // queued: leaves the queue at once
  BOOST_TEST(f.paused());
  std::this_thread::sleep_for(220ms);  // four instants missed
  BOOST_TEST(c.runs.load() == 0);
  BOOST_TEST(f.resume());
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 1; }));
  // skip: the next instant after the resumed run, not the four missed ones.
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() <= 2);
  f.cancel();
}

BOOST_AUTO_TEST_CASE(resume_with_burst_runs_every_missed_instant) {
  run_counter c;
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(20ms, 20ms, [&] { c.run(); });
  BOOST_TEST(f.pause());
  std::this_thread::sleep_for(200ms);  // ~9 instants missed
  BOOST_TEST(f.resume());
  // burst: the missed instants run back to back, well within one period.
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 8; }, 5s));
  f.cancel();
}

BOOST_AUTO_TEST_CASE(reschedule_changes_the_period_and_keeps_the_future) {
  run_counter c;
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [&] { c.run(); });
  const auto id = f.id();
  BOOST_TEST(f.reschedule(2ms));
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 5; }));
  BOOST_TEST((f.id() == id));
  BOOST_TEST(f.reschedule(1h));
  BOOST_TEST(f.delay() > 30min);
  BOOST_TEST(f.cancel());
  BOOST_TEST(!c.overlapped.load());
}

BOOST_AUTO_TEST_CASE(reschedule_next_moves_the_next_run) {
  run_counter c;
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_with_fixed_delay(1h, 1h, [&] { c.run(); });
  BOOST_TEST(f.reschedule_next(steady::now()));
  BOOST_REQUIRE(eventually([&] { return c.runs.load() == 1; }));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() == 1);  // the period (1 h) is kept
  BOOST_TEST(f.delay() > 30min);
  // On a paused task it applies on resume.
  BOOST_TEST(f.pause());
  BOOST_TEST(f.reschedule_next(steady::now() + 2h));
  BOOST_TEST(f.resume());
  BOOST_TEST(f.delay() > 90min);
  f.cancel();
}

BOOST_AUTO_TEST_CASE(reschedule_rejects_a_period_that_is_not_positive) {
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  BOOST_CHECK_THROW(f.reschedule(0ms), std::invalid_argument);
  BOOST_CHECK_THROW(f.reschedule(-1ms), std::invalid_argument);
  periodic_options o;
  o.leeway = 10ms;
  auto g = pool.schedule_at_fixed_rate(1h, 1h, [] {}, o);
  BOOST_CHECK_THROW(g.reschedule(10ms), std::invalid_argument);  // not above the leeway
  BOOST_TEST(f.delay() > 30min);  // untouched
  f.cancel();
  g.cancel();
}

BOOST_AUTO_TEST_CASE(trigger_now_runs_once_more_without_shifting_the_grid) {
  run_counter c;
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [&] { c.run(); });
  const auto before = f.delay();
  BOOST_TEST(f.trigger_now());
  BOOST_REQUIRE(eventually([&] { return c.runs.load() == 1; }));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() == 1);
  // The scheduled run keeps its instant (an hour from the start).
  BOOST_TEST(f.delay() <= before);
  BOOST_TEST(f.delay() > 50min);
  f.cancel();
}

BOOST_AUTO_TEST_CASE(trigger_now_while_running_runs_right_after_without_overlap) {
  run_counter c;
  std::atomic<int> runs{0};
  std::atomic<bool> release{false};
  scheduled_thread_pool pool(threads(2));  // after what its tasks use: joined first
  auto f = pool.schedule_at_fixed_rate(0ms, 1h, [&] {
    c.run();
    if (runs.fetch_add(1) == 0) {
      while (!release.load()) std::this_thread::yield();
    }
  });
  BOOST_REQUIRE(eventually([&] { return runs.load() == 1; }));
  BOOST_TEST(f.trigger_now());
  BOOST_TEST(!f.trigger_now());  // one extra run pending already
  release = true;
  BOOST_REQUIRE(eventually([&] { return runs.load() == 2; }));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(runs.load() == 2);
  BOOST_TEST(!c.overlapped.load());
  f.cancel();
}

BOOST_AUTO_TEST_CASE(controls_on_a_one_shot_task_are_no_ops) {
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule(1h, [] {});
  BOOST_TEST(!f.pause());
  BOOST_TEST(!f.resume());
  BOOST_TEST(!f.trigger_now());
  BOOST_TEST(!f.reschedule(1s));
  BOOST_TEST(!f.reschedule_next(steady::now()));
  BOOST_TEST(!f.paused());
  scheduled_future<void> none;
  BOOST_TEST(!none.pause());
  BOOST_TEST(!none.resume());
  BOOST_TEST(!none.trigger_now());
  f.cancel();
}

BOOST_AUTO_TEST_CASE(max_runs_ends_the_schedule_normally) {
  run_counter c;
  scheduled_thread_pool pool(threads(2));
  periodic_options o;
  o.max_runs = 5;
  auto f = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { c.run(); }, o);
  require_ready(f);
  f.get();  // completes normally
  BOOST_TEST(!f.cancelled());
  BOOST_TEST(c.runs.load() == 5);
}

BOOST_AUTO_TEST_CASE(until_ends_the_schedule_normally) {
  // On a manual clock the pool's time stands still while a run runs, so
  // the time a run reads is the time it started: with a 1 ms delay from
  // 1 ms, runs start at 1, 2, ..., 29 ms, and none at or after until (30).
  // (On the real clock a run that started just before until may read a
  // later time itself, which says nothing about the schedule.)
  periodic_options o;
  std::atomic<bool> late{false};
  std::atomic<int> runs{0};
  scheduled_thread_pool_options po = threads(1);
  po.use_manual_clock = true;
  scheduled_thread_pool pool(po);  // after what its tasks use: joined first
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  o.until = clock.now() + 30ms;
  auto f = pool.schedule_with_fixed_delay(1ms, 1ms, [&] {
    if (pool.now() >= *o.until) late = true;
    ++runs;
  }, o);
  clock.advance(100ms);
  require_ready(f);
  f.get();
  BOOST_TEST(!late.load());
  BOOST_TEST(runs.load() == 29);
}

BOOST_AUTO_TEST_CASE(resume_after_until_ends_the_task) {
  scheduled_thread_pool pool(threads(1));
  periodic_options o;
  o.until = steady::now() + 40ms;
  auto f = pool.schedule_at_fixed_rate(20ms, 1h, [] {}, o);
  BOOST_TEST(f.pause());
  std::this_thread::sleep_for(50ms);
  BOOST_TEST(!f.done());  // a paused task waits for resume()
  BOOST_TEST(f.resume());
  // The next instant (20 ms) is before until, so it runs once; the next
  // (1 h) is not: the task ends.
  require_ready(f);
  f.get();
}

BOOST_AUTO_TEST_CASE(end_conditions_are_checked) {
  scheduled_thread_pool pool(threads(1));
  periodic_options zero;
  zero.max_runs = 0;
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [] {}, zero), std::invalid_argument);
  periodic_options early;
  early.until = steady::now() + 10ms;
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(1h, 1ms, [] {}, early), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(steady::now() + 1h, 1ms, [] {}, early), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(controls_racing_runs_lose_nothing_and_never_overlap) {
  run_counter c;
  std::atomic<int> completions{0};
  scheduled_thread_pool pool(threads(3));  // after what its tasks use: joined first
  auto f = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { c.run(); });
  f.async_wait([&](std::exception_ptr) { completions.fetch_add(1); });
  const auto end = steady::now() + 300ms;
  int i = 0;
  while (steady::now() < end) {
    switch (i++ % 6) {
      case 0: f.pause(); break;
      case 1: f.resume(); break;
      case 2: f.reschedule(1ms); break;
      case 3: f.trigger_now(); break;
      case 4: f.reschedule_next(steady::now()); break;
      default: std::this_thread::sleep_for(100us); break;
    }
  }
  // The last state may be paused: resume it and check it still runs.
  f.resume();
  const int now_runs = c.runs.load();
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= now_runs + 3; }));
  // A pause holds once the current run has ended.
  BOOST_TEST(f.pause());
  BOOST_REQUIRE(eventually([&] { return f.paused(); }));
  const int paused_runs = c.runs.load();
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() == paused_runs);
  BOOST_TEST(f.cancel());
  BOOST_REQUIRE(eventually([&] { return completions.load() == 1; }));
  std::this_thread::sleep_for(10ms);
  BOOST_TEST(completions.load() == 1);
  BOOST_TEST(!c.overlapped.load());
}

BOOST_AUTO_TEST_CASE(shutdown_cancels_a_paused_task) {
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  BOOST_TEST(f.pause());
  pool.shutdown();
  require_ready(f);
  BOOST_TEST(f.cancelled());
  BOOST_TEST(pool.wait_for_termination(wait_limit));
}

BOOST_AUTO_TEST_CASE(shutdown_keeping_periodic_tasks_keeps_a_paused_one) {
  scheduled_thread_pool_options o = threads(1);
  o.continue_existing_periodic_tasks_after_shutdown = true;
  run_counter c;
  scheduled_thread_pool pool(o);
  auto f = pool.schedule_at_fixed_rate(1h, 1ms, [&] { c.run(); });
  BOOST_TEST(f.pause());
  pool.shutdown();
  BOOST_TEST(f.paused());
  BOOST_TEST(f.resume());
  BOOST_TEST(f.reschedule_next(steady::now()));
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 2; }));
  pool.shutdown_now();
  require_ready(f);
  BOOST_TEST(f.cancelled());
}

BOOST_AUTO_TEST_CASE(a_paused_task_kept_after_shutdown_keeps_the_pool_from_terminating) {
  // Once shutdown() found the queue empty, the pool's thread left; the
  // paused task is still live work (it may be resumed), so the pool must not
  // terminate, or resume() would find it gone and cancel the task.
  scheduled_thread_pool_options o = threads(1);
  o.continue_existing_periodic_tasks_after_shutdown = true;
  run_counter c;
  scheduled_thread_pool pool(o);
  auto f = pool.schedule_at_fixed_rate(1h, 1ms, [&] { c.run(); });
  BOOST_TEST(f.pause());
  pool.shutdown();
  BOOST_REQUIRE(eventually([&] { return pool.pool_size() == 0u; }));
  std::this_thread::sleep_for(10ms);
  BOOST_TEST(!pool.is_terminated());
  BOOST_TEST(f.resume());
  BOOST_TEST(f.reschedule_next(steady::now()));
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 1; }));
  BOOST_TEST(f.cancel());
  BOOST_TEST(pool.wait_for_termination(wait_limit));  // nothing left: it terminates
}

BOOST_AUTO_TEST_CASE(the_pools_destruction_cancels_a_paused_task) {
  scheduled_future<void> f;
  {
    scheduled_thread_pool pool(threads(1));
    f = pool.schedule_at_fixed_rate(1h, 1h, [] {});
    BOOST_TEST(f.pause());
  }
  BOOST_TEST(f.cancelled());
  BOOST_TEST(!f.resume());
  BOOST_TEST(!f.cancel());
}

BOOST_AUTO_TEST_CASE(a_pause_after_shutdown_now_is_refused) {
  scheduled_thread_pool pool(threads(1));
  auto f = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  auto pending = pool.shutdown_now();
  BOOST_TEST(pending.size() == 1u);
  // Handed back by shutdown_now(): no schedule is left to control.
  BOOST_TEST(!f.pause());
  BOOST_TEST(!f.trigger_now());
  BOOST_TEST(!f.reschedule(1s));
  BOOST_TEST(!f.paused());
  pending.clear();  // cancels it
  BOOST_TEST(f.cancelled());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic tasks: fixed rate, fixed delay, no overlap, missed-tick policies,
// errors, cancellation, jitter and argument checks.
//
// Timing is only checked as lower bounds (a run never starts before its
// deadline) or as exact schedule arithmetic read from task_view::deadline()
// in before_execute; never as "it ran within N ms".
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::missed_tick_policy;
using chronopool::periodic_options;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;

namespace {

struct tick_error : std::runtime_error {
  explicit tick_error(int n) : std::runtime_error("tick failed"), run(n) {}
  int run;
};

/// A pool whose before_execute records the deadline of every periodic run.
struct deadline_pool {
  recorder<steady::time_point> deadlines;
  scheduled_thread_pool pool;

  explicit deadline_pool(std::size_t threads) : pool(options(threads, deadlines)) {}

  static scheduled_thread_pool_options options(std::size_t threads, recorder<steady::time_point>& d) {
    scheduled_thread_pool_options o;
    o.core_pool_size = threads;
    o.before_execute = [&d](const chronopool::task_view& v) {
      if (v.is_periodic()) d.push(v.deadline());
    };
    return o;
  }
};

/// Start and end of each run, as seen by the callable.
struct run_log {
  recorder<steady::time_point> starts;
  recorder<steady::time_point> ends;
};

bool is_multiple(steady::duration d, steady::duration period) { return d.count() % period.count() == 0; }

}  // namespace

BOOST_AUTO_TEST_SUITE(periodic)

BOOST_AUTO_TEST_CASE(fixed_rate_sequence) {
  constexpr auto period = 20ms;
  run_log log;
  deadline_pool p(2);
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] {
    log.starts.push(steady::now());
    log.ends.push(steady::now());
  });
  const auto t_after = steady::now();
  BOOST_CHECK(f.is_periodic());
  std::this_thread::sleep_for(300ms);
  // Running normally, a periodic future is never done.
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.wait_for(1ms) == std::future_status::timeout);
  BOOST_CHECK(f.cancel());
  const auto t_cancel = steady::now();
  BOOST_CHECK(f.done());
  BOOST_CHECK(f.cancelled());
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  p.pool.join();

  const auto starts = log.starts.snapshot();
  const auto ends = log.ends.snapshot();
  const auto deadlines = p.deadlines.snapshot();
  BOOST_TEST_MESSAGE("fixed rate: " << starts.size() << " runs in " << ms(t_cancel - t_before) << " ms");
  BOOST_REQUIRE_GE(starts.size(), 5U);  // ideal: 15
  BOOST_REQUIRE_EQUAL(ends.size(), starts.size());
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  // A run never starts before its deadline, so at most one run per elapsed period.
  BOOST_CHECK_LE(starts.size(), static_cast<std::size_t>((t_cancel - t_before) / period) + 1);
  // The first ideal deadline is the submission instant.
  BOOST_CHECK(deadlines[0] >= t_before);
  BOOST_CHECK(deadlines[0] <= t_after);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) {
      // The schedule is exact: deadline k = first + k × period (no drift).
      BOOST_CHECK(deadlines[k] == deadlines[0] + period * static_cast<int>(k));
      BOOST_CHECK(starts[k] >= deadlines[k]);
      BOOST_CHECK(starts[k] - t_before >= period * static_cast<int>(k));
      if (k > 0) BOOST_CHECK(starts[k] >= ends[k - 1]);  // monotonic, no overlap
    }
  }
}

BOOST_AUTO_TEST_CASE(fixed_delay_spacing) {
  constexpr auto delay = 10ms;
  run_log log;
  deadline_pool p(2);
  const auto t0 = steady::now();
  auto f = p.pool.schedule_with_fixed_delay(25ms, delay, [&] {
    log.starts.push(steady::now());
    std::this_thread::sleep_for(15ms);
    log.ends.push(steady::now());
  });
  BOOST_CHECK(f.is_periodic());
  BOOST_REQUIRE(eventually([&] { return log.ends.size() >= 5; }));
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto starts = log.starts.snapshot();
  const auto ends = log.ends.snapshot();
  const auto deadlines = p.deadlines.snapshot();
  BOOST_REQUIRE_GE(ends.size(), 5U);
  BOOST_REQUIRE_EQUAL(starts.size(), ends.size());
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  BOOST_CHECK(starts[0] - t0 >= 25ms);  // initial delay
  for (std::size_t k = 1; k < starts.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k << ": gap " << ms(starts[k] - ends[k - 1]) << " ms") {
      BOOST_CHECK(starts[k] >= ends[k - 1] + delay);
      BOOST_CHECK(deadlines[k] >= ends[k - 1] + delay);  // measured from the end of the run
      BOOST_CHECK(starts[k] >= deadlines[k]);
    }
  }
}

BOOST_AUTO_TEST_CASE(runs_never_overlap_with_many_threads) {
  // Each run takes far longer than the period, and four threads are idle:
  // still only one run at a time, for both kinds.
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<int> rate_runs{0};
  std::atomic<int> delay_runs{0};
  auto body = [&](std::atomic<int>& runs) {
    const int now_inside = inside.fetch_add(1) + 1;
    int seen = max_inside.load();
    while (now_inside > seen && !max_inside.compare_exchange_weak(seen, now_inside)) {
    }
    std::this_thread::sleep_for(12ms);
    runs.fetch_add(1);
    inside.fetch_sub(1);
  };
  std::atomic<int> rate_inside{0};
  std::atomic<int> rate_max{0};
  scheduled_thread_pool pool(4);
  BOOST_CHECK_EQUAL(pool.prestart_core_threads(), 4U);
  auto rate = pool.schedule_at_fixed_rate(0ms, 1ms, [&] {
    const int n = rate_inside.fetch_add(1) + 1;
    int seen = rate_max.load();
    while (n > seen && !rate_max.compare_exchange_weak(seen, n)) {
    }
    std::this_thread::sleep_for(12ms);
    rate_runs.fetch_add(1);
    rate_inside.fetch_sub(1);
  });
  auto fixed = pool.schedule_with_fixed_delay(0ms, 1ns, [&] { body(delay_runs); });
  BOOST_REQUIRE(eventually([&] { return rate_runs.load() >= 6 && delay_runs.load() >= 6; }));
  BOOST_CHECK(rate.cancel());
  BOOST_CHECK(fixed.cancel());
  pool.join();
  BOOST_CHECK_EQUAL(rate_max.load(), 1);
  BOOST_CHECK_EQUAL(max_inside.load(), 1);
}

namespace {

struct missed_tick_result {
  std::vector<steady::time_point> deadlines;
  std::vector<steady::time_point> starts;
  std::vector<steady::time_point> ends;
};

/// Period 10 ms, fixed rate. late_start: the only thread is held for 55 ms so
/// the first (short) run starts late. Otherwise the first run itself lasts 55 ms.
missed_tick_result run_missed_ticks(missed_tick_policy policy, bool late_start) {
  constexpr auto period = 10ms;
  gate hold;
  run_log log;
  missed_tick_result out;
  std::atomic<int> n{0};
  {
    deadline_pool p(1);
    gate_opener opener(hold);
    scheduled_future<void> blocker;
    if (late_start) blocker = p.pool.submit([&] { (void)hold.wait(); });
    periodic_options o;
    o.missed_ticks = policy;
    auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] {
      log.starts.push(steady::now());
      if (n.fetch_add(1) == 0 && !late_start) std::this_thread::sleep_for(55ms);
      log.ends.push(steady::now());
    }, o);
    if (late_start) {
      std::this_thread::sleep_for(55ms);
      hold.open();
    }
    BOOST_CHECK(eventually([&] { return log.ends.size() >= 8; }));
    BOOST_CHECK(f.cancel());
    p.pool.join();
    out.deadlines = p.deadlines.snapshot();
  }
  out.starts = log.starts.snapshot();
  out.ends = log.ends.snapshot();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fixed_rate_burst_catches_up) {
  for (bool late_start : {false, true}) {
    BOOST_TEST_CONTEXT("late_start=" << late_start) {
      const auto r = run_missed_ticks(missed_tick_policy::burst, late_start);
      BOOST_REQUIRE_GE(r.deadlines.size(), 8U);
      BOOST_REQUIRE_GE(r.ends.size(), 8U);
      BOOST_CHECK(r.ends[0] - r.deadlines[0] >= 55ms);
      // The ideal schedule is kept: every tick happens, none is dropped.
      for (std::size_t k = 0; k < 8; ++k) BOOST_CHECK(r.deadlines[k] == r.deadlines[0] + 10ms * static_cast<int>(k));
      // Ticks 1..5 were already overdue when run 0 ended: they ran back to back
      // afterwards (the catch-up burst).
      int overdue = 0;
      for (std::size_t k = 1; k < r.deadlines.size(); ++k) {
        if (r.deadlines[k] < r.ends[0]) ++overdue;
        BOOST_CHECK(r.starts[k] >= r.ends[k - 1]);
        BOOST_CHECK(r.starts[k] >= r.deadlines[k]);
      }
      BOOST_CHECK_GE(overdue, 5);
    }
  }
}

namespace {

/// Checks every deadline after the first against the one rule for late runs
/// (detail::next_fixed_rate_instant): run k-1 started somewhere in
/// [lo, hi] (no earlier than its deadline or the previous run's end on the
/// one thread, no later than its callable saw), and that start decides
/// deadline k. When the window straddles the late/on-time boundary either
/// answer is accepted.
void check_late_rule(missed_tick_policy policy, const missed_tick_result& r, steady::duration period) {
  const auto d0 = r.deadlines[0];
  const std::size_t n = std::min({r.deadlines.size(), r.starts.size() + 1, r.ends.size() + 1});
  for (std::size_t k = 1; k < n; ++k) {
    BOOST_TEST_CONTEXT("deadline " << k << " at +" << ms(r.deadlines[k] - d0) << " ms") {
      const auto prev = r.deadlines[k - 1];
      const auto lo = k >= 2 ? std::max(prev, r.ends[k - 2]) : prev;
      const auto hi = r.starts[k - 1];
      const auto d = r.deadlines[k];
      const bool may_be_on_time = prev + period > lo;
      const bool may_be_late = prev + period <= hi;
      bool ok = may_be_on_time && d == prev + period;
      if (may_be_late && !ok) {
        if (policy == missed_tick_policy::delay) {
          ok = d >= lo + period && d <= hi + period;
        } else {
          ok = is_multiple(d - d0, period) && d > lo && d <= hi + period;
        }
      }
      BOOST_CHECK(ok);
    }
  }
}

/// The example: period 100 ms, the first run lasts 250 ms.
missed_tick_result run_one_long_first_run(missed_tick_policy policy) {
  run_log log;
  missed_tick_result out;
  std::atomic<int> n{0};
  {
    deadline_pool p(1);
    periodic_options o;
    o.missed_ticks = policy;
    auto f = p.pool.schedule_at_fixed_rate(0ms, 100ms, [&] {
      log.starts.push(steady::now());
      if (n.fetch_add(1) == 0) std::this_thread::sleep_for(250ms);
      log.ends.push(steady::now());
    }, o);
    BOOST_CHECK(eventually([&] { return log.ends.size() >= 3; }));
    BOOST_CHECK(f.cancel());
    p.pool.join();
    out.deadlines = p.deadlines.snapshot();
  }
  out.starts = log.starts.snapshot();
  out.ends = log.ends.snapshot();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(overdue_tick_fires_at_once_then_delay_restarts_the_period) {
  // Runs start at 0, 250, 350: the tick due at 100 is not dropped.
  const auto r = run_one_long_first_run(missed_tick_policy::delay);
  BOOST_REQUIRE_GE(r.deadlines.size(), 3U);
  BOOST_REQUIRE_GE(r.starts.size(), 2U);
  const auto d0 = r.deadlines[0];
  BOOST_TEST_INFO("deadlines at +" << ms(r.deadlines[1] - d0) << ", +" << ms(r.deadlines[2] - d0) << " ms");
  BOOST_CHECK(r.deadlines[1] == d0 + 100ms);
  // A period after the overdue run started (after run 0 ended, before its callable began).
  BOOST_CHECK(r.deadlines[2] >= r.ends[0] + 100ms);
  BOOST_CHECK(r.deadlines[2] <= r.starts[1] + 100ms);
}

BOOST_AUTO_TEST_CASE(overdue_tick_fires_at_once_then_skip_moves_to_the_grid) {
  // Runs start at 0, 250, 300.
  const auto r = run_one_long_first_run(missed_tick_policy::skip);
  BOOST_REQUIRE_GE(r.deadlines.size(), 3U);
  BOOST_REQUIRE_GE(r.starts.size(), 2U);
  const auto d0 = r.deadlines[0];
  BOOST_TEST_INFO("deadlines at +" << ms(r.deadlines[1] - d0) << ", +" << ms(r.deadlines[2] - d0) << " ms");
  BOOST_CHECK(r.deadlines[1] == d0 + 100ms);
  // The first ideal instant after the overdue run started.
  BOOST_CHECK(is_multiple(r.deadlines[2] - d0, 100ms));
  BOOST_CHECK(r.deadlines[2] > r.ends[0]);
  BOOST_CHECK(r.deadlines[2] <= r.starts[1] + 100ms);
}

BOOST_AUTO_TEST_CASE(fixed_rate_skip_drops_missed_ticks) {
  for (bool late_start : {false, true}) {
    BOOST_TEST_CONTEXT("late_start=" << late_start) {
      const auto r = run_missed_ticks(missed_tick_policy::skip, late_start);
      BOOST_REQUIRE_GE(r.deadlines.size(), 8U);
      check_late_rule(missed_tick_policy::skip, r, 10ms);
      // Ticks were dropped: eight runs took the schedule well past 80 ms.
      BOOST_CHECK(r.deadlines[7] - r.deadlines[0] >= 110ms);
    }
  }
}

BOOST_AUTO_TEST_CASE(fixed_rate_delay_restarts_period) {
  for (bool late_start : {false, true}) {
    BOOST_TEST_CONTEXT("late_start=" << late_start) {
      const auto r = run_missed_ticks(missed_tick_policy::delay, late_start);
      BOOST_REQUIRE_GE(r.deadlines.size(), 8U);
      check_late_rule(missed_tick_policy::delay, r, 10ms);
      BOOST_CHECK(r.deadlines[7] - r.deadlines[0] >= 110ms);
    }
  }
}

BOOST_AUTO_TEST_CASE(fixed_delay_ignores_missed_tick_policy) {
  // missed_ticks is fixed-rate only: fixed delay is always end + delay.
  run_log log;
  deadline_pool p(1);
  periodic_options o;
  o.missed_ticks = missed_tick_policy::burst;
  std::atomic<int> n{0};
  auto f = p.pool.schedule_with_fixed_delay(0ms, 10ms, [&] {
    log.starts.push(steady::now());
    if (n.fetch_add(1) == 0) std::this_thread::sleep_for(40ms);
    log.ends.push(steady::now());
  }, o);
  BOOST_REQUIRE(eventually([&] { return log.ends.size() >= 3; }));
  BOOST_CHECK(f.cancel());
  p.pool.join();
  const auto starts = log.starts.snapshot();
  const auto ends = log.ends.snapshot();
  for (std::size_t k = 1; k < starts.size(); ++k) BOOST_CHECK(starts[k] >= ends[k - 1] + 10ms);
}

BOOST_AUTO_TEST_CASE(a_run_that_returns_stop_ends_the_schedule_and_completes_the_future) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      scheduled_thread_pool pool(2);
      std::atomic<int> runs{0};
      auto body = [&] {
        return runs.fetch_add(1) + 1 == 3 ? chronopool::periodic_control::stop : chronopool::periodic_control::keep;
      };
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 1ms, body) : pool.schedule_with_fixed_delay(0ms, 1ms, body);
      require_ready(f);
      BOOST_CHECK_NO_THROW(f.get());  // completes normally
      BOOST_TEST(f.done());
      BOOST_TEST(!f.cancelled());
      BOOST_TEST(!f.cancel());  // already done
      std::this_thread::sleep_for(20ms);
      BOOST_TEST(runs.load() == 3);  // no run after the one that ended it
      pool.join();
      BOOST_TEST(pool.completed_task_count() == 3u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_one_shot_task_may_return_periodic_control_as_a_value) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return chronopool::periodic_control::stop; });
  BOOST_TEST((f.get() == chronopool::periodic_control::stop));
  pool.join();
}

BOOST_AUTO_TEST_CASE(a_pool_task_refuses_a_periodic_error_handler) {
  scheduled_thread_pool pool(1);
  periodic_options o;
  o.error_handler = [](std::exception_ptr) {};
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [] {}, o), std::invalid_argument);
  BOOST_TEST(pool.queued_count() == 0u);
  pool.join();
}

BOOST_AUTO_TEST_CASE(exception_stops_periodic_task) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      std::atomic<int> runs{0};
      std::atomic<int> handled{0};
      scheduled_thread_pool_options o;
      o.core_pool_size = 2;
      o.error_handler = [&](std::exception_ptr, const chronopool::task_view*) { handled.fetch_add(1); };
      scheduled_thread_pool pool(o);
      auto body = [&] {
        const int n = runs.fetch_add(1) + 1;
        if (n == 3) throw tick_error(n);
      };
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 5ms, body) : pool.schedule_with_fixed_delay(0ms, 5ms, body);
      BOOST_REQUIRE(f.wait_for(wait_limit) == std::future_status::ready);
      BOOST_CHECK(f.done());
      BOOST_CHECK(!f.cancelled());
      try {
        f.get();
        BOOST_ERROR("get() did not rethrow the run's exception");
      } catch (const tick_error& e) {
        BOOST_CHECK_EQUAL(e.run, 3);
      }
      std::this_thread::sleep_for(40ms);  // 8 more periods: no further run
      BOOST_CHECK_EQUAL(runs.load(), 3);
      BOOST_CHECK(!f.cancel());           // already done
      BOOST_CHECK_EQUAL(handled.load(), 0);  // the future reports it, not the handler
      BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
    }
  }
}

BOOST_AUTO_TEST_CASE(continue_after_error_keeps_running) {
  std::atomic<int> runs{0};
  recorder<int> handled;  // run numbers seen by the error handler
  recorder<chronopool::task_id> handled_ids;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.error_handler = [&](std::exception_ptr e, const chronopool::task_view* v) {
    handled_ids.push(v != nullptr ? v->id() : chronopool::task_id{});
    try {
      std::rethrow_exception(e);
    } catch (const tick_error& t) {
      handled.push(t.run);
    } catch (...) {
      handled.push(-1);
    }
  };
  scheduled_thread_pool pool(o);
  periodic_options po;
  po.continue_after_error = true;
  auto f = pool.schedule_at_fixed_rate(0ms, 3ms, [&] {
    const int n = runs.fetch_add(1) + 1;
    if (n % 2 == 1) throw tick_error(n);
  }, po);
  BOOST_REQUIRE(eventually([&] { return runs.load() >= 7 && handled.size() >= 3; }));
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel());
  BOOST_CHECK_THROW(f.get(), task_cancelled);  // cancelled, not failed
  pool.join();
  const auto seen = handled.snapshot();
  BOOST_REQUIRE_GE(seen.size(), 3U);
  for (std::size_t i = 0; i < seen.size(); ++i) BOOST_CHECK_EQUAL(seen[i], static_cast<int>(2 * i + 1));
  for (const auto& id : handled_ids.snapshot()) BOOST_CHECK(id == f.id());
  BOOST_CHECK_EQUAL(seen.size(), static_cast<std::size_t>((runs.load() + 1) / 2));
}

BOOST_AUTO_TEST_CASE(cancel_stops_later_runs) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      std::atomic<int> runs{0};
      auto token = std::make_shared<int>(0);
      scheduled_thread_pool pool(2);
      auto body = [&runs, token] { runs.fetch_add(1); };
      // Moved in: the task must hold the only copy of the token.
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 2ms, std::move(body))
                          : pool.schedule_with_fixed_delay(0ms, 2ms, std::move(body));
      BOOST_CHECK_EQUAL(token.use_count(), 2);
      BOOST_REQUIRE(eventually([&] { return runs.load() >= 3; }));
      BOOST_CHECK(f.cancel());
      BOOST_CHECK(f.cancelled());
      BOOST_CHECK(f.done());
      BOOST_CHECK_THROW(f.get(), task_cancelled);
      const int at_cancel = runs.load();
      std::this_thread::sleep_for(30ms);
      const int later = runs.load();
      BOOST_CHECK_LE(later, at_cancel + 1);  // at most the run in progress
      std::this_thread::sleep_for(30ms);
      BOOST_CHECK_EQUAL(runs.load(), later);
      BOOST_CHECK(!f.cancel());
      BOOST_CHECK(eventually([&] { return token.use_count() == 1; }));  // callable released
      BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
    }
  }
}

BOOST_AUTO_TEST_CASE(cancel_queued_periodic_releases_callable) {
  auto token = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_at_fixed_rate(1h, 1s, [&runs, token] { runs.fetch_add(1); });
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  BOOST_CHECK(f.delay() > 59min);
  BOOST_CHECK(f.cancel());
  BOOST_CHECK_EQUAL(token.use_count(), 1);
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(runs.load(), 0);
}

BOOST_AUTO_TEST_CASE(cancel_true_interrupts_running_periodic) {
  gate started;
  std::atomic<bool> saw_stop{false};
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_with_fixed_delay(0ms, 1ms, [&](std::stop_token st) {
    if (runs.fetch_add(1) + 1 < 2) return;
    started.open();
    const auto end = steady::now() + wait_limit;
    while (!st.stop_requested() && steady::now() < end) std::this_thread::sleep_for(1ms);
    saw_stop = st.stop_requested();
  });
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(f.cancel(true));
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  BOOST_CHECK(eventually([&] { return saw_stop.load(); }));
  pool.join();
  BOOST_CHECK_EQUAL(runs.load(), 2);
}

BOOST_AUTO_TEST_CASE(dropped_periodic_handle_keeps_running) {
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  {
    auto f = pool.schedule_with_fixed_delay(0ms, 1ms, [&] { runs.fetch_add(1); });
  }
  BOOST_CHECK(eventually([&] { return runs.load() >= 5; }));
}

BOOST_AUTO_TEST_CASE(jitter_offsets_runs_without_drift) {
  constexpr auto period = 20ms;
  constexpr auto max_offset = 10ms;  // jitter 0.5 × period
  run_log log;
  deadline_pool p(2);
  periodic_options o;
  o.jitter = 0.5;
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] { log.starts.push(steady::now()); }, o);
  const auto t_after = steady::now();
  std::this_thread::sleep_for(400ms);
  const auto count = log.starts.size();
  const auto t_read = steady::now();
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto deadlines = p.deadlines.snapshot();
  const auto starts = log.starts.snapshot();
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  BOOST_TEST_MESSAGE("jitter: " << count << " runs in " << ms(t_read - t_before) << " ms");
  // No drift: about 20 runs in 400 ms; never more than the ideal instants passed.
  BOOST_CHECK_GE(count, 14U);
  BOOST_CHECK_LE(count, static_cast<std::size_t>((t_read - t_before) / period) + 1);
  steady::duration min_off = steady::duration::max();
  steady::duration max_off = steady::duration::min();
  for (std::size_t k = 0; k < deadlines.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k << " offset " << ms(deadlines[k] - (t_before + period * static_cast<int>(k))) << " ms") {
      // Ideal instant k lies in [t_before, t_after] + k × period; the jittered
      // deadline is never before it and less than max_offset after it.
      BOOST_CHECK(deadlines[k] >= t_before + period * static_cast<int>(k));
      BOOST_CHECK(deadlines[k] < t_after + period * static_cast<int>(k) + max_offset);
      BOOST_CHECK(starts[k] >= deadlines[k]);
      if (k > 0) BOOST_CHECK(starts[k] >= starts[k - 1]);
    }
    const auto off = deadlines[k] - (t_before + period * static_cast<int>(k));
    min_off = std::min(min_off, off);
    max_off = std::max(max_off, off);
  }
  // The offsets really vary (uniform over 10 ms: a spread under 1 ms is astronomically unlikely).
  BOOST_CHECK(max_off - min_off > 1ms);
}

BOOST_AUTO_TEST_CASE(jitter_applies_to_fixed_delay) {
  deadline_pool p(1);
  run_log log;
  periodic_options o;
  o.jitter = 0.9;
  auto f = p.pool.schedule_with_fixed_delay(0ms, 5ms, [&] { log.ends.push(steady::now()); }, o);
  BOOST_REQUIRE(eventually([&] { return log.ends.size() >= 8; }));
  BOOST_CHECK(f.cancel());
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  const auto ends = log.ends.snapshot();
  BOOST_REQUIRE_GE(d.size(), 8U);
  bool some_offset = false;
  for (std::size_t k = 1; k < d.size(); ++k) {
    BOOST_CHECK(d[k] >= ends[k - 1] + 5ms);               // never before end + delay
    if (d[k] - ends[k - 1] > 5ms + 500us) some_offset = true;  // jitter observed at least once
  }
  BOOST_CHECK(some_offset);
}

BOOST_AUTO_TEST_CASE(leeway_moves_each_deadline_to_its_slot_end_without_drift) {
  constexpr auto period = 30ms;
  constexpr auto leeway = 10ms;
  run_log log;
  deadline_pool p(2);
  periodic_options o;
  o.leeway = leeway;
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] { log.starts.push(steady::now()); }, o);
  const auto t_after = steady::now();
  BOOST_REQUIRE(eventually([&] { return log.starts.size() >= 6; }));
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto deadlines = p.deadlines.snapshot();
  const auto starts = log.starts.snapshot();
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  for (std::size_t k = 0; k < deadlines.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) {
      // A slot end, at or after ideal instant k (in [t_before, t_after] + k
      // periods) and less than a leeway after it: no drift.
      BOOST_CHECK(deadlines[k].time_since_epoch() % leeway == steady::duration::zero());
      BOOST_CHECK(deadlines[k] >= t_before + period * static_cast<int>(k));
      BOOST_CHECK(deadlines[k] < t_after + period * static_cast<int>(k) + leeway);
      BOOST_CHECK(starts[k] >= deadlines[k]);
    }
  }
}

BOOST_AUTO_TEST_CASE(leeway_applies_to_the_first_deadline_and_fixed_delay) {
  scheduled_thread_pool pool(1);
  periodic_options o;
  o.leeway = 50ms;
  const auto t_before = steady::now();
  auto rate = pool.schedule_at_fixed_rate(1h, 2h, [] {}, o);
  auto delay = pool.schedule_with_fixed_delay(1h, 2h, [] {}, o);
  const auto t_after = steady::now();
  // shutdown_now() hands back both, with the deadlines they were queued for:
  // slot ends in [t + 1 h, t + 1 h + leeway).
  const auto pending = pool.shutdown_now();
  BOOST_REQUIRE_EQUAL(pending.size(), 2U);
  for (const auto& t : pending) {
    BOOST_CHECK(t.deadline().time_since_epoch() % 50ms == steady::duration::zero());
    BOOST_CHECK(t.deadline() >= t_before + 1h);
    BOOST_CHECK(t.deadline() < t_after + 1h + 50ms);
  }
}

BOOST_AUTO_TEST_CASE(invalid_leeway_throws) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  for (auto l : {std::chrono::nanoseconds(-1), std::chrono::nanoseconds(1s), std::chrono::nanoseconds(2s),
                 std::chrono::nanoseconds::min(), std::chrono::nanoseconds::max()}) {
    BOOST_TEST_CONTEXT("leeway " << l.count() << " ns") {
      periodic_options o;
      o.leeway = l;
      BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(1h, 1s, noop, o), std::invalid_argument);
      BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(1h, 1s, noop, o), std::invalid_argument);
    }
  }
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  // The bounds of the valid range are accepted.
  for (auto l : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(1s) - 1ns}) {
    periodic_options o;
    o.leeway = l;
    auto f = pool.schedule_at_fixed_rate(1h, 1s, noop, o);
    BOOST_CHECK(f.valid());
    BOOST_CHECK(f.cancel());
  }
}

BOOST_AUTO_TEST_CASE(invalid_periods_throw) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 0ms, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, -1ms, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::hours::min(), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::duration<double>(nan), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::duration<double>(1e-12), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 0ns, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, -5s, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, std::chrono::duration<double>(nan), noop), std::invalid_argument);
  // A NaN initial delay is rejected too.
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(std::chrono::duration<double>(nan), 1ms, noop), std::invalid_argument);
  // Empty callables.
  std::function<void()> empty;
  void (*null_fn)() = nullptr;
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, empty), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 1ms, null_fn), std::invalid_argument);
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(pool.task_count(), 0U);
}

BOOST_AUTO_TEST_CASE(invalid_jitter_throws) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  for (double j : {-0.1, 1.0, 1.5, -std::numeric_limits<double>::min(), std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()}) {
    BOOST_TEST_CONTEXT("jitter " << j) {
      periodic_options o;
      o.jitter = j;
      BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(1h, 1s, noop, o), std::invalid_argument);
      BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(1h, 1s, noop, o), std::invalid_argument);
    }
  }
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  // The bounds of the valid range are accepted.
  for (double j : {0.0, 0.999}) {
    periodic_options o;
    o.jitter = j;
    auto f = pool.schedule_at_fixed_rate(1h, 1s, noop, o);
    BOOST_CHECK(f.valid());
    BOOST_CHECK(f.cancel());
  }
}

BOOST_AUTO_TEST_CASE(huge_period_runs_once) {
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto rate = pool.schedule_at_fixed_rate(0ms, std::chrono::hours::max(), [&] { runs.fetch_add(1); });
  auto fixed = pool.schedule_with_fixed_delay(0ms, std::chrono::days::max(), [&] { runs.fetch_add(1); });
  BOOST_REQUIRE(eventually([&] { return runs.load() == 2 && pool.queued_count() == 2; }));
  // Re-armed for "never": still pending, not done.
  BOOST_CHECK(rate.delay() == steady::duration::max());
  BOOST_CHECK(fixed.delay() == steady::duration::max());
  BOOST_CHECK(!rate.done());
  BOOST_CHECK(!fixed.done());
  // Other work is not disturbed.
  auto g = pool.schedule(5ms, [] { return 1; });
  BOOST_REQUIRE(g.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK_EQUAL(runs.load(), 2);
}

BOOST_AUTO_TEST_CASE(initial_delay_respected_and_periodic_view) {
  recorder<chronopool::schedule_kind> kinds;
  recorder<steady::duration> periods;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.before_execute = [&](const chronopool::task_view& v) {
    kinds.push(v.kind());
    periods.push(v.period());
  };
  std::promise<steady::time_point> first_run;
  auto first = first_run.get_future();
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(o);
  const auto t0 = steady::now();
  auto f = pool.schedule_at_fixed_rate(std::chrono::duration<double, std::milli>(30.0), 7ms, [&] {
    if (runs.fetch_add(1) == 0) first_run.set_value(steady::now());
  });
  BOOST_REQUIRE(first.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK(first.get() - t0 >= 30ms);
  BOOST_CHECK(f.cancel());
  pool.join();
  for (auto k : kinds.snapshot()) BOOST_CHECK(k == chronopool::schedule_kind::fixed_rate);
  for (auto d : periods.snapshot()) BOOST_CHECK(d == steady::duration(7ms));
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic tasks that fall behind: each missed-tick policy, and the rule that
// an overdue tick fires at once (on a manual clock, at exact instants).
#include "periodic_test_support.hpp"

#include <chronopool/pool_manual_clock.hpp>

BOOST_AUTO_TEST_SUITE(periodic)

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

/// The example on a manual clock: period 100 ms, the first run
/// lasts 250 ms (a stall of the virtual time). The virtual start of each
/// run in the first 400 ms, from the first deadline. The first deadline is
/// 1 ms ahead, so that no run (and no stall) can happen before advance()
/// starts: a run due at once could start on the pool's thread first, and
/// advance() would then count its 400 ms from the end of the stall.
std::vector<std::chrono::nanoseconds> missed_ticks_long_first_run_starts(missed_tick_policy policy) {
  scheduled_thread_pool_options po;
  po.core_pool_size = 1;
  po.use_manual_clock = true;
  scheduled_thread_pool pool(po);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const auto first = clock.now() + 1ms;
  std::vector<std::chrono::nanoseconds> starts;  // written by the one pool thread, read after advance()
  periodic_options o;
  o.missed_ticks = policy;
  auto f = pool.schedule_at_fixed_rate(1ms, 100ms, [&] {
    starts.push_back(pool.now() - first);
    if (starts.size() == 1) clock.stall(250ms);
  }, o);
  clock.advance(401ms);
  BOOST_CHECK(f.cancel());
  pool.join();
  return starts;
}

}  // namespace

using missed_ticks_starts = std::vector<std::chrono::nanoseconds>;

BOOST_AUTO_TEST_CASE(overdue_tick_fires_at_once_then_delay_restarts_the_period) {
  // The tick due at 100 is not dropped: it runs at 250, when run 0 ends;
  // the next is a period after that start.
  BOOST_TEST(missed_ticks_long_first_run_starts(missed_tick_policy::delay) == (missed_ticks_starts{0ms, 250ms, 350ms}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(overdue_tick_fires_at_once_then_skip_moves_to_the_grid) {
  // The tick due at 100 runs at 250; then the grid's first instant after it.
  BOOST_TEST(missed_ticks_long_first_run_starts(missed_tick_policy::skip) ==
                 (missed_ticks_starts{0ms, 250ms, 300ms, 400ms}),
             boost::test_tools::per_element());
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

BOOST_AUTO_TEST_SUITE_END()

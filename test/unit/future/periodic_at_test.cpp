// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic pool tasks that start at an absolute instant: the first deadline
// is exactly the given time point and the ideal schedule first + k * period,
// read from task_view::deadline() in before_execute. A past first instant
// runs at once and the missed-tick policy applies to that grid. Periods of
// an hour make the number of runs in a short test exact.
#include "future_test_util.hpp"
#include "periodic_test_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::missed_tick_policy;
using chronopool::periodic_options;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;

namespace {

periodic_options with_policy(missed_tick_policy p) {
  periodic_options o;
  o.missed_ticks = p;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(periodic_at_an_instant)

BOOST_AUTO_TEST_CASE(fixed_rate_deadlines_are_first_plus_k_periods) {
  constexpr auto period = 20ms;
  deadline_pool p{1};
  const auto first = steady::now() + 30ms;
  std::atomic<int> runs{0};
  auto f = p.pool.schedule_at_fixed_rate(first, period, [&] { ++runs; });
  // Wait for a few runs; a loaded machine may be slow, never early.
  for (int i = 0; i < 500 && runs.load() < 4; ++i) std::this_thread::sleep_for(10ms);
  f.cancel();
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  BOOST_REQUIRE_GE(d.size(), 4u);
  for (std::size_t k = 0; k < d.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) { BOOST_CHECK(d[k] == first + static_cast<int>(k) * period); }
  }
}

BOOST_AUTO_TEST_CASE(a_past_first_instant_runs_at_once_then_bursts_on_its_grid) {
  // Ideal instants first, first + 1 h and first + 2 h have passed; the next,
  // first + 3 h, is half an hour away. burst runs the three at once.
  deadline_pool p{1};
  const auto first = steady::now() - 150min;
  std::atomic<int> runs{0};
  auto f = p.pool.schedule_at_fixed_rate(first, 1h, [&] { ++runs; });
  for (int i = 0; i < 500 && runs.load() < 3; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);  // a fourth run, were it wrongly due, would show
  f.cancel();
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  BOOST_REQUIRE_EQUAL(d.size(), 3u);
  for (std::size_t k = 0; k < d.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) { BOOST_CHECK(d[k] == first + static_cast<int>(k) * 1h); }
  }
}

BOOST_AUTO_TEST_CASE(a_past_first_instant_with_skip_runs_once_and_moves_to_the_grid) {
  deadline_pool p{1};
  const auto first = steady::now() - 150min;
  std::atomic<int> runs{0};
  auto f = p.pool.schedule_at_fixed_rate(first, 1h, [&] { ++runs; }, with_policy(missed_tick_policy::skip));
  for (int i = 0; i < 500 && runs.load() < 1; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);
  f.cancel();
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  BOOST_REQUIRE_EQUAL(d.size(), 1u);
  BOOST_CHECK(d[0] == first);
}

BOOST_AUTO_TEST_CASE(fixed_delay_first_deadline_is_the_instant) {
  deadline_pool p{1};
  const auto first = steady::now() + 20ms;
  std::atomic<int> runs{0};
  auto f = p.pool.schedule_with_fixed_delay(first, 1h, [&] { ++runs; });
  for (int i = 0; i < 500 && runs.load() < 1; ++i) std::this_thread::sleep_for(10ms);
  f.cancel();
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  BOOST_REQUIRE_EQUAL(d.size(), 1u);
  BOOST_CHECK(d[0] == first);
  BOOST_CHECK(f.is_periodic());
}

BOOST_AUTO_TEST_CASE(any_duration_type_of_the_steady_clock_is_kept_exactly) {
  deadline_pool p{1};
  const auto first = std::chrono::time_point_cast<std::chrono::milliseconds>(steady::now()) + 20ms;
  std::atomic<int> runs{0};
  auto f = p.pool.schedule_at_fixed_rate(first, 1h, [&] { ++runs; });
  for (int i = 0; i < 500 && runs.load() < 1; ++i) std::this_thread::sleep_for(10ms);
  f.cancel();
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  BOOST_REQUIRE_EQUAL(d.size(), 1u);
  BOOST_CHECK(d[0] == first);
}

BOOST_AUTO_TEST_SUITE_END()

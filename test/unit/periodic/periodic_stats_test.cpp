// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// periodic_handle::stats(): each run's lateness (start − its wait's
// deadline) and run time, exact on a manual clock (a handler that stalls the
// clock takes exactly that long, and makes the next run late by what it
// overran), on a thread pool's executor too, and the one-line text.
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_stats.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

BOOST_AUTO_TEST_SUITE(periodic_stats_suite)

BOOST_AUTO_TEST_CASE(an_empty_handle_has_empty_stats) {
  const chronopool::periodic_stats s = chronopool::periodic_handle().stats();
  BOOST_TEST(s.runs == 0u);
  BOOST_TEST(s.lateness_histogram.count() == 0u);
  BOOST_TEST(s.run_time_histogram.count() == 0u);
}

// Runs of 2 ms every 10 ms on a manual clock: each starts at its deadline
// (lateness exactly 0) and takes exactly the 2 ms it stalls the clock.
BOOST_AUTO_TEST_CASE(on_time_runs_record_zero_lateness_and_their_exact_run_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  auto handle = chronopool::schedule_at_fixed_rate(io.get_executor(), 10ms, 10ms, [&] { clock.stall(2ms); });
  clock.advance(105ms);  // runs at 10, 20, ..., 100 ms
  const chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == 10u);
  BOOST_TEST(s.lateness_histogram.count() == 10u);
  BOOST_TEST((s.lateness_histogram.max() == nanoseconds(0)));
  BOOST_TEST(s.run_time_histogram.count() == 10u);
  BOOST_TEST((s.run_time_histogram.min() == nanoseconds(2ms)));
  BOOST_TEST((s.run_time_histogram.max() == nanoseconds(2ms)));
  BOOST_TEST((s.run_time_histogram.sum() == nanoseconds(20ms)));
  handle.cancel();
}

// The first run overruns its 10 ms period by 5 ms: the second starts 5 ms
// after its deadline, the rest are back on the grid.
BOOST_AUTO_TEST_CASE(an_overrun_makes_the_next_run_late_by_exactly_the_overrun) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  int run = 0;
  auto handle = chronopool::schedule_at_fixed_rate(io.get_executor(), 10ms, 10ms, [&] {
    if (++run == 1) clock.stall(15ms);
  });
  clock.advance(45ms);  // runs at 10 (until 25), 25 (due 20), 30, 40 ms
  const chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == 4u);
  BOOST_TEST((s.lateness_histogram.min() == nanoseconds(0)));
  BOOST_TEST((s.lateness_histogram.max() == nanoseconds(5ms)));
  BOOST_TEST((s.lateness_histogram.sum() == nanoseconds(5ms)));
  BOOST_TEST((s.run_time_histogram.max() == nanoseconds(15ms)));
  BOOST_TEST((s.run_time_histogram.sum() == nanoseconds(15ms)));
  handle.cancel();
}

// A fixed-delay schedule measures against the deadline it armed after each
// run: the stall inside a run does not make the next one late.
BOOST_AUTO_TEST_CASE(fixed_delay_runs_are_on_time_after_long_runs) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  auto handle = chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 10ms, [&] { clock.stall(7ms); });
  clock.advance(50ms);  // runs at 0, 17, 34 ms (each 7 ms, then 10 ms of delay)
  const chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == 3u);
  BOOST_TEST((s.lateness_histogram.max() == nanoseconds(0)));
  BOOST_TEST((s.run_time_histogram.sum() == nanoseconds(21ms)));
  handle.cancel();
}

// On a multi-threaded executor successive runs may be on different threads:
// each is recorded once, read while the schedule goes on.
BOOST_AUTO_TEST_CASE(runs_on_a_thread_pool_are_each_recorded) {
  std::atomic<int> runs{0};
  asio::thread_pool threads(2);
  auto handle = chronopool::schedule_at_fixed_rate(threads.get_executor(), 0ms, 1ms, [&] { ++runs; });
  while (runs.load() < 20) std::this_thread::sleep_for(1ms);
  const chronopool::periodic_stats during = handle.stats();
  BOOST_TEST(during.runs >= 19u);  // the 20th may still be ending
  handle.cancel();
  threads.join();
  const chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == static_cast<std::uint64_t>(runs.load()));
  BOOST_TEST(s.lateness_histogram.count() == s.runs);
  BOOST_TEST(s.run_time_histogram.count() == s.runs);
  BOOST_TEST(s.lateness_histogram.min().count() >= 0);
  BOOST_TEST((s.lateness_histogram.quantile(0.5) <= s.lateness_histogram.max()));
}

BOOST_AUTO_TEST_CASE(stats_format_on_one_line) {
  chronopool::periodic_stats s;
  s.runs = 2;
  s.lateness_histogram.record(12us);
  s.lateness_histogram.record(80us);
  s.run_time_histogram.record(2ms);
  s.run_time_histogram.record(3ms);
  const std::string text = chronopool::to_string(s);
  BOOST_TEST(text == "runs=2 lateness(n=2) p50=12us p99=80us max=80us run(n=2) p50=2ms p99=3ms max=3ms");
  BOOST_TEST(fmt::format("{}", s) == text);
}

BOOST_AUTO_TEST_SUITE_END()

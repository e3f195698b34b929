// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic handlers on executors started at an absolute instant: the first
// tick comes no earlier than the instant, and the schedule is first + k *
// period. Periods of an hour with a past first instant make the number of
// ticks exact: only the grid's past instants can have run.
#include <chronopool/periodic.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

/// Runs @p io for @p d, then returns.
void run_for(asio::io_context& io, steady::duration d) {
  io.run_for(d);
  io.restart();
}

chronopool::periodic_options with_policy(chronopool::missed_tick_policy p) {
  chronopool::periodic_options o;
  o.missed_ticks = p;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(periodic_handlers_at_an_instant)

BOOST_AUTO_TEST_CASE(fixed_rate_ticks_no_earlier_than_first_plus_k_periods) {
  asio::io_context io;
  std::vector<steady::time_point> starts;
  const auto first = steady::now() + 30ms;
  chronopool::periodic_handle h;
  h = chronopool::schedule_at_fixed_rate(io.get_executor(), first, 20ms, [&] {
    starts.push_back(steady::now());
    if (starts.size() == 4) h.cancel();
  });
  io.run();  // returns once cancelled
  BOOST_REQUIRE_EQUAL(starts.size(), 4u);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    BOOST_TEST_CONTEXT("tick " << k) { BOOST_CHECK(starts[k] >= first + static_cast<int>(k) * 20ms); }
  }
}

BOOST_AUTO_TEST_CASE(a_past_first_instant_runs_at_once_then_bursts_on_its_grid) {
  // first, first + 1 h and first + 2 h have passed; first + 3 h is half an
  // hour away: burst runs exactly three ticks now.
  asio::io_context io;
  int ticks = 0;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), steady::now() - 150min, 1h, [&] { ++ticks; });
  run_for(io, 1s);
  BOOST_TEST(ticks == 3);
  BOOST_TEST(h.active());
  h.cancel();
  io.run();
}

BOOST_AUTO_TEST_CASE(a_past_first_instant_with_skip_runs_once) {
  asio::io_context io;
  int ticks = 0;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), steady::now() - 150min, 1h, [&] { ++ticks; },
                                              with_policy(chronopool::missed_tick_policy::skip));
  run_for(io, 1s);
  BOOST_TEST(ticks == 1);
  h.cancel();
  io.run();
}

BOOST_AUTO_TEST_CASE(fixed_delay_first_tick_at_the_instant) {
  asio::io_context io;
  std::vector<steady::time_point> starts;
  const auto first = steady::now() + 30ms;
  auto h = chronopool::schedule_with_fixed_delay(io.get_executor(), first, 1h,
                                                 [&] { starts.push_back(steady::now()); });
  run_for(io, 1s);
  BOOST_REQUIRE_EQUAL(starts.size(), 1u);
  BOOST_CHECK(starts[0] >= first);
  h.cancel();
  io.run();
}

BOOST_AUTO_TEST_SUITE_END()

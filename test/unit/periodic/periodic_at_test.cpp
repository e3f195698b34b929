// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic handlers on executors started at an absolute instant: the first
// tick comes no earlier than the instant, and the schedule is first + k *
// period. Periods of an hour with a past first instant make the number of
// ticks exact: only the grid's past instants can have run. The first case
// runs on the real clock, the others on a manual clock, at exact instants.
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

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

// The cases below run on a manual clock: the ticks of an hour-long grid
// come at exact virtual instants (recorded from the start), and "nothing
// more runs" is an hour of virtual time rather than a second of real time.
using ticks_seen = std::vector<std::chrono::nanoseconds>;

BOOST_AUTO_TEST_CASE(a_past_first_instant_runs_at_once_then_bursts_on_its_grid) {
  // first, first + 1 h and first + 2 h have passed; first + 3 h is half an
  // hour away: burst runs exactly three ticks now, the fourth at first + 3 h.
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  ticks_seen seen;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), start - 150min, 1h,
                                              [&] { seen.push_back(clock.now() - start); });
  clock.advance(30min - 1ns);
  BOOST_TEST(seen == (ticks_seen{0ns, 0ns, 0ns}), boost::test_tools::per_element());
  BOOST_TEST(h.active());
  clock.advance(1ns);
  BOOST_TEST(seen == (ticks_seen{0ns, 0ns, 0ns, 30min}), boost::test_tools::per_element());
  h.cancel();
  clock.run_until_idle();
}

BOOST_AUTO_TEST_CASE(a_past_first_instant_with_skip_runs_once) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  ticks_seen seen;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), start - 150min, 1h,
                                              [&] { seen.push_back(clock.now() - start); },
                                              with_policy(chronopool::missed_tick_policy::skip));
  clock.advance(30min - 1ns);
  BOOST_TEST(seen == (ticks_seen{0ns}), boost::test_tools::per_element());
  clock.advance(1ns);  // back on the grid: first + 3 h
  BOOST_TEST(seen == (ticks_seen{0ns, 30min}), boost::test_tools::per_element());
  h.cancel();
  clock.run_until_idle();
}

BOOST_AUTO_TEST_CASE(fixed_delay_first_tick_at_the_instant) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  ticks_seen seen;
  auto h = chronopool::schedule_with_fixed_delay(io.get_executor(), start + 30ms, 1h, [&] {
    seen.push_back(clock.now() - start);
    clock.stall(5ms);  // the handler takes 5 ms: the delay counts from its end
  });
  clock.advance(30ms + 1h);
  BOOST_TEST(seen == (ticks_seen{30ms}), boost::test_tools::per_element());
  clock.advance(5ms);
  BOOST_TEST(seen == (ticks_seen{30ms, 30ms + 5ms + 1h}), boost::test_tools::per_element());
  h.cancel();
  clock.run_until_idle();
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// periodic_timer::reset() and reset_at(): the schedule is re-based on the
// new instant, and a tick wait pending across a reset does not move it.
#include <chronopool/periodic_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

BOOST_AUTO_TEST_SUITE(periodic_timer_reset)

BOOST_AUTO_TEST_CASE(reset_moves_the_next_tick_one_period_from_now) {
  asio::io_context io;
  chronopool::periodic_timer t(io, 1h, chronopool::missed_tick_policy::burst, steady::now());
  const auto before = steady::now();
  t.reset();
  BOOST_TEST((t.next_tick() >= before + 1h));
  BOOST_TEST((t.next_tick() <= steady::now() + 1h));
}

BOOST_AUTO_TEST_CASE(reset_at_rebases_the_grid) {
  asio::io_context io;
  chronopool::periodic_timer t(io, 1h);
  const auto at = steady::now();
  t.reset_at(at);
  BOOST_TEST((t.next_tick() == at));
  bool ticked = false;
  t.async_tick([&](sys_ns::error_code ec) { ticked = !ec; });
  io.run_for(5s);
  BOOST_TEST(ticked);
  BOOST_TEST((t.next_tick() == at + 1h));  // the grid follows the new instant
}

BOOST_AUTO_TEST_CASE(a_tick_pending_across_a_reset_keeps_the_new_schedule) {
  asio::io_context io;
  chronopool::periodic_timer t(io, 1h, chronopool::missed_tick_policy::burst, steady::now() + 10ms);
  bool ticked = false;
  t.async_tick([&](sys_ns::error_code ec) { ticked = !ec; });
  const auto at = steady::now() + 2h;
  t.reset_at(at);  // the pending wait keeps its instant (10 ms)
  io.run_for(5s);
  BOOST_TEST(ticked);
  BOOST_TEST((t.next_tick() == at));  // not advanced by the old wait
}

BOOST_AUTO_TEST_SUITE_END()

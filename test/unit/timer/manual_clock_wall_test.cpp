// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// System timers and a manual clock: a blocking system_timer::wait() on a
// manual context waits on virtual time (an advance or a step of the clock
// from another thread ends it, no real time does), and a manual clock
// cannot be attached once a system timer of the context exists.
#include <chronopool/manual_clock.hpp>
#include <chronopool/system_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;

namespace {

constexpr auto wall_wait_limit = std::chrono::seconds(10);

}  // namespace

BOOST_AUTO_TEST_SUITE(manual_clock_wall_suite)

BOOST_AUTO_TEST_CASE(a_blocking_system_timer_wait_runs_on_virtual_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  // An hour ahead by the virtual wall clock: the real one would make it wait
  // an hour.
  chronopool::system_timer timer(io, clock.system_now() + 1h);
  auto stepped = std::async(std::launch::async, [&] {
    timer.wait();
    return clock.system_now();
  });
  // A step of the virtual wall clock onto the expiry ends the wait.
  clock.step_system_time(1h);
  BOOST_REQUIRE(stepped.wait_for(wall_wait_limit) == std::future_status::ready);
  BOOST_TEST((stepped.get() >= timer.expiry()));

  // So does an advance of the virtual time.
  timer.expires_after(10min);
  auto advanced = std::async(std::launch::async, [&] {
    timer.wait();
    return clock.system_now();
  });
  clock.advance(10min);
  BOOST_REQUIRE(advanced.wait_for(wall_wait_limit) == std::future_status::ready);
  BOOST_TEST((advanced.get() == timer.expiry()));
}

BOOST_AUTO_TEST_CASE(a_manual_clock_is_refused_once_a_system_timer_exists) {
  asio::io_context io;
  { chronopool::system_timer early(io); }
  BOOST_CHECK_EXCEPTION(chronopool::use_manual_clock(io), std::logic_error, [](const std::logic_error& e) {
    const std::string w = e.what();
    return w.find("use_manual_clock") != std::string::npos && w.find("before the first timer") != std::string::npos;
  });
  BOOST_TEST(!chronopool::has_manual_clock(io));
}

BOOST_AUTO_TEST_SUITE_END()

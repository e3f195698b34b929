// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One scenario (a periodic timer, timers, sleeps, a timeout) run on the real
// clock and on a manual clock gives the same completions in the same order;
// on the manual clock each at its exact deadline. And system_timer on a
// manual clock: its expiry is read on the virtual system clock, and wall
// steps (set_system_time, step_system_time) complete or move its waits.
#include <chronopool/async_sleep.hpp>
#include <chronopool/cancel_after.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic_timer.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/system_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;

namespace {

struct entry {
  std::string what;
  std::chrono::nanoseconds ideal;  // its deadline, from the start
  std::chrono::nanoseconds at;     // when it ran, from the start
};

/// The scenario's unit of time: distinct deadlines are at least 2 units
/// apart, so a real run in which every completion is late by less than that
/// keeps the deadline order. A run later than that (a loaded machine) may
/// deliver two overdue waits in either order, so it proves nothing about
/// order and the real run is repeated.
constexpr std::chrono::nanoseconds u = 4ms;
constexpr std::chrono::nanoseconds order_keeping_lateness = 2 * u;
constexpr int real_attempts = 5;

bool keeps_order(const std::vector<entry>& log) {
  for (const auto& e : log)
    if (e.at - e.ideal >= order_keeping_lateness) return false;
  return true;
}

/// The scenario, on @p io whose now() is @p now: every completion with its
/// ideal instant.
std::vector<entry> scenario(asio::io_context& io, const std::function<steady::time_point()>& now,
                            const std::function<void()>& run) {
  const steady::time_point start = now();
  std::vector<entry> log;
  auto add = [&](std::string what, std::chrono::nanoseconds ideal) {
    log.push_back({std::move(what), ideal, now() - start});
  };
  chronopool::periodic_timer ticker(io, 6 * u);
  int ticks = 0;
  std::function<void(error_code)> on_tick = [&](error_code ec) {
    if (ec) return;
    ++ticks;
    add("tick " + std::to_string(ticks), 6 * u * ticks);
    if (ticks < 5) ticker.async_tick(on_tick);
  };
  ticker.async_tick(on_tick);
  chronopool::steady_timer timer(io, 14 * u);
  timer.async_wait([&](error_code ec) { add("timer " + ec.message(), 14 * u); });
  chronopool::steady_timer cancelled(io, 20 * u);
  cancelled.async_wait([&](error_code ec) { add("cancelled " + ec.message(), 16 * u); });
  chronopool::steady_timer canceller(io, 16 * u);
  canceller.async_wait([&](error_code) {
    add("canceller", 16 * u);
    cancelled.cancel();
  });
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(3 * u);
    add("sleep", 3 * u);
    co_await chronopool::sleep_until(start + 22 * u);
    add("sleep_until", 22 * u);
    error_code ec;
    co_await chronopool::async_sleep(co_await asio::this_coro::executor, 1h,
                                     chronopool::cancel_after(10 * u, asio::redirect_error(asio::use_awaitable, ec)));
    add("timeout " + ec.message(), 32 * u);
  }, asio::detached);
  run();
  return log;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(manual_clock_trace)

BOOST_AUTO_TEST_CASE(the_real_and_the_manual_clock_give_the_same_trace) {
  std::vector<entry> real;
  bool ordered = false;
  for (int attempt = 0; attempt < real_attempts && !ordered; ++attempt) {
    asio::io_context io;
    real = scenario(io, [] { return steady::now(); }, [&] { io.run(); });
    ordered = keeps_order(real);
  }
  std::vector<entry> manual;
  {
    asio::io_context io;
    chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
    manual = scenario(io, [&] { return clock.now(); }, [&] { clock.run_until_idle(); });
  }
  BOOST_REQUIRE_EQUAL(real.size(), 11u);
  BOOST_REQUIRE_EQUAL(manual.size(), real.size());
  if (!ordered) {
    // Every real run was too late to keep the order: compare what completed.
    BOOST_TEST_MESSAGE("the real runs were each late by 2 units or more: order not compared");
    auto names = [](std::vector<entry> log) {
      std::vector<std::string> n;
      for (auto& e : log) n.push_back(std::move(e.what));
      std::sort(n.begin(), n.end());
      return n;
    };
    BOOST_TEST(names(manual) == names(real), boost::test_tools::per_element());
  }
  for (std::size_t i = 0; i < real.size(); ++i) {
    BOOST_TEST_CONTEXT("completion " << i << ": " << manual[i].what) {
      if (ordered) BOOST_TEST(manual[i].what == real[i].what);
      BOOST_TEST(manual[i].at.count() == manual[i].ideal.count());  // exact on the manual clock
      BOOST_TEST(real[i].at.count() >= real[i].ideal.count());      // never early on the real one
    }
  }
  // Deadline order on both.
  for (std::size_t i = 1; i < manual.size(); ++i) BOOST_TEST(manual[i - 1].ideal <= manual[i].ideal);
}

BOOST_AUTO_TEST_CASE(system_timer_reads_the_virtual_system_clock) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const auto wall_start = clock.system_now();
  chronopool::system_timer t(io, 5s);
  BOOST_TEST((t.expiry() == wall_start + 5s));
  bool fired = false;
  t.async_wait([&](error_code ec) { fired = !ec; });
  clock.advance(4999ms);
  BOOST_TEST(!fired);
  clock.advance(1ms);
  BOOST_TEST(fired);
  BOOST_TEST((clock.system_now() == wall_start + 5s));
}

BOOST_AUTO_TEST_CASE(a_wall_step_forward_completes_passed_waits_and_a_step_back_delays_them) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point steady_start = clock.now();
  std::vector<std::string> done;
  chronopool::system_timer in_1h(io), in_3h(io), in_10min(io);
  in_1h.expires_at(clock.system_now() + 1h);
  in_3h.expires_at(clock.system_now() + 3h);
  in_10min.expires_at(clock.system_now() + 10min);
  in_1h.async_wait([&](error_code ec) { done.push_back("1h " + ec.message()); });
  in_3h.async_wait([&](error_code ec) { done.push_back("3h " + ec.message()); });

  clock.step_system_time(2h);  // the wall clock jumps: 1h has passed, 3h is an hour away
  BOOST_TEST(done == std::vector<std::string>{"1h Success"}, boost::test_tools::per_element());
  BOOST_TEST((clock.now() == steady_start));  // steady time did not move
  clock.advance(59min);
  BOOST_TEST(done.size() == 1u);
  clock.advance(1min);
  BOOST_TEST(done.size() == 2u);

  // A step back: the 10 min wait (its expiry now 2 h 50 min behind the wall
  // clock... set it again relative to the new wall time) waits longer.
  in_10min.expires_at(clock.system_now() + 10min);
  in_10min.async_wait([&](error_code ec) { done.push_back("10min " + ec.message()); });
  clock.set_system_time(clock.system_now() - 1h);
  clock.advance(10min);
  BOOST_TEST(done.size() == 2u);
  clock.advance(1h);
  BOOST_REQUIRE_EQUAL(done.size(), 3u);
  BOOST_TEST(done[2] == "10min Success");
}

BOOST_AUTO_TEST_SUITE_END()

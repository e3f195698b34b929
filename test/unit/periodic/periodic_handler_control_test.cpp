// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Control of periodic handlers on executors through periodic_handle: pause,
// resume, reschedule, reschedule_next and trigger_now, also from another
// thread while the handler runs every millisecond on a thread pool: runs
// never overlap and a pause that took effect holds.
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

struct run_counter {
  std::atomic<int> runs{0};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  void run() {
    if (inside.fetch_add(1) != 0) overlapped = true;
    runs.fetch_add(1);
    std::this_thread::yield();
    inside.fetch_sub(1);
  }
};

template <class Pred>
bool eventually(Pred pred, steady::duration limit = 5s) {
  const auto end = steady::now() + limit;
  while (!pred()) {
    if (steady::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(periodic_handler_control)

BOOST_AUTO_TEST_CASE(pause_resume_on_an_io_context) {
  asio::io_context io;
  int runs = 0;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1h, [&] { ++runs; });
  io.run_for(50ms);
  io.restart();
  BOOST_TEST(runs == 1);
  BOOST_TEST(h.pause());
  BOOST_TEST(!h.pause());
  BOOST_TEST(h.paused());
  BOOST_TEST(!h.trigger_now());  // paused
  io.run_for(20ms);  // no wait pending: returns at once
  io.restart();
  BOOST_TEST(runs == 1);
  BOOST_TEST(h.resume());
  BOOST_TEST(!h.resume());
  BOOST_TEST(h.trigger_now());
  BOOST_TEST(!h.trigger_now());  // one extra run pending already
  io.run_for(50ms);
  io.restart();
  BOOST_TEST(runs == 2);  // the extra run; the grid (1 h) is kept
  BOOST_TEST(h.reschedule_next(steady::now()));
  io.run_for(50ms);
  io.restart();
  BOOST_TEST(runs == 3);
  BOOST_TEST(h.cancel());
  BOOST_TEST(!h.pause());
  BOOST_TEST(!h.resume());
  BOOST_TEST(!h.trigger_now());
  BOOST_TEST(!h.reschedule(1s));
}

BOOST_AUTO_TEST_CASE(reschedule_changes_the_period) {
  asio::io_context io;
  int runs = 0;
  auto h = chronopool::schedule_with_fixed_delay(io.get_executor(), 1h, 1h, [&] { ++runs; });
  BOOST_TEST(h.reschedule(2ms));
  io.run_for(100ms);
  io.restart();
  BOOST_TEST(runs >= 5);
  BOOST_CHECK_THROW(h.reschedule(0ms), std::invalid_argument);
  BOOST_CHECK_THROW(h.reschedule(-1s), std::invalid_argument);
  h.cancel();
  chronopool::periodic_handle none;
  BOOST_TEST(!none.pause());
  BOOST_TEST(!none.reschedule(1s));
}

BOOST_AUTO_TEST_CASE(controls_racing_runs_never_overlap) {
  run_counter c;
  asio::thread_pool tp(3);  // after the counter its handlers use: joined first
  auto h = chronopool::schedule_at_fixed_rate(tp.get_executor(), 0ms, 1ms, [&] { c.run(); });
  const auto end = steady::now() + 300ms;
  int i = 0;
  while (steady::now() < end) {
    switch (i++ % 6) {
      case 0: h.pause(); break;
      case 1: h.resume(); break;
      case 2: h.reschedule(1ms); break;
      case 3: h.trigger_now(); break;
      case 4: h.reschedule_next(steady::now()); break;
      default: std::this_thread::sleep_for(100us); break;
    }
  }
  h.resume();
  const int resumed = c.runs.load();
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= resumed + 3; }));
  BOOST_TEST(h.pause());
  BOOST_REQUIRE(eventually([&] { return h.paused(); }));
  std::this_thread::sleep_for(5ms);  // a stale completion already dispatched runs nothing
  const int paused = c.runs.load();
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() == paused);
  BOOST_TEST(h.cancel());
  tp.join();
  BOOST_TEST(!c.overlapped.load());
}

BOOST_AUTO_TEST_CASE(controls_on_a_pools_executor) {
  run_counter c;
  chronopool::scheduled_thread_pool pool(2);
  auto h = chronopool::schedule_at_fixed_rate(pool.get_executor(), 0ms, 1ms, [&] { c.run(); });
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= 3; }));
  for (int i = 0; i < 200; ++i) {
    h.pause();
    h.trigger_now();
    h.resume();
    h.reschedule(1ms);
  }
  BOOST_TEST(h.pause());
  BOOST_REQUIRE(eventually([&] { return h.paused(); }));
  std::this_thread::sleep_for(5ms);
  const int paused = c.runs.load();
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(c.runs.load() == paused);
  BOOST_TEST(h.resume());
  BOOST_REQUIRE(eventually([&] { return c.runs.load() >= paused + 3; }));
  BOOST_TEST(h.cancel());
  BOOST_TEST(!c.overlapped.load());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(periodic_handler_end_conditions)

BOOST_AUTO_TEST_CASE(max_runs_ends_the_schedule) {
  asio::io_context io;
  int runs = 0;
  chronopool::periodic_options o;
  o.max_runs = 4;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, [&] { ++runs; }, o);
  io.run_for(2s);  // returns once the schedule holds no wait
  BOOST_TEST(runs == 4);
  BOOST_TEST(!h.active());
  BOOST_TEST(!h.error());
}

BOOST_AUTO_TEST_CASE(until_ends_the_schedule) {
  // On a manual clock a handler reads the time its run started (the clock
  // stands still while it runs): with a 1 ms delay from 0, runs start at 0,
  // 1, ..., 29 ms and none at or after until (30). On the real clock a run
  // that started just before until may read a later time itself.
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  int runs = 0;
  bool late = false;
  chronopool::periodic_options o;
  o.until = clock.now() + 30ms;
  auto h = chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 1ms, [&] {
    if (clock.now() >= *o.until) late = true;
    ++runs;
  }, o);
  clock.run_until_idle();  // returns once the schedule holds no wait
  BOOST_TEST(runs == 30);
  BOOST_TEST(!late);
  BOOST_TEST(!h.active());
}

BOOST_AUTO_TEST_CASE(end_conditions_are_checked) {
  asio::io_context io;
  chronopool::periodic_options zero;
  zero.max_runs = 0;
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, [] {}, zero), std::invalid_argument);
  chronopool::periodic_options early;
  early.until = steady::now();
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 1h, 1ms, [] {}, early), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Auto-advance of an io_context's manual clock without a driver (tokio's
// rule): a plain io.run() jumps the virtual time to the next deadline when
// its thread has nothing ready, never while a handler runs or is posted,
// exactly to each deadline, the same way every run; poll() and a context
// with auto_advance(false) never jump; bad input is refused.
#include <chronopool/async_sleep.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;

namespace manual_auto_io {

using steady = std::chrono::steady_clock;

/// What completed, and when by the manual clock (relative to the attach).
struct step {
  std::string what;
  std::chrono::nanoseconds at;
  bool operator==(const step&) const = default;
};

std::ostream& operator<<(std::ostream& os, const step& s) { return os << s.what << "@" << s.at.count() << "ns"; }

/// One thread's scenario under a plain io.run(): sleeps and timers at
/// mixed and equal deadlines, and a chain of posted handlers between them.
std::vector<step> run_mixed_scenario() {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  std::vector<step> steps;
  const auto note = [&](std::string what) { steps.push_back({std::move(what), clock.now() - start}); };
  chronopool::steady_timer a(io, 3s), b(io, 1s), c(io, 3s), d(io, 2min);
  a.async_wait([&](error_code) { note("a"); });
  b.async_wait([&](error_code) {
    note("b");
    asio::post(io, [&] {
      note("b-posted");
      c.expires_after(1s);  // now 2 s: before a's 3 s
      c.async_wait([&](error_code) { note("c"); });
    });
  });
  d.async_wait([&](error_code) { note("d"); });
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(3s);  // after a: FIFO at 3 s
    note("sleep");
    co_await chronopool::sleep_for(1h);
    note("sleep-1h");
  }, asio::detached);
  io.run();
  return steps;
}

}  // namespace manual_auto_io

BOOST_AUTO_TEST_SUITE(manual_clock_auto_suite)

using manual_auto_io::steady;

BOOST_AUTO_TEST_CASE(io_run_returns_at_once_from_an_hour_long_sleep) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  BOOST_TEST(clock.auto_advance());  // on by default, as tokio's paused clock
  const steady::time_point start = clock.now();
  std::chrono::nanoseconds woke_at{-1};
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(1h);
    woke_at = clock.now() - start;
  }, asio::detached);
  const steady::time_point real_start = steady::now();
  io.run();  // no advance(), no run_until_idle()
  const steady::duration real = steady::now() - real_start;
  BOOST_TEST((woke_at == 1h));
  BOOST_TEST((clock.now() - start == 1h));  // exactly: the jump went to the deadline, not past it
  BOOST_TEST(clock.auto_advances() == 1u);
  // Far below the hour slept (a bound a loaded machine cannot miss).
  BOOST_TEST((real < 1min), "an hour of virtual sleep took " << real.count() << " ns of real time");
}

BOOST_AUTO_TEST_CASE(a_30s_steady_timer_wait_completes_under_io_run) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer t(io, 30s);
  std::chrono::nanoseconds fired_at{-1};
  error_code result = asio::error::would_block;
  t.async_wait([&](error_code ec) {
    result = ec;
    fired_at = clock.now() - start;
  });
  io.run();
  BOOST_TEST(!result);
  BOOST_TEST((fired_at == 30s));
}

BOOST_AUTO_TEST_CASE(run_one_runs_the_handler_of_the_next_deadline) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer early(io, 10s), late(io, 20s);
  std::vector<std::chrono::nanoseconds> fired;
  early.async_wait([&](error_code) { fired.push_back(clock.now() - start); });
  late.async_wait([&](error_code) { fired.push_back(clock.now() - start); });
  while (fired.empty()) BOOST_REQUIRE(io.run_one() != 0);
  const std::vector<std::chrono::nanoseconds> first{10s};
  BOOST_TEST(fired == first, boost::test_tools::per_element());
  BOOST_TEST((clock.now() - start == 10s));  // not on to the later one
  io.run();
  const std::vector<std::chrono::nanoseconds> both{10s, 20s};
  BOOST_TEST(fired == both, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(no_jump_while_handlers_are_posted_or_running) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer t(io, 10ms);
  // A chain of 1,000 handlers, each posting the next: at every moment of it
  // one is posted and not yet run, so the thread never finds nothing ready
  // and the time must not move. A jump too early shows as a handler of the
  // chain seeing the time moved, or the timer firing before the chain ended.
  int chain_left = 1000;
  int moved_seen = 0;
  int chain_done_when_fired = -1;
  std::function<void()> link = [&] {
    if (clock.now() != start) ++moved_seen;
    if (--chain_left > 0) asio::post(io, link);
  };
  asio::post(io, link);
  std::chrono::nanoseconds fired_at{-1};
  t.async_wait([&](error_code) {
    fired_at = clock.now() - start;
    chain_done_when_fired = chain_left;
  });
  io.run();
  BOOST_TEST(moved_seen == 0);
  BOOST_TEST(chain_done_when_fired == 0);
  BOOST_TEST((fired_at == 10ms));
  BOOST_TEST(clock.auto_advances() == 1u);
}

BOOST_AUTO_TEST_CASE(a_handler_that_runs_long_in_real_time_holds_the_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer t(io, 1s);
  std::chrono::nanoseconds seen_after_work{-1};
  asio::post(io, [&] {
    // Real time passes while this handler runs; the virtual time must not.
    const steady::time_point until = steady::now() + 20ms;
    while (steady::now() < until) {
    }
    seen_after_work = clock.now() - start;
  });
  std::chrono::nanoseconds fired_at{-1};
  t.async_wait([&](error_code) { fired_at = clock.now() - start; });
  io.run();
  BOOST_TEST((seen_after_work == 0ns));
  BOOST_TEST((fired_at == 1s));
}

BOOST_AUTO_TEST_CASE(the_same_scenario_gives_the_same_trace_every_run) {
  const std::vector<manual_auto_io::step> first = manual_auto_io::run_mixed_scenario();
  const std::vector<manual_auto_io::step> expected{{"b", 1s},     {"b-posted", 1s}, {"c", 2s},
                                                   {"a", 3s},     {"sleep", 3s},    {"d", 2min},
                                                   {"sleep-1h", 3s + 1h}};
  BOOST_TEST(first == expected, boost::test_tools::per_element());
  for (int i = 0; i < 5; ++i) BOOST_TEST(manual_auto_io::run_mixed_scenario() == first, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(poll_and_auto_advance_off_never_jump) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer t(io, 1s);
  bool fired = false;
  t.async_wait([&](error_code) { fired = true; });
  io.poll();  // never blocks, so never idle in the hook's sense
  BOOST_TEST(!fired);
  BOOST_TEST((clock.now() == start));
  clock.auto_advance(false);
  BOOST_TEST(!clock.auto_advance());
  io.restart();
  io.run_for(20ms);  // real time: the thread blocks, the virtual time stands
  BOOST_TEST(!fired);
  BOOST_TEST((clock.now() == start));
  BOOST_TEST(clock.auto_advances() == 0u);
  clock.auto_advance(true);
  io.restart();
  io.run();
  BOOST_TEST(fired);
  BOOST_TEST((clock.now() - start == 1s));
}

BOOST_AUTO_TEST_CASE(the_driver_still_steps_exactly_with_auto_advance_on) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::steady_timer t(io, 10s);
  bool fired = false;
  t.async_wait([&](error_code) { fired = true; });
  clock.advance(5s);  // poll-based: no jump beyond now() + 5 s
  BOOST_TEST(!fired);
  BOOST_TEST((clock.now() - start == 5s));
  clock.advance(5s);
  BOOST_TEST(fired);
  BOOST_TEST(clock.auto_advances() == 0u);
}

BOOST_AUTO_TEST_CASE(auto_advance_refused_when_the_reactor_came_first) {
  asio::io_context io;
  asio::steady_timer asio_timer(io);  // makes the context's reactor before the clock
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  BOOST_TEST(!clock.auto_advance());
  try {
    clock.auto_advance(true);
    BOOST_FAIL("auto_advance(true) was accepted without the idle hook");
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("manual_clock::auto_advance") != std::string::npos, what);
    BOOST_TEST(what.find("use_manual_clock") != std::string::npos, what);
  }
  clock.auto_advance(false);  // turning it off is always fine
  // The driver still works on such a context.
  chronopool::steady_timer t(io, 1s);
  bool fired = false;
  t.async_wait([&](error_code) { fired = true; });
  clock.run_until_idle();
  BOOST_TEST(fired);
}

BOOST_AUTO_TEST_SUITE_END()

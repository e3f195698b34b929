// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::manual_clock on an io_context: advance() completes waits in
// deadline order (FIFO among equal deadlines) with now() at each one's
// deadline, periodic timers and handlers run once per period passed,
// run_until_idle() auto-advances, a 30 s idle timeout is tested at once,
// the same scenario gives the same trace twice, and bad input is refused.
#include <chronopool/async_sleep.hpp>
#include <chronopool/cancel_after.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_timer.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;

namespace {

/// What completed, and when by the manual clock (relative to the attach).
struct event {
  std::string what;
  std::chrono::nanoseconds at;
  bool operator==(const event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const event& e) { return os << e.what << "@" << e.at.count() << "ns"; }

struct trace {
  explicit trace(chronopool::manual_clock& c) : clock(c), start(c.now()) {}
  chronopool::manual_clock& clock;
  steady::time_point start;
  std::vector<event> events;
  void add(std::string what) { events.push_back({std::move(what), clock.now() - start}); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(manual_clock_suite)

BOOST_AUTO_TEST_CASE(advance_completes_in_deadline_order_fifo_and_at_each_deadline) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  trace tr{clock};
  chronopool::steady_timer late(io, 30ms), early(io, 10ms), same_a(io, 20ms), same_b(io, 20ms), never(io, 1h);
  late.async_wait([&](error_code ec) { tr.add("late " + ec.message()); });
  same_a.async_wait([&](error_code) { tr.add("same_a"); });
  early.async_wait([&](error_code) { tr.add("early"); });
  same_b.async_wait([&](error_code) { tr.add("same_b"); });
  never.async_wait([&](error_code ec) { tr.add(ec ? "never aborted" : "never fired"); });
  // A sleep and a re-arm from inside a handler both land inside the advance.
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(25ms);
    tr.add("sleep");
  }, asio::detached);

  clock.advance(20ms);
  const std::vector<event> by_20{{"early", 10ms}, {"same_a", 20ms}, {"same_b", 20ms}};
  BOOST_TEST(tr.events == by_20, boost::test_tools::per_element());
  BOOST_TEST((clock.now() - tr.start == 20ms));

  clock.advance(15ms);
  BOOST_REQUIRE_EQUAL(tr.events.size(), 5u);
  BOOST_TEST((tr.events[3] == event{"sleep", 25ms}));
  BOOST_TEST((tr.events[4] == event{"late Success", 30ms}));
  BOOST_TEST((clock.now() - tr.start == 35ms));

  never.cancel();
  clock.advance(0ms);  // runs the abort without moving the time
  BOOST_REQUIRE_EQUAL(tr.events.size(), 6u);
  BOOST_TEST((tr.events[5] == event{"never aborted", 35ms}));
}

BOOST_AUTO_TEST_CASE(nothing_fires_without_advance_and_nothing_sleeps_for_real) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  bool fired = false;
  chronopool::steady_timer t(io, 1ms);
  t.async_wait([&](error_code) { fired = true; });
  const auto real_start = steady::now();
  clock.advance(999us);
  BOOST_TEST(!fired);
  clock.advance(1us);
  BOOST_TEST(fired);
  // A deadline a day away, reached at once.
  bool day = false;
  t.expires_after(24h);
  t.async_wait([&](error_code ec) { day = !ec; });
  clock.advance(24h);
  BOOST_TEST(day);
  BOOST_TEST((steady::now() - real_start < 5s));
}

BOOST_AUTO_TEST_CASE(periodic_timer_of_10ms_advanced_by_1s_ticks_100_times) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  chronopool::periodic_timer ticker(io, 10ms);
  std::vector<std::chrono::nanoseconds> ticks;
  std::function<void(error_code)> on_tick = [&](error_code ec) {
    if (ec) return;
    ticks.push_back(clock.now() - start);
    ticker.async_tick(on_tick);
  };
  ticker.async_tick(on_tick);
  clock.advance(1s);
  BOOST_REQUIRE_EQUAL(ticks.size(), 100u);
  for (std::size_t i = 0; i < ticks.size(); ++i)
    BOOST_TEST(ticks[i] == std::chrono::nanoseconds(10ms) * static_cast<int>(i + 1));
  ticker.cancel();
  clock.advance(0ms);
}

BOOST_AUTO_TEST_CASE(periodic_handlers_run_once_per_period_at_their_ideal_instants) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  std::vector<std::chrono::nanoseconds> rate_runs, delay_runs;
  auto strand = asio::make_strand(io);
  chronopool::periodic_handle rate =
      chronopool::schedule_at_fixed_rate(strand, 10ms, 10ms, [&] { rate_runs.push_back(clock.now() - start); });
  chronopool::periodic_handle delay =
      chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 250ms, [&] { delay_runs.push_back(clock.now() - start); });
  clock.advance(1s);
  BOOST_REQUIRE_EQUAL(rate_runs.size(), 100u);
  BOOST_TEST(rate_runs.back() == std::chrono::nanoseconds(1s));
  BOOST_TEST(rate.ticks() == 100u);
  const std::vector<std::chrono::nanoseconds> expected_delay{0ms, 250ms, 500ms, 750ms, 1000ms};
  BOOST_TEST(delay_runs == expected_delay, boost::test_tools::per_element());
  rate.cancel();
  delay.cancel();
  clock.run_until_idle();
  BOOST_TEST(rate_runs.size() == 100u);
}

BOOST_AUTO_TEST_CASE(run_until_idle_auto_advances_an_hour_long_sleep_at_once) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  std::vector<std::chrono::nanoseconds> woke;
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(1h);
    woke.push_back(clock.now() - start);
    co_await chronopool::sleep_until(clock.now() + 30min);
    woke.push_back(clock.now() - start);
  }, asio::detached);
  const auto real_start = steady::now();
  clock.run_until_idle();
  const auto real = steady::now() - real_start;
  const std::vector<std::chrono::nanoseconds> expected{1h, 90min};
  BOOST_TEST(woke == expected, boost::test_tools::per_element());
  BOOST_TEST((clock.now() - start == 90min));  // idle: the time stays at the last deadline
  BOOST_TEST((real < 1s), "an hour and a half of virtual sleeps took " << real.count() << " ns");
}

BOOST_AUTO_TEST_CASE(cancel_after_times_out_an_operation_in_virtual_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  error_code outcome;
  std::chrono::nanoseconds at{};
  chronopool::async_sleep(io.get_executor(), 10min, chronopool::cancel_after(5s, [&](error_code ec) {
                            outcome = ec;
                            at = clock.now() - start;
                          }));
  clock.run_until_idle();
  BOOST_TEST(outcome == asio::error::operation_aborted);
  BOOST_TEST((at == 5s));
}

namespace {

/// The code under test: a connection that closes itself after 30 s
/// without activity; each activity re-arms the timeout.
class idle_connection {
 public:
  explicit idle_connection(asio::io_context& io) : timer_(io) { arm(); }
  void on_activity() { arm(); }
  bool closed() const noexcept { return closed_; }

 private:
  void arm() {
    timer_.expires_after(30s);
    timer_.async_wait([this](error_code ec) {
      if (!ec) closed_ = true;
    });
  }
  chronopool::steady_timer timer_;
  bool closed_ = false;
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_30s_idle_timeout_is_tested_at_once) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const auto real_start = steady::now();
  idle_connection c(io);
  clock.advance(29s);
  BOOST_TEST(!c.closed());
  c.on_activity();  // at 29 s: the timeout moves to 59 s
  clock.advance(29s);
  BOOST_TEST(!c.closed());
  clock.advance(1s);
  BOOST_TEST(c.closed());
  BOOST_TEST((steady::now() - real_start < 1s));
}

namespace {

std::vector<event> scenario_trace() {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  trace tr{clock};
  chronopool::periodic_timer ticker(io, 7ms);
  int ticks = 0;
  std::function<void(error_code)> on_tick = [&](error_code ec) {
    tr.add(std::string("tick ") + (ec ? "aborted" : "ok"));
    if (!ec && ++ticks < 20) ticker.async_tick(on_tick);
  };
  ticker.async_tick(on_tick);
  std::vector<std::unique_ptr<chronopool::steady_timer>> timers;
  for (int i = 0; i < 40; ++i) {
    timers.push_back(std::make_unique<chronopool::steady_timer>(io, std::chrono::milliseconds((i * 37) % 50)));
    timers.back()->async_wait([&tr, i](error_code ec) { tr.add("timer " + std::to_string(i) + " " + ec.message()); });
  }
  timers[3]->cancel();
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < 5; ++i) {
      co_await chronopool::sleep_for(13ms);
      tr.add("sleep " + std::to_string(i));
    }
  }, asio::detached);
  clock.advance(45ms);
  timers[39]->expires_after(1ms);
  timers[39]->async_wait([&](error_code ec) { tr.add("re-armed " + ec.message()); });
  clock.run_until_idle();
  return tr.events;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_same_scenario_gives_the_same_trace_every_run) {
  const std::vector<event> first = scenario_trace();
  const std::vector<event> second = scenario_trace();
  BOOST_TEST(first.size() > 60u);
  BOOST_TEST(first == second, boost::test_tools::per_element());
  // The order is the deadline order: timestamps never go back.
  for (std::size_t i = 1; i < first.size(); ++i) BOOST_TEST(first[i - 1].at <= first[i].at);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_with_clear_errors) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  BOOST_TEST(&chronopool::use_manual_clock(io) == &clock);  // the same clock again
  BOOST_TEST(&chronopool::manual_clock_of(io) == &clock);
  BOOST_TEST(chronopool::has_manual_clock(io));
  try {
    clock.advance(-5ns);
    BOOST_FAIL("a negative advance was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("advance") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("-5ns") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(clock.run_for(-1ms), std::invalid_argument);

  // A context on the real clock has no manual clock to control.
  asio::io_context real;
  BOOST_TEST(!chronopool::has_manual_clock(real));
  BOOST_CHECK_THROW(chronopool::manual_clock_of(real), std::logic_error);

  // Too late: the context already has a timer on the real clock.
  chronopool::steady_timer existing(real, 1h);
  try {
    chronopool::use_manual_clock(real);
    BOOST_FAIL("a manual clock was attached after a timer");
  } catch (const std::logic_error& e) {
    BOOST_TEST(std::string(e.what()).find("before the first timer") != std::string::npos, e.what());
  }

  // Mixing clocks: a manual clock does not drive a pool, either way round.
  chronopool::scheduled_thread_pool pool(1);
  BOOST_CHECK_THROW(chronopool::use_pool(io, pool), std::logic_error);
  asio::io_context routed;
  chronopool::use_pool(routed, pool);
  BOOST_CHECK_THROW(chronopool::use_manual_clock(routed), std::logic_error);

  // The clock runs the context itself: not from a handler running on it.
  bool refused = false;
  asio::post(io, [&] {
    try {
      clock.advance(1ms);
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  clock.advance(0ms);
  BOOST_TEST(refused);
}

BOOST_AUTO_TEST_CASE(a_handler_that_stops_the_context_stops_the_advance) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point start = clock.now();
  int fired = 0;
  chronopool::steady_timer a(io, 10ms), b(io, 20ms);
  a.async_wait([&](error_code) {
    ++fired;
    io.stop();
  });
  b.async_wait([&](error_code) { ++fired; });
  clock.advance(1s);
  BOOST_TEST(fired == 1);
  BOOST_TEST((clock.now() - start == 10ms));  // stopped where the stopping handler ran
  clock.advance(1s);  // a new call restarts the context
  BOOST_TEST(fired == 2);
}

BOOST_AUTO_TEST_CASE(a_blocking_wait_returns_once_another_thread_advances) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  chronopool::steady_timer t(io, 1h);
  std::thread advancer([&] { clock.advance(1h); });
  t.wait();  // returns only once the virtual time reached the expiry
  BOOST_TEST((clock.now() >= t.expiry()));
  advancer.join();
}

BOOST_AUTO_TEST_SUITE_END()

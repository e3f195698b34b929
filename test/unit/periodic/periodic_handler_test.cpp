// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic handlers on executors (chronopool::schedule_at_fixed_rate /
// schedule_with_fixed_delay with an executor) and periodic_timer.
#include "../../support/stderr_capture.hpp"

#include <chronopool/log.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_timer.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>


using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {
long ms_between(steady::time_point a, steady::time_point b) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
}
}  // namespace

BOOST_AUTO_TEST_SUITE(periodic_handlers)

BOOST_AUTO_TEST_CASE(fixed_rate_on_an_io_context_keeps_the_ideal_schedule) {
  asio::io_context io;
  std::vector<steady::time_point> starts;
  const auto t0 = steady::now();
  chronopool::periodic_handle h;
  h = chronopool::schedule_at_fixed_rate(io.get_executor(), 10ms, 20ms, [&] {
    starts.push_back(steady::now());
    if (starts.size() == 5) h.cancel();
  });
  io.run();  // returns once cancelled: no wait is left
  BOOST_REQUIRE(starts.size() == 5u);
  BOOST_TEST(!h.active());
  BOOST_TEST(h.ticks() == 5u);
  // Tick k starts no earlier than its ideal instant 10 + 20k ms.
  for (std::size_t k = 0; k < starts.size(); ++k) BOOST_TEST(ms_between(t0, starts[k]) >= 10 + 20 * static_cast<long>(k));
}

BOOST_AUTO_TEST_CASE(leeway_starts_each_tick_at_or_after_its_slot_end) {
  // The first ideal instant is put just after a slot starts, so that its
  // slot ends almost a leeway later: a tick that ignored the leeway would
  // start near its ideal instant, before that end. Lower bounds only.
  constexpr auto leeway = 40ms;
  constexpr auto period = 80ms;  // two slots: every ideal instant sits 1 ms into a slot
  asio::io_context io;
  std::vector<steady::time_point> starts;
  chronopool::periodic_options o;
  o.leeway = leeway;
  const auto t_before = steady::now();
  const auto slot_start = chronopool::detail::round_up_to_slot(t_before + 5ms, leeway);
  chronopool::periodic_handle h;
  h = chronopool::schedule_at_fixed_rate(
      io.get_executor(), slot_start + 1ms - t_before, period,
      [&] {
        starts.push_back(steady::now());
        if (starts.size() == 3) h.cancel();
      },
      o);
  const auto t_after = steady::now();
  BOOST_REQUIRE(t_after - t_before < leeway - 2ms);  // the first ideal instant is then in the slot
  io.run();
  BOOST_REQUIRE(starts.size() == 3u);
  for (std::size_t k = 0; k < starts.size(); ++k)
    BOOST_TEST((starts[k] >= slot_start + leeway + period * static_cast<int>(k)));
}

BOOST_AUTO_TEST_CASE(fixed_delay_waits_after_each_handler_returns) {
  asio::io_context io;
  std::vector<std::pair<steady::time_point, steady::time_point>> runs;
  chronopool::periodic_handle h;
  h = chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 15ms, [&] {
    const auto s = steady::now();
    std::this_thread::sleep_for(10ms);
    runs.emplace_back(s, steady::now());
    if (runs.size() == 4) h.cancel();
  });
  io.run();
  BOOST_REQUIRE(runs.size() == 4u);
  for (std::size_t i = 1; i < runs.size(); ++i) BOOST_TEST((runs[i].first - runs[i - 1].second >= 15ms));
}

BOOST_AUTO_TEST_CASE(handlers_run_on_the_given_strand_and_never_overlap) {
  asio::thread_pool threads(4);
  auto strand = asio::make_strand(threads);
  std::atomic<int> inside{0}, overlaps{0}, on_strand{0}, runs{0};
  auto h = chronopool::schedule_at_fixed_rate(strand, 0ms, 1ms, [&] {
    if (++inside > 1) ++overlaps;
    if (strand.running_in_this_thread()) ++on_strand;
    std::this_thread::sleep_for(2ms);  // longer than the period: catch-up must not overlap
    ++runs;
    --inside;
  });
  const auto limit = steady::now() + 10s;
  while (runs.load() < 20 && steady::now() < limit) std::this_thread::sleep_for(1ms);
  BOOST_TEST(h.cancel());
  threads.join();
  BOOST_TEST(runs.load() >= 20);
  BOOST_TEST(overlaps.load() == 0);
  BOOST_TEST(on_strand.load() == runs.load());
}

BOOST_AUTO_TEST_CASE(cancel_stops_later_ticks_and_reports_once) {
  asio::io_context io;
  int runs = 0;
  auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 5ms, [&] { ++runs; });
  chronopool::periodic_handle copy = h;
  asio::steady_timer stop(io, 30ms);
  bool first = false, second = true;
  stop.async_wait([&](auto) {
    first = copy.cancel();
    second = h.cancel();
  });
  io.run();
  const int at_cancel = runs;
  BOOST_TEST(first);
  BOOST_TEST(!second);
  BOOST_TEST(at_cancel >= 1);
  io.restart();
  io.run_for(30ms);
  BOOST_TEST(runs == at_cancel);
}

BOOST_AUTO_TEST_CASE(a_throwing_handler_stops_the_schedule_and_reports) {
  // The exception no longer escapes io_context::run(): it goes to the
  // error handler and stays readable from the handle.
  asio::io_context io;
  int runs = 0;
  std::vector<std::string> reported;
  chronopool::periodic_options o;
  o.error_handler = [&](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::runtime_error& ex) {
      reported.push_back(ex.what());
    }
  };
  auto h = chronopool::schedule_at_fixed_rate(
      io.get_executor(), 0ms, 5ms,
      [&] {
        if (++runs == 2) throw std::runtime_error("tick failed");
      },
      o);
  BOOST_CHECK_NO_THROW(io.run());  // returns: the stopped schedule left no work
  BOOST_TEST(!h.active());
  BOOST_TEST(runs == 2);
  BOOST_TEST(h.ticks() == 2u);
  BOOST_REQUIRE(reported.size() == 1u);
  BOOST_TEST(reported[0] == "tick failed");
  BOOST_REQUIRE(h.error());
  BOOST_CHECK_THROW(std::rethrow_exception(h.error()), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(continue_after_error_keeps_the_schedule) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      asio::io_context io;
      int runs = 0;
      int reported = 0;
      chronopool::periodic_options o;
      o.continue_after_error = true;
      o.error_handler = [&](std::exception_ptr) { ++reported; };
      chronopool::periodic_handle h;
      auto body = [&] {
        ++runs;
        if (runs == 5) h.cancel();
        if (runs == 2 || runs == 3) throw std::runtime_error("tick failed");
      };
      h = fixed_rate ? chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 2ms, body, o)
                     : chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 2ms, body, o);
      BOOST_CHECK_NO_THROW(io.run());
      BOOST_TEST(runs == 5);
      BOOST_TEST(reported == 2);
      BOOST_TEST(!h.error());  // nothing stopped it but the cancel
      BOOST_TEST(h.ticks() == 5u);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_default_error_handler_writes_one_line_to_stderr) {
  test_support::stderr_capture capture;
  {
    asio::io_context io;
    auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 5ms,
                                                [] { throw std::runtime_error("tick failed"); });
    io.run();
  }
  BOOST_TEST(capture.text() == "chronopool periodic error: a periodic handler threw: tick failed\n");
}

BOOST_AUTO_TEST_CASE(without_an_error_handler_the_error_is_logged_to_the_process_handler) {
  std::vector<std::string> events;
  std::exception_ptr error;
  chronopool::set_log_handler([&](const chronopool::log_record& r) {
    events.push_back(std::string(r.component) + "/" + std::string(r.event) + "/" +
                     std::string(chronopool::to_string(r.severity)));
    error = r.error;
  });
  {
    asio::io_context io;
    auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 5ms,
                                                [] { throw std::runtime_error("tick failed"); });
    io.run();
  }
  chronopool::set_log_handler({});
  BOOST_TEST(events == std::vector<std::string>{"periodic/handler_failed/error"});
  BOOST_CHECK_THROW(std::rethrow_exception(error), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_handler_that_returns_stop_ends_its_schedule) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      asio::io_context io;
      int runs = 0;
      auto body = [&] { return ++runs == 3 ? chronopool::periodic_control::stop : chronopool::periodic_control::keep; };
      auto h = fixed_rate ? chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 2ms, body)
                          : chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 2ms, body);
      io.run();  // returns once the schedule ended: no wait is left
      BOOST_TEST(runs == 3);
      BOOST_TEST(!h.active());
      BOOST_TEST(h.ticks() == 3u);
      BOOST_TEST(!h.error());
      BOOST_TEST(!h.cancel());  // already ended
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_periods_are_rejected) {
  asio::io_context io;
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 0ms, [] {}), std::invalid_argument);
  BOOST_CHECK_THROW(chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, -1ms, [] {}), std::invalid_argument);
  chronopool::periodic_options bad;
  bad.jitter = 1.5;
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, [] {}, bad), std::invalid_argument);
  chronopool::periodic_options wide;
  wide.leeway = 1ms;  // not less than the period
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, [] {}, wide), std::invalid_argument);
  wide.leeway = -1ns;
  BOOST_CHECK_THROW(chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 1ms, [] {}, wide), std::invalid_argument);
  BOOST_CHECK_THROW(chronopool::periodic_timer(io.get_executor(), 0ms), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(periodic_handlers_on_a_pool_share_its_heap) {
  chronopool::scheduled_thread_pool pool(2);
  std::atomic<int> runs{0};
  auto h = chronopool::schedule_at_fixed_rate(pool.get_executor(), 0ms, 2ms, [&] { ++runs; });
  const auto limit = steady::now() + 10s;
  while (runs.load() < 5 && steady::now() < limit) std::this_thread::sleep_for(1ms);
  BOOST_TEST(runs.load() >= 5);
  BOOST_TEST(h.cancel());
}

// ---- periodic_timer ----------------------------------------------------------

namespace {
/// Ticks a periodic_timer whose first deadline is now; the first tick is made
/// 35 ms late by blocking the io_context, then 3 more ticks are taken. Returns
/// the time of each tick after the late one, relative to the first ideal instant.
/// Milliseconds from the schedule's start: at[0] the late tick (the ideal
/// instants 0-30 had passed), at[1..3] the three ticks after it.
std::vector<long> ticks_after_a_late_one(chronopool::missed_tick_policy policy) {
  asio::io_context io;
  const auto t0 = steady::now();
  chronopool::periodic_timer ticker(io.get_executor(), 10ms, policy, t0);
  std::vector<long> at;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::this_thread::sleep_for(35ms);  // we are late: ideal instants 0, 10, 20, 30 have passed
        co_await ticker.async_tick(asio::use_awaitable);  // the late tick fires at once
        at.push_back(ms_between(t0, steady::now()));
        for (int i = 0; i < 3; ++i) {
          co_await ticker.async_tick(asio::use_awaitable);
          at.push_back(ms_between(t0, steady::now()));
        }
      },
      asio::detached);
  io.run();
  return at;
}
}  // namespace

namespace {
/// Fixed rate, period 200 ms, the first run lasting 450 ms (of a manual
/// clock's time: the test takes no real time, and the instants are exact):
/// start and end of the first three runs, from the schedule's start. The
/// run for the instant 200 then starts after the instant 400 has passed.
struct late_run_times {
  std::vector<std::chrono::nanoseconds> starts, ends;
};
late_run_times handler_runs_after_a_long_first_one(chronopool::missed_tick_policy policy) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const steady::time_point scheduled = clock.now();
  late_run_times r;
  chronopool::periodic_options o;
  o.missed_ticks = policy;
  chronopool::periodic_handle h;
  h = chronopool::schedule_at_fixed_rate(
      io.get_executor(), 0ms, 200ms,
      [&] {
        r.starts.push_back(clock.now() - scheduled);
        if (r.starts.size() == 1) clock.stall(450ms);  // the run takes 450 ms
        r.ends.push_back(clock.now() - scheduled);
        if (r.starts.size() == 3) h.cancel();
      },
      o);
  clock.run_until_idle();
  return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(handler_overdue_tick_fires_at_once_then_delay_restarts_the_period) {
  // Runs at 0, 450, 650 (not 0, 650, 850).
  const auto r = handler_runs_after_a_long_first_one(chronopool::missed_tick_policy::delay);
  const std::vector<std::chrono::nanoseconds> expected{0ms, 450ms, 650ms};
  BOOST_TEST(r.starts == expected, boost::test_tools::per_element());
  BOOST_TEST((r.ends[0] == 450ms));
}

BOOST_AUTO_TEST_CASE(handler_overdue_tick_fires_at_once_then_skip_moves_to_the_grid) {
  // Runs at 0, 450, 600 (not 0, 600, 800).
  const auto r = handler_runs_after_a_long_first_one(chronopool::missed_tick_policy::skip);
  const std::vector<std::chrono::nanoseconds> expected{0ms, 450ms, 600ms};
  BOOST_TEST(r.starts == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(handler_overdue_ticks_catch_up_back_to_back_with_burst) {
  // Runs at 0, 450 (for 200), 450 (for 400): the missed instants at once.
  const auto r = handler_runs_after_a_long_first_one(chronopool::missed_tick_policy::burst);
  const std::vector<std::chrono::nanoseconds> expected{0ms, 450ms, 450ms};
  BOOST_TEST(r.starts == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(periodic_timer_leeway_ticks_at_slot_ends_on_the_exact_schedule) {
  // Every ideal instant 1 ms into a 40 ms slot: a tick that ignored the
  // leeway would come ~39 ms before the slot's end. Lower bounds only.
  constexpr auto leeway = 40ms;
  constexpr auto period = 80ms;
  asio::io_context io;
  const auto slot_start = chronopool::detail::round_up_to_slot(steady::now() + 10ms, leeway);
  const auto first = slot_start + 1ms;
  chronopool::periodic_timer ticker(io.get_executor(), period, chronopool::missed_tick_policy::burst, first);
  ticker.set_leeway(leeway);
  BOOST_TEST((ticker.leeway() == leeway));
  std::vector<steady::time_point> at;
  std::vector<steady::time_point> next;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          co_await ticker.async_tick(asio::use_awaitable);
          at.push_back(steady::now());
          next.push_back(ticker.next_tick());
        }
      },
      asio::detached);
  io.run_for(10s);
  BOOST_REQUIRE(at.size() == 3u);
  for (std::size_t k = 0; k < at.size(); ++k) {
    BOOST_TEST((at[k] >= slot_start + leeway + period * static_cast<int>(k)));
    BOOST_TEST((next[k] == first + period * static_cast<int>(k + 1)));  // the schedule itself is exact
  }
  // A leeway must be in [0, period).
  BOOST_CHECK_THROW(ticker.set_leeway(-1ns), std::invalid_argument);
  BOOST_CHECK_THROW(ticker.set_leeway(period), std::invalid_argument);
  BOOST_TEST((ticker.leeway() == leeway));  // a rejected call changes nothing
  ticker.set_leeway(0ms);
  BOOST_TEST((ticker.leeway() == steady::duration::zero()));
}

BOOST_AUTO_TEST_CASE(periodic_timer_burst_catches_up_back_to_back) {
  const auto at = ticks_after_a_late_one(chronopool::missed_tick_policy::burst);
  BOOST_REQUIRE(at.size() == 4u);
  // Ideal instants 10, 20, 30 are all past: the catch-up ticks come at once,
  // not a period apart (the delay policy's three would take 30 ms at least).
  BOOST_TEST(at[3] - at[0] < 30);
}

BOOST_AUTO_TEST_CASE(periodic_timer_delay_restarts_from_the_late_tick) {
  const auto at = ticks_after_a_late_one(chronopool::missed_tick_policy::delay);
  BOOST_REQUIRE(at.size() == 4u);
  // Late tick at ~35: then a period after each tick, ~45, ~55, ~65.
  BOOST_TEST(at[1] >= at[0] + 10);
  BOOST_TEST(at[3] >= at[0] + 30);
}

BOOST_AUTO_TEST_CASE(periodic_timer_skip_jumps_to_the_next_ideal_instant) {
  const auto at = ticks_after_a_late_one(chronopool::missed_tick_policy::skip);
  BOOST_REQUIRE(at.size() == 4u);
  // Late tick at ~35: then the ideal grid 40, 50, 60.
  BOOST_TEST(at[1] >= 40);
  BOOST_TEST(at[3] >= 60);
  BOOST_TEST(at[1] < 45 + 500);  // generous: not pushed out by a full period after the late tick
}

namespace {
/// ticks_after_a_late_one() on a manual clock: the coroutine holds the
/// context for 35 ms of virtual time, so the instants are exact.
std::vector<std::chrono::nanoseconds> virtual_ticks_after_a_late_one(chronopool::missed_tick_policy policy) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  const auto t0 = clock.now();
  chronopool::periodic_timer ticker(io.get_executor(), 10ms, policy, t0);
  std::vector<std::chrono::nanoseconds> at;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        clock.stall(35ms);  // late: ideal instants 0, 10, 20, 30 have passed
        for (int i = 0; i < 4; ++i) {
          co_await ticker.async_tick(asio::use_awaitable);
          at.push_back(clock.now() - t0);
        }
      },
      asio::detached);
  clock.run_until_idle();
  return at;
}
}  // namespace

BOOST_AUTO_TEST_CASE(periodic_timer_missed_tick_policies_on_a_manual_clock) {
  using v = std::vector<std::chrono::nanoseconds>;
  const v burst{35ms, 35ms, 35ms, 35ms};  // 0 late, then 10, 20, 30 back to back
  const v delay{35ms, 45ms, 55ms, 65ms};  // a period after each tick
  const v skip{35ms, 40ms, 50ms, 60ms};   // the grid after the late tick
  BOOST_TEST(virtual_ticks_after_a_late_one(chronopool::missed_tick_policy::burst) == burst,
             boost::test_tools::per_element());
  BOOST_TEST(virtual_ticks_after_a_late_one(chronopool::missed_tick_policy::delay) == delay,
             boost::test_tools::per_element());
  BOOST_TEST(virtual_ticks_after_a_late_one(chronopool::missed_tick_policy::skip) == skip,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(periodic_timer_first_tick_immediately) {
  // A period of an hour: only a first tick that does not wait completes.
  asio::io_context io;
  const auto before = steady::now();
  chronopool::periodic_timer ticker(io, 1h, chronopool::missed_tick_policy::burst, chronopool::first_tick::immediately);
  const auto after = steady::now();
  BOOST_TEST((ticker.next_tick() >= before));
  BOOST_TEST((ticker.next_tick() <= after));
  int ticks = 0;
  ticker.async_tick([&](sys_ns::error_code ec) {
    if (!ec) ++ticks;
  });
  io.run_for(10s);  // returns as soon as the tick completed: no other work
  BOOST_TEST(ticks == 1);
  BOOST_TEST((ticker.next_tick() <= after + 1h));  // then one period on
  BOOST_TEST((ticker.next_tick() >= before + 1h));
  // after_period is the default's behaviour.
  chronopool::periodic_timer later(io.get_executor(), 1h, chronopool::missed_tick_policy::burst,
                                   chronopool::first_tick::after_period);
  BOOST_TEST((later.next_tick() >= after + 1h));
}

BOOST_AUTO_TEST_CASE(periodic_timer_defaults_and_accessors) {
  asio::io_context io;
  const auto before = steady::now();
  chronopool::periodic_timer ticker(io, 25ms);
  BOOST_TEST((ticker.period() == 25ms));
  BOOST_TEST((ticker.policy() == chronopool::missed_tick_policy::burst));
  BOOST_TEST((ticker.next_tick() >= before + 25ms));  // first tick one period from construction
  sys_ns::error_code result = asio::error::would_block;
  ticker.async_tick([&](auto ec) { result = ec; });
  asio::post(io, [&] { ticker.cancel(); });
  io.run();
  BOOST_TEST((result == asio::error::operation_aborted));
  BOOST_TEST((ticker.next_tick() >= before + 25ms));  // an aborted tick is not consumed
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The calendar runs of cron_run_test.cpp and cron_step_test.cpp on manual
// clocks: the same behaviours (consecutive instants, cancel, errors, the
// misfire policies after a long run, a backward step of the wall clock),
// each run at an exact virtual instant, in milliseconds of real time. A long
// run is a stall() of the virtual time; a step is step_system_time(). The
// real-time cases left in those files keep the real clock path covered.
#include "../../support/asio.hpp"

#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cron_run_virtual {

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;
using chronopool::cron_fire;
using chronopool::cron_misfire;
using chronopool::cron_schedule;
using chronopool::periodic_control;

/// Whole seconds of a fixed day, so that "*/2" instants are known: 1.8e9 is even.
sys::time_point instant(int second) { return sys::time_point(std::chrono::seconds(1'800'000'000 + second)); }

/// One run: the instant it was told, and the virtual system time when it
/// started and ended.
struct run {
  sys::time_point scheduled;
  sys::time_point started;
  sys::time_point ended;
  bool operator==(const run&) const = default;
};

std::ostream& operator<<(std::ostream& os, const run& r) {
  const auto ms = [](sys::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t - instant(0)).count();
  };
  return os << "scheduled " << ms(r.scheduled) << "ms started " << ms(r.started) << "ms ended " << ms(r.ended) << "ms";
}

/// A run that took no virtual time.
run on_time(sys::time_point t) { return {t, t, t}; }

/// Runs recorded from any thread; no two may overlap.
class run_trace {
 public:
  void add(run r) {
    const std::lock_guard lock(mutex_);
    runs_.push_back(r);
  }
  std::vector<run> runs() const {
    const std::lock_guard lock(mutex_);
    return runs_;
  }
  void begin() {
    if (in_flight_.fetch_add(1) != 0) overlapped_.store(true);
  }
  void end() { in_flight_.fetch_sub(1); }
  bool overlapped() const { return overlapped_.load(); }

 private:
  mutable std::mutex mutex_;
  std::vector<run> runs_;
  std::atomic<int> in_flight_{0};
  std::atomic<bool> overlapped_{false};
};

/// Options of a pool of @p threads on a manual clock.
chronopool::scheduled_thread_pool_options manual_pool(std::size_t threads) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = threads;
  o.use_manual_clock = true;
  return o;
}

}  // namespace cron_run_virtual

BOOST_AUTO_TEST_SUITE(cron_run_virtual_suite)

using namespace cron_run_virtual;

BOOST_AUTO_TEST_CASE(pool_runs_at_each_instant_exactly_until_stopped) {
  chronopool::scheduled_thread_pool pool(manual_pool(2));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  clock.set_system_time(instant(0) - 300ms);
  run_trace trace;
  std::atomic<int> n{0};
  auto fut = pool.schedule_cron(cron_schedule("* * * * * *"), [&](cron_fire fire) {
    trace.begin();
    const auto started = pool.system_now();
    clock.stall(50ms);  // each run takes 50 ms of virtual time
    trace.add({fire.scheduled, started, pool.system_now()});
    trace.end();
    return ++n == 3 ? periodic_control::stop : periodic_control::keep;
  });
  clock.advance(10s);
  BOOST_REQUIRE((fut.wait_for(5s) == std::future_status::ready));
  BOOST_CHECK_NO_THROW(fut.get());
  BOOST_TEST(!fut.cancelled());
  const std::vector<run> expected{{instant(0), instant(0), instant(0) + 50ms},
                                  {instant(1), instant(1), instant(1) + 50ms},
                                  {instant(2), instant(2), instant(2) + 50ms}};
  BOOST_TEST(trace.runs() == expected, boost::test_tools::per_element());
  BOOST_TEST(!trace.overlapped());
}

BOOST_AUTO_TEST_CASE(pool_cancel_stops_it_and_a_callable_may_take_nothing) {
  chronopool::scheduled_thread_pool pool(manual_pool(1));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  clock.set_system_time(instant(0) - 300ms);
  std::atomic<int> n{0};
  auto fut = pool.schedule_cron("* * * * * *", "Europe/Berlin", [&] { ++n; });
  clock.advance(300ms);  // onto the first instant, which runs
  BOOST_TEST(n.load() == 1);
  BOOST_TEST(fut.cancel(false));
  clock.advance(10s);
  BOOST_TEST(n.load() == 1);
  BOOST_TEST(fut.cancelled());
  BOOST_TEST(fut.done());
}

BOOST_AUTO_TEST_CASE(pool_an_exception_stops_the_schedule_at_its_first_instant) {
  chronopool::scheduled_thread_pool pool(manual_pool(1));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  clock.set_system_time(instant(0) - 300ms);
  run_trace trace;
  auto fut = pool.schedule_cron("* * * * * *", "UTC", [&] {
    trace.add(on_time(pool.system_now()));
    throw std::runtime_error("report failed");
  });
  clock.advance(5s);
  BOOST_REQUIRE((fut.wait_for(5s) == std::future_status::ready));
  BOOST_CHECK_THROW(fut.get(), std::runtime_error);
  const std::vector<run> once{on_time(instant(0))};
  BOOST_TEST(trace.runs() == once, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(pool_continue_after_error_keeps_the_grid) {
  chronopool::scheduled_thread_pool_options po = manual_pool(1);
  po.error_handler = [](std::exception_ptr, const chronopool::task_view*) {};
  chronopool::scheduled_thread_pool pool(po);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  clock.set_system_time(instant(0) - 300ms);
  chronopool::periodic_options o;
  o.continue_after_error = true;
  run_trace trace;
  std::atomic<int> n{0};
  auto fut = pool.schedule_cron(cron_schedule("* * * * * *"), [&](cron_fire fire) {
    trace.add(on_time(fire.scheduled));
    if (++n == 1) throw std::runtime_error("first run fails");
    return periodic_control::stop;
  }, o);
  clock.advance(5s);
  BOOST_REQUIRE((fut.wait_for(5s) == std::future_status::ready));
  BOOST_CHECK_NO_THROW(fut.get());
  const std::vector<run> expected{on_time(instant(0)), on_time(instant(1))};
  BOOST_TEST(trace.runs() == expected, boost::test_tools::per_element());
}

// An every-second schedule whose first run takes 2.5 s (3.5 s for catch-up):
// skip drops the missed instants, fire once now runs the earliest one at
// once, catch_up(2) runs two of them; then each is back on the grid.
BOOST_AUTO_TEST_CASE(pool_a_long_run_misfires_by_the_policy_at_exact_instants) {
  struct policy_case {
    const char* name;
    cron_misfire misfire;
    std::chrono::milliseconds first_run;
    std::vector<run> expected;
  };
  const auto t0 = instant(0);
  const std::vector<policy_case> cases{
      {"skip", cron_misfire::skip(), 2500ms, {{t0, t0, t0 + 2500ms}, on_time(instant(3))}},
      {"fire_once_now", cron_misfire::fire_once_now(), 2500ms,
       {{t0, t0, t0 + 2500ms}, {instant(1), t0 + 2500ms, t0 + 2500ms}, on_time(instant(3))}},
      {"catch_up(2)", cron_misfire::catch_up(2), 3500ms,
       {{t0, t0, t0 + 3500ms},
        {instant(1), t0 + 3500ms, t0 + 3500ms},
        {instant(2), t0 + 3500ms, t0 + 3500ms},
        on_time(instant(4))}},
  };
  for (const policy_case& c : cases) {
    BOOST_TEST_CONTEXT("policy " << c.name) {
      chronopool::scheduled_thread_pool pool(manual_pool(1));
      chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
      clock.set_system_time(t0 - 300ms);
      run_trace trace;
      std::atomic<std::size_t> n{0};
      auto fut = pool.schedule_cron(
          cron_schedule("* * * * * *"),
          [&](cron_fire fire) {
            trace.begin();
            const auto started = pool.system_now();
            if (n.load() == 0) clock.stall(c.first_run);
            trace.add({fire.scheduled, started, pool.system_now()});
            trace.end();
            return ++n == c.expected.size() ? periodic_control::stop : periodic_control::keep;
          },
          {}, c.misfire);
      clock.advance(10s);
      BOOST_REQUIRE((fut.wait_for(5s) == std::future_status::ready));
      BOOST_TEST(trace.runs() == c.expected, boost::test_tools::per_element());
      BOOST_TEST(!trace.overlapped());
    }
  }
}

BOOST_AUTO_TEST_CASE(executor_form_ticks_at_the_instants_and_stops_itself_under_io_run) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(instant(0) - 300ms);
  std::vector<run> runs;
  int n = 0;
  auto h = chronopool::schedule_cron(io.get_executor(), cron_schedule("*/2 * * * * *"), [&](cron_fire fire) {
    runs.push_back({fire.scheduled, clock.system_now(), clock.system_now()});
    return ++n == 2 ? periodic_control::stop : periodic_control::keep;
  });
  BOOST_TEST(h.active());
  io.restart();  // set_system_time() polled the context, which ran out of work
  io.run();      // auto-advance; returns once the stopped schedule leaves no work
  BOOST_TEST(!h.active());
  BOOST_TEST(h.ticks() == 2u);
  const std::vector<run> expected{on_time(instant(0)), on_time(instant(2))};
  BOOST_TEST(runs == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(executor_form_errors_go_to_the_error_handler_and_cancel_stops_it_under_io_run) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(instant(0) - 300ms);
  int errors = 0;
  chronopool::periodic_options o;
  o.continue_after_error = true;
  o.error_handler = [&](std::exception_ptr) { ++errors; };
  std::vector<run> seen;
  chronopool::periodic_handle h;
  h = chronopool::schedule_cron(
      io.get_executor(), "* * * * * *", "UTC",
      [&] {
        seen.push_back(on_time(clock.system_now()));
        if (seen.size() == 2) h.cancel();
        throw std::runtime_error("tick failed");
      },
      o);
  io.restart();  // set_system_time() polled the context, which ran out of work
  io.run();
  const std::vector<run> expected{on_time(instant(0)), on_time(instant(1))};
  BOOST_TEST(seen == expected, boost::test_tools::per_element());
  BOOST_TEST(errors == 2);
  BOOST_TEST(!h.active());
  BOOST_TEST(!h.error());  // continue_after_error: no exception ended it
}

BOOST_AUTO_TEST_CASE(cron_timer_ticks_at_the_instants_under_io_run) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(instant(0) - 300ms);
  std::vector<run> runs;
  std::optional<sys::time_point> first_promised;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        chronopool::cron_timer t(co_await asio::this_coro::executor, cron_schedule("* * * * * *"));
        BOOST_TEST(!t.last_tick());
        first_promised = t.next_tick();
        for (int i = 0; i < 3; ++i) {
          co_await t.async_tick(asio::use_awaitable);
          runs.push_back({*t.last_tick(), clock.system_now(), clock.system_now()});
        }
      },
      asio::detached);
  io.restart();  // set_system_time() polled the context, which ran out of work
  io.run();
  BOOST_TEST((first_promised == instant(0)));
  const std::vector<run> expected{on_time(instant(0)), on_time(instant(1)), on_time(instant(2))};
  BOOST_TEST(runs == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cron_timer_skips_what_a_long_body_missed_at_exact_instants) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(instant(0) - 300ms);
  std::vector<run> ticks;
  std::optional<sys::time_point> previewed;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        chronopool::cron_timer t(co_await asio::this_coro::executor, cron_schedule("* * * * * *"), cron_misfire::skip());
        co_await t.async_tick(asio::use_awaitable);
        const auto started = clock.system_now();
        clock.stall(2500ms);  // the loop body overruns two instants
        ticks.push_back({*t.last_tick(), started, clock.system_now()});
        previewed = t.next_tick();
        co_await t.async_tick(asio::use_awaitable);
        ticks.push_back(on_time(*t.last_tick()));
        BOOST_TEST((clock.system_now() == ticks[1].scheduled));
      },
      asio::detached);
  io.restart();  // set_system_time() polled the context, which ran out of work
  io.run();
  const std::vector<run> expected{{instant(0), instant(0), instant(0) + 2500ms}, on_time(instant(3))};
  BOOST_TEST(ticks == expected, boost::test_tools::per_element());
  BOOST_TEST((previewed == instant(3)));
}

// A step back by an hour: the instant armed is an hour away, so 1.5 s of
// virtual time runs nothing; the step forward again runs it at once.
BOOST_AUTO_TEST_CASE(executor_form_and_cron_timer_do_not_run_early_after_a_backward_step) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(instant(0) - 300ms);
  std::vector<run> handled;
  std::vector<run> ticked;
  auto h = chronopool::schedule_cron(io.get_executor(), cron_schedule("* * * * * *"), [&](cron_fire f) {
    handled.push_back({f.scheduled, clock.system_now(), clock.system_now()});
  });
  chronopool::cron_timer timer(io, cron_schedule("* * * * * *"));
  bool stop = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (!stop) {
          co_await timer.async_tick(asio::use_awaitable);
          ticked.push_back({*timer.last_tick(), clock.system_now(), clock.system_now()});
        }
      },
      asio::detached);
  clock.advance(300ms);
  const std::vector<run> first{on_time(instant(0))};
  BOOST_TEST(handled == first, boost::test_tools::per_element());
  BOOST_TEST(ticked == first, boost::test_tools::per_element());
  clock.step_system_time(-1h);
  clock.advance(1500ms);  // instant(1) passed by the steady time, not by the clock
  BOOST_TEST(handled.size() == 1u);
  BOOST_TEST(ticked.size() == 1u);
  clock.step_system_time(1h);  // now instant(1) + 500 ms: the armed instant passed
  const run late{instant(1), instant(1) + 500ms, instant(1) + 500ms};
  const std::vector<run> then{on_time(instant(0)), late};
  BOOST_TEST(handled == then, boost::test_tools::per_element());
  BOOST_TEST(ticked == then, boost::test_tools::per_element());
  stop = true;
  h.cancel();
  timer.cancel();
  clock.run_until_idle();
}

BOOST_AUTO_TEST_SUITE_END()

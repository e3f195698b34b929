// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A scheduled_thread_pool on a manual clock: advance() runs every task due
// in deadline order (FIFO among equal deadlines) with now() at each one's
// deadline, periodic tasks run once per period passed, their controls act on
// virtual time, wall-clock tasks follow steps of the virtual system clock,
// the pool's timers and sleeps run on it, run_until_idle() auto-advances, an
// idle timeout passes at once, and bad input is refused.
#include "pool_test_support.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/system_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;

namespace {

/// What ran, and when by the pool's clock (relative to the trace's start).
struct event {
  std::string what;
  std::chrono::nanoseconds at;
  bool operator==(const event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const event& e) { return os << e.what << "@" << e.at.count() << "ns"; }

/// Written by pool threads, read by the test after advance() returned
/// (advance waits for the runs; the mutex orders the writes before the read).
class trace {
 public:
  explicit trace(steady::time_point start) : start_(start) {}
  void add(std::string what, steady::time_point now) {
    const std::lock_guard lock(mutex_);
    events_.push_back({std::move(what), now - start_});
  }
  std::vector<event> take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(events_, {});
  }

 private:
  steady::time_point start_;
  std::mutex mutex_;
  std::vector<event> events_;
};

chronopool::scheduled_thread_pool_options manual_options(std::size_t threads = 1) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = threads;
  o.use_manual_clock = true;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pool_manual_clock_suite)

BOOST_AUTO_TEST_CASE(advance_runs_in_deadline_order_fifo_and_at_each_deadline) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  BOOST_TEST(chronopool::has_manual_clock(pool));
  tr.emplace(clock.now());
  BOOST_TEST((pool.now() == clock.now()));
  auto record = [&](std::string what) { return [&, what] { tr->add(what, pool.now()); }; };
  auto late = pool.schedule(30ms, record("late"));
  pool.schedule(20ms, record("same_a"));
  pool.execute_after(10ms, [&] {
    tr->add("early", pool.now());
    // Queued from a run: due inside the same advance, each at its own deadline.
    pool.execute(record("at once"));
    pool.execute_after(5ms, record("early+5"));
  });
  pool.schedule(20ms, record("same_b"));
  auto never = pool.schedule(1h, record("never"));
  BOOST_TEST((late.delay() == 30ms));

  clock.advance(20ms);
  const std::vector<event> by_20{{"early", 10ms}, {"at once", 10ms}, {"early+5", 15ms},
                                 {"same_a", 20ms}, {"same_b", 20ms}};
  BOOST_TEST(tr->take() == by_20, boost::test_tools::per_element());
  BOOST_TEST((clock.now() - pool.now() == 0ns));
  BOOST_TEST((late.delay() == 10ms));
  BOOST_TEST(!late.done());

  clock.advance(10ms);
  const std::vector<event> by_30{{"late", 30ms}};
  BOOST_TEST(tr->take() == by_30, boost::test_tools::per_element());
  BOOST_TEST(late.done());
  BOOST_TEST(!never.done());
  BOOST_TEST(pool.completed_task_count() == 6u);
}

BOOST_AUTO_TEST_CASE(a_10ms_fixed_rate_task_advanced_by_1s_runs_100_times_at_exact_instants) {
  std::vector<steady::time_point> runs;  // the pool's one thread writes, the test reads after advance
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  auto f = pool.schedule_at_fixed_rate(10ms, 10ms, [&] { runs.push_back(pool.now()); });
  BOOST_TEST(clock.run_for(1s) == 100u);
  BOOST_REQUIRE_EQUAL(runs.size(), 100u);
  for (std::size_t k = 0; k < runs.size(); ++k) BOOST_TEST((runs[k] - start == (k + 1) * 10ms));
  BOOST_TEST((clock.now() - start == 1s));
  f.cancel(false);
}

BOOST_AUTO_TEST_CASE(fixed_delay_counts_from_the_end_of_each_run_in_virtual_time) {
  std::vector<std::chrono::nanoseconds> starts;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  auto f = pool.schedule_with_fixed_delay(10ms, 10ms, [&] {
    starts.push_back(pool.now() - start);
    clock.stall(3ms);  // each run takes 3 ms of virtual time
  });
  clock.advance(60ms);
  const std::vector<std::chrono::nanoseconds> expected{10ms, 23ms, 36ms, 49ms};
  BOOST_TEST(starts == expected, boost::test_tools::per_element());
  f.cancel(false);
}

BOOST_AUTO_TEST_CASE(missed_ticks_follow_the_policy_exactly_in_virtual_time) {
  // A fixed-rate 10 ms task whose second run takes 35 ms: burst catches up
  // back to back, skip drops the missed instants, delay restarts the period.
  const auto run = [](chronopool::missed_tick_policy policy) {
    std::vector<std::chrono::nanoseconds> starts;
    chronopool::scheduled_thread_pool pool(manual_options());
    chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
    const steady::time_point start = clock.now();
    chronopool::periodic_options o;
    o.missed_ticks = policy;
    auto f = pool.schedule_at_fixed_rate(
        10ms, 10ms,
        [&] {
          starts.push_back(pool.now() - start);
          if (starts.size() == 2) clock.stall(35ms);
        },
        o);
    clock.advance(80ms);
    f.cancel(false);
    return starts;
  };
  using v = std::vector<std::chrono::nanoseconds>;
  // Run 2 starts at 20 and ends at 55: 30, 40 and 50 were missed.
  BOOST_TEST(run(chronopool::missed_tick_policy::burst) == (v{10ms, 20ms, 55ms, 55ms, 55ms, 60ms, 70ms, 80ms}),
             boost::test_tools::per_element());
  BOOST_TEST(run(chronopool::missed_tick_policy::skip) == (v{10ms, 20ms, 55ms, 60ms, 70ms, 80ms}),
             boost::test_tools::per_element());
  BOOST_TEST(run(chronopool::missed_tick_policy::delay) == (v{10ms, 20ms, 55ms, 65ms, 75ms}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(periodic_controls_act_on_virtual_time) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  tr.emplace(clock.now());
  chronopool::periodic_options o;
  o.missed_ticks = chronopool::missed_tick_policy::skip;
  auto f = pool.schedule_at_fixed_rate(10ms, 10ms, [&] { tr->add("tick", pool.now()); }, o);
  clock.advance(30ms);  // 10, 20, 30
  BOOST_TEST(tr->take().size() == 3u);
  BOOST_TEST(f.pause());
  clock.advance(1h);
  BOOST_TEST(tr->take().empty());
  BOOST_TEST(f.resume());  // 40 ms passed long ago: at once, then skip to the grid
  clock.advance(0ns);
  const std::vector<event> resumed{{"tick", 1h + 30ms}};
  BOOST_TEST(tr->take() == resumed, boost::test_tools::per_element());
  BOOST_TEST(f.reschedule(25ms));  // from now: now + 25 ms, then every 25 ms
  clock.advance(50ms);
  const std::vector<event> after{{"tick", 1h + 55ms}, {"tick", 1h + 80ms}};
  BOOST_TEST(tr->take() == after, boost::test_tools::per_element());
  BOOST_TEST(f.trigger_now());
  clock.advance(0ns);
  const std::vector<event> triggered{{"tick", 1h + 80ms}};
  BOOST_TEST(tr->take() == triggered, boost::test_tools::per_element());
  f.cancel(false);
}

BOOST_AUTO_TEST_CASE(wall_clock_tasks_follow_steps_of_the_virtual_system_clock) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  tr.emplace(clock.now());
  const auto sys0 = clock.system_now();
  BOOST_TEST((pool.system_now() == sys0));
  auto ahead = pool.schedule_at(sys0 + 10s, [&] { tr->add("ahead", pool.now()); });
  auto jumped = pool.schedule_at(sys0 + 1h, [&] { tr->add("jumped", pool.now()); });
  // Back by 5 s: "ahead" is 15 s away now on the steady time.
  clock.step_system_time(-5s);
  clock.advance(10s);
  BOOST_TEST(tr->take().empty());
  clock.advance(5s);
  const std::vector<event> at_15{{"ahead", 15s}};
  BOOST_TEST(tr->take() == at_15, boost::test_tools::per_element());
  // Forward past the other one's instant: it runs in the step, at once.
  clock.set_system_time(sys0 + 2h);
  const std::vector<event> stepped{{"jumped", 15s}};
  BOOST_TEST(tr->take() == stepped, boost::test_tools::per_element());
  BOOST_TEST(jumped.done());
}

BOOST_AUTO_TEST_CASE(timers_and_sleeps_on_the_pool_run_on_its_virtual_time) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options(2));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  tr.emplace(clock.now());
  chronopool::steady_timer timer(pool.get_executor(), 50ms);
  timer.async_wait([&](error_code ec) { tr->add("timer " + ec.message(), pool.now()); });
  chronopool::system_timer wall(pool.get_executor(), clock.system_now() + 2h);
  wall.async_wait([&](error_code ec) { tr->add("wall " + ec.message(), pool.now()); });
  asio::co_spawn(
      pool.get_executor(),
      [&]() -> asio::awaitable<void> {
        co_await chronopool::sleep_for(1h);
        tr->add("slept", pool.now());
      },
      asio::detached);
  clock.advance(100ms);
  const std::vector<event> by_100{{"timer Success", 50ms}};
  BOOST_TEST(tr->take() == by_100, boost::test_tools::per_element());
  // The system timer follows a step of the virtual wall clock.
  clock.step_system_time(90min);
  clock.advance(30min);
  const std::vector<event> by_30min{{"wall Success", 30min}};
  BOOST_TEST(tr->take() == by_30min, boost::test_tools::per_element());
  // Auto-advance: the sleep's hour passes at once.
  clock.run_until_idle();
  const std::vector<event> slept{{"slept", 1h}};
  BOOST_TEST(tr->take() == slept, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(run_until_idle_jumps_from_deadline_to_deadline) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  tr.emplace(clock.now());
  pool.schedule(1h, [&] {
    tr->add("1h", pool.now());
    pool.schedule(2h, [&] { tr->add("3h", pool.now()); });
  });
  pool.schedule(std::chrono::hours::max(), [] {});  // never: does not hold it up
  BOOST_TEST(clock.run_until_idle() == 2u);
  const std::vector<event> expected{{"1h", 1h}, {"3h", 3h}};
  BOOST_TEST(tr->take() == expected, boost::test_tools::per_element());
  BOOST_TEST(clock.run_until_idle() == 0u);
}

BOOST_AUTO_TEST_CASE(an_idle_timeout_of_an_hour_passes_at_once) {
  chronopool::scheduled_thread_pool_options o = manual_options();
  o.keep_alive = 1h;
  o.allow_core_thread_timeout = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  pool.execute([] {});
  clock.advance(59min);
  // No real time counts: the thread is still there, however long this took.
  BOOST_TEST(pool.pool_size() == 1u);
  clock.advance(2min);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0; }));
}

BOOST_AUTO_TEST_CASE(shutdown_with_delayed_tasks_runs_them_at_their_virtual_deadline) {
  std::optional<trace> tr;
  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  tr.emplace(clock.now());
  pool.schedule(1h, [&] { tr->add("delayed", pool.now()); });
  auto periodic = pool.schedule_at_fixed_rate(1s, 1s, [] {});
  pool.shutdown();
  BOOST_TEST(periodic.cancelled());  // Java's default: periodic tasks stop at shutdown
  BOOST_TEST(!pool.is_terminated());
  clock.run_until_idle();
  const std::vector<event> expected{{"delayed", 1h}};
  BOOST_TEST(tr->take() == expected, boost::test_tools::per_element());
  BOOST_TEST(pool.wait_for_termination(pool_test::long_wait));
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_with_the_name_and_value) {
  chronopool::scheduled_thread_pool real(1);
  BOOST_TEST(!chronopool::has_manual_clock(real));
  BOOST_CHECK_EXCEPTION(chronopool::manual_clock_of(real), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("use_manual_clock") != std::string::npos;
  });

  chronopool::scheduled_thread_pool pool(manual_options());
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  BOOST_CHECK_EXCEPTION(clock.advance(-1ms), std::invalid_argument, [](const std::invalid_argument& e) {
    const std::string w = e.what();
    return w.find("advance") != std::string::npos && w.find("-1000000ns") != std::string::npos;
  });
  BOOST_CHECK_THROW(clock.run_for(-1s), std::invalid_argument);
  BOOST_CHECK_THROW(clock.stall(-1ns), std::invalid_argument);

  // From one of the pool's threads the clock would wait for itself.
  auto from_task = pool.submit([&] { clock.advance(1ms); });
  clock.advance(0ns);
  BOOST_CHECK_EXCEPTION(from_task.get(), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("pool_manual_clock::advance") != std::string::npos;
  });

  // Precision mode spins on the real clock.
  chronopool::scheduled_thread_pool_options spin = manual_options();
  spin.precision_spin_limit = 50us;
  BOOST_CHECK_EXCEPTION(chronopool::scheduled_thread_pool{spin}, std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          const std::string w = e.what();
                          return w.find("precision_spin_limit") != std::string::npos &&
                                 w.find("50000ns") != std::string::npos;
                        });

  // An io_context's timers on a pool on a manual clock would mix the clocks.
  asio::io_context io;
  BOOST_CHECK_EXCEPTION(chronopool::use_pool(io, pool), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()).find("manual clock") != std::string::npos;
  });
}

BOOST_AUTO_TEST_SUITE_END()

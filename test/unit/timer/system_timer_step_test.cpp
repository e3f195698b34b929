// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::system_timer follows steps of the system clock: injected steps
// (detail::inject_clock_step, the test seam), on an io_context and on a
// pool, racing cancels and destruction, and (opt-in) real steps of
// CLOCK_REALTIME.
#include "../../support/injected_step.hpp"
#include "../../support/machine_clock.hpp"
#include "timer_test_support.hpp"

#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/system_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <ctime>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <time.h>
#endif

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;

namespace {

/// One wait's outcome, thread-safe, with the steady and wall times it came at.
struct wall_outcome {
  std::promise<void> done;
  std::atomic<int> calls{0};
  error_code ec;
  steady::time_point at{};
  cpd::sys_time wall_at{};

  auto handler() {
    return [this](const error_code& e) {
      ec = e;
      at = steady::now();
      wall_at = cpd::system_now();
      if (calls.fetch_add(1) == 0) done.set_value();
    };
  }
  bool wait() { return done.get_future().wait_for(long_wait) == std::future_status::ready; }
};

/// A thread running @p io until the scope ends.
class running {
 public:
  explicit running(asio::io_context& io, int threads = 1) : io_(io), guard_(io.get_executor()) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~running() {
    guard_.reset();
    for (auto& t : threads_) t.join();
  }
  running(const running&) = delete;
  running& operator=(const running&) = delete;

 private:
  asio::io_context& io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(system_timer_steps)

BOOST_AUTO_TEST_CASE(a_forward_step_past_the_expiry_completes_the_wait_at_once) {
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io);
  t.expires_after(1h);
  wall_outcome o;
  t.async_wait(o.handler());
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(o.calls.load() == 0);
  const auto start = steady::now();
  test_support::injected_step step(2h);
  BOOST_REQUIRE(o.wait());
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at - start < long_wait / 2));  // not an hour later
  BOOST_TEST((o.wall_at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE(a_forward_step_short_of_the_expiry_moves_it_earlier) {
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io, 1h);
  wall_outcome o;
  t.async_wait(o.handler());
  const auto start = steady::now();
  test_support::injected_step step(1h - 150ms);
  BOOST_REQUIRE(o.wait());
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at - start >= 100ms));
  BOOST_TEST((o.at - start < long_wait / 2));
  BOOST_TEST((o.wall_at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE(a_backward_step_delays_the_wait_until_the_clock_reaches_the_expiry) {
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io, 100ms);
  wall_outcome o;
  const auto start = steady::now();
  t.async_wait(o.handler());
  test_support::injected_step step(-300ms);  // the expiry is now 400 ms away
  BOOST_REQUIRE(o.wait());
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at - start >= 350ms));
  BOOST_TEST((o.wall_at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE(a_step_back_not_yet_reported_does_not_complete_a_wait_early) {
  // The window between a step and its processing: the engine's deadline
  // comes while the wall clock is still before the expiry. The wait is armed
  // again, not completed.
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io, 50ms);
  wall_outcome o;
  const auto start = steady::now();
  t.async_wait(o.handler());
  cpd::shift_system_now_unnoticed(-250ms);
  BOOST_REQUIRE(o.wait());
  cpd::shift_system_now_unnoticed(250ms);
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at - start >= 250ms));
  BOOST_TEST((o.wall_at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE(several_waits_of_one_timer_all_move) {
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io, 1h);
  std::vector<std::unique_ptr<wall_outcome>> outs;
  for (int i = 0; i < 4; ++i) {
    outs.push_back(std::make_unique<wall_outcome>());
    t.async_wait(outs.back()->handler());
  }
  test_support::injected_step step(2h);
  for (auto& o : outs) {
    BOOST_REQUIRE(o->wait());
    BOOST_TEST(!o->ec);
    BOOST_TEST(o->calls.load() == 1);
  }
  BOOST_TEST(t.cancel() == 0u);
}

BOOST_AUTO_TEST_CASE(many_timers_on_several_threads_due_or_moved_by_one_step) {
  // Timers started from four threads (so in several shards): those whose
  // expiry the step passes complete at once, the others stay pending.
  asio::io_context io;
  running r(io, 4);
  constexpr std::size_t per_thread = 50;
  std::vector<std::unique_ptr<chronopool::system_timer>> timers;
  std::vector<std::unique_ptr<wall_outcome>> outs;
  for (std::size_t i = 0; i < 4 * per_thread; ++i) {
    timers.push_back(std::make_unique<chronopool::system_timer>(io));
    outs.push_back(std::make_unique<wall_outcome>());
  }
  std::vector<std::thread> starters;
  for (std::size_t th = 0; th < 4; ++th) {
    starters.emplace_back([&, th] {
      for (std::size_t i = th * per_thread; i < (th + 1) * per_thread; ++i) {
        timers[i]->expires_after(i % 2 == 0 ? 1h : 5h);  // odd ones stay ahead of the step
        timers[i]->async_wait(outs[i]->handler());
      }
    });
  }
  for (auto& s : starters) s.join();
  BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 4 * per_thread);
  const auto start = steady::now();
  test_support::injected_step step(2h);
  for (std::size_t i = 0; i < 4 * per_thread; i += 2) {
    BOOST_REQUIRE(outs[i]->wait());
    BOOST_TEST(!outs[i]->ec);
  }
  BOOST_TEST((steady::now() - start < long_wait / 2));
  std::this_thread::sleep_for(20ms);
  for (std::size_t i = 1; i < 4 * per_thread; i += 2) BOOST_TEST(outs[i]->calls.load() == 0);
  for (std::size_t i = 1; i < 4 * per_thread; i += 2) BOOST_TEST(timers[i]->cancel() == 1u);
  for (std::size_t i = 1; i < 4 * per_thread; i += 2) {
    BOOST_REQUIRE(outs[i]->wait());
    BOOST_TEST((outs[i]->ec == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE(on_a_pool_executor_a_forward_step_completes_the_wait) {
  chronopool::scheduled_thread_pool pool(2);
  chronopool::system_timer t(pool.get_executor(), 1h);
  wall_outcome o, later;
  t.async_wait(o.handler());
  chronopool::system_timer t2(pool, 10h);
  t2.async_wait(later.handler());
  const auto start = steady::now();
  {
    test_support::injected_step step(2h);
    BOOST_REQUIRE(o.wait());
    BOOST_TEST(!o.ec);
    BOOST_TEST((o.at - start < long_wait / 2));
    BOOST_TEST((o.wall_at >= t.expiry()));
  }
  BOOST_TEST(later.calls.load() == 0);
  BOOST_TEST(t2.cancel() == 1u);
  BOOST_REQUIRE(later.wait());
  BOOST_TEST((later.ec == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(per_operation_cancellation_survives_a_step) {
  asio::io_context io;
  running r(io);
  chronopool::system_timer t(io, 5h);
  asio::cancellation_signal sig;
  wall_outcome o;
  asio::post(io, [&] { t.async_wait(asio::bind_cancellation_slot(sig.slot(), o.handler())); });
  std::this_thread::sleep_for(20ms);
  {
    test_support::injected_step step(1h);  // moves the wait, which stays pending
    std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(o.calls.load() == 0);
  asio::post(io, [&] { sig.emit(asio::cancellation_type::terminal); });
  BOOST_REQUIRE(o.wait());
  BOOST_TEST((o.ec == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_cancel_racing_a_step_completes_each_wait_once_as_it_counted) {
  asio::io_context io;
  running r(io, 2);
  for (int round = 0; round < 100; ++round) {
    chronopool::system_timer t(io, 1h);
    wall_outcome o;
    t.async_wait(o.handler());
    std::size_t cancelled = 0;
    std::thread stepper([] { cpd::inject_clock_step(2h); });
    if (round % 3 != 0) std::this_thread::sleep_for(std::chrono::microseconds(round * 7));
    cancelled = t.cancel();
    stepper.join();
    BOOST_REQUIRE(o.wait());
    cpd::inject_clock_step(-2h);
    BOOST_TEST(o.calls.load() == 1);
    if (cancelled == 1) {
      BOOST_TEST((o.ec == asio::error::operation_aborted));
    } else {
      BOOST_TEST(!o.ec);
    }
  }
}

BOOST_AUTO_TEST_CASE(timers_destroyed_while_a_step_is_processed) {
  asio::io_context io;
  running r(io, 2);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::unique_ptr<wall_outcome>> outs;
    std::vector<std::optional<chronopool::system_timer>> timers(40);
    for (std::size_t i = 0; i < timers.size(); ++i) {
      timers[i].emplace(io, i % 2 == 0 ? 1h : 3h);
      outs.push_back(std::make_unique<wall_outcome>());
      timers[i]->async_wait(outs.back()->handler());
    }
    std::thread stepper([] { cpd::inject_clock_step(2h); });
    for (auto& t : timers) t.reset();
    stepper.join();
    for (auto& o : outs) {
      BOOST_REQUIRE(o->wait());
      BOOST_TEST(o->calls.load() == 1);
    }
    cpd::inject_clock_step(-2h);
  }
}

BOOST_AUTO_TEST_CASE(a_context_destroyed_with_pending_wall_waits_stops_following_steps) {
  auto witness = std::make_shared<int>(0);
  {
    asio::io_context io;
    chronopool::system_timer t(io, 1h);
    t.async_wait([witness](const error_code&) { BOOST_ERROR("destroyed uncalled, as Asio does"); });
    {
      test_support::injected_step step(30min);  // posts a re-computation that never runs
    }
    BOOST_TEST(witness.use_count() == 2);
    std::thread runner([&] { io.run_for(20ms); });  // runs it: the wait moves and stays pending
    runner.join();
    BOOST_TEST(witness.use_count() == 2);
  }
  BOOST_TEST(witness.use_count() == 1);  // the handler went with the context
  test_support::injected_step after(1h);               // no listener of the destroyed context is told
}

BOOST_AUTO_TEST_CASE(a_pool_destroyed_with_pending_wall_waits) {
  auto witness = std::make_shared<int>(0);
  {
    chronopool::scheduled_thread_pool pool(2);
    chronopool::system_timer t(pool, 1h);
    t.async_wait([witness](const error_code&) {});
    test_support::injected_step step(10min);
  }
  test_support::injected_step after(1h);
  BOOST_TEST(witness.use_count() == 1);
}

BOOST_AUTO_TEST_CASE(blocking_wait_follows_a_forward_step) {
  asio::io_context io;
  chronopool::system_timer t(io, 1h);
  std::thread stepper([] {
    std::this_thread::sleep_for(50ms);
    cpd::inject_clock_step(2h);
  });
  const auto start = steady::now();
  t.wait();
  stepper.join();
  BOOST_TEST((steady::now() - start < long_wait / 2));
  BOOST_TEST((cpd::system_now() >= t.expiry()));
  cpd::inject_clock_step(-2h);
}

// Opt-in (CHRONOPOOL_TEST_CLOCK_STEP=1): the machine's clock really stepped
// forward by 3 s completes a wait due in 2 s at once; stepped back by 3 s,
// a wait due in 1 s waits for the wall clock to come back to its expiry.
// The clock is stepped back by as much each time.
BOOST_AUTO_TEST_CASE(real_steps_of_the_clock_move_pending_waits) {
  if (!test_support::may_step_the_machine_clock()) {
    BOOST_TEST_MESSAGE("skipped: set CHRONOPOOL_TEST_CLOCK_STEP=1 to let this test step the machine's clock");
    return;
  }
  asio::io_context io;
  running r(io);
  {
    chronopool::system_timer t(io, 2s);
    wall_outcome o;
    t.async_wait(o.handler());
    std::this_thread::sleep_for(20ms);
    const auto start = steady::now();
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(3s), "errno " << errno);
    const bool completed = o.wait();
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(-3s), "errno " << errno);
    BOOST_REQUIRE(completed);
    BOOST_TEST(!o.ec);
    BOOST_TEST((o.at - start < 1s));  // not the 2 s of the steady deadline armed
  }
  {
    chronopool::system_timer t(io, 1s);
    wall_outcome o;
    t.async_wait(o.handler());
    std::this_thread::sleep_for(20ms);
    const auto start = steady::now();
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(-3s), "errno " << errno);
    std::this_thread::sleep_for(1500ms);
    BOOST_TEST(o.calls.load() == 0);  // its expiry is 4 s away on the wall clock now
    BOOST_TEST_REQUIRE(test_support::step_machine_clock(3s), "errno " << errno);
    BOOST_REQUIRE(o.wait());
    BOOST_TEST(!o.ec);
    BOOST_TEST((o.at - start < 2500ms));
    BOOST_TEST((o.wall_at >= t.expiry()));
  }
}

BOOST_AUTO_TEST_SUITE_END()

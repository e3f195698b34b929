// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Cancelling steady_timer waits: aborts delivered in batches, and cancels from
// other threads racing expiry and delivery.
#include "timer_modes_support.hpp"

BOOST_AUTO_TEST_SUITE(timer_modes)

// ---- cancelled waits are delivered in batches -----------------------------------------

BOOST_AUTO_TEST_CASE(cancelled_handlers_run_in_cancellation_order) {
  asio::io_context io;
  std::vector<timer> timers;
  for (int i = 0; i < 5; ++i) timers.emplace_back(io, far_away);
  std::vector<int> order;
  for (int i = 0; i < 5; ++i)
    timers[static_cast<std::size_t>(i)].async_wait([&order, i](const error_code& ec) {
      BOOST_TEST((ec == asio::error::operation_aborted));
      order.push_back(i);
    });
  for (int i : {3, 0, 4, 1, 2}) BOOST_TEST(timers[static_cast<std::size_t>(i)].cancel() == 1u);
  BOOST_TEST(order.empty());  // never inside cancel()
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((order == std::vector<int>{3, 0, 4, 1, 2}));
}

BOOST_AUTO_TEST_CASE(a_thousand_cancels_cost_the_context_one_operation) {
  // Asio posts one operation per cancelled wait; chronopool's shard posts one
  // delivery for the whole batch (plus, here, the aborted native wake-up,
  // disarmed because nothing is left to wait for).
  asio::io_context io;
  std::vector<timer> timers;
  timers.reserve(1000);
  int aborted = 0;
  for (int i = 0; i < 1000; ++i) {
    timers.emplace_back(io, far_away);
    timers.back().async_wait([&aborted](const error_code& ec) {
      if (ec == asio::error::operation_aborted) ++aborted;
    });
  }
  for (auto& t : timers) BOOST_TEST_REQUIRE(t.cancel() == 1u);
  const std::size_t operations = io.poll();
  BOOST_TEST(aborted == 1000);
  BOOST_TEST(operations <= 2u);
  BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 0u);
}

BOOST_AUTO_TEST_CASE(cancels_racing_the_delivery_of_their_batch_all_complete_once) {
  // Two threads cancel while the io thread delivers earlier batches: every
  // wait ends exactly once, none is left behind in a batch nobody posts.
  asio::io_context io;
  constexpr int per_thread = 2000;
  std::vector<timer> timers;
  timers.reserve(2 * per_thread);
  std::atomic<int> aborted{0};
  for (int i = 0; i < 2 * per_thread; ++i) {
    timers.emplace_back(io, far_away);
    timers.back().async_wait([&aborted](const error_code& ec) {
      if (ec == asio::error::operation_aborted) aborted.fetch_add(1);
    });
  }
  std::atomic<int> cancelled{0};
  {
    io_thread runner(io);
    auto cancel_range = [&](int from) {
      for (int i = from; i < from + per_thread; ++i) cancelled += static_cast<int>(timers[static_cast<std::size_t>(i)].cancel());
    };
    std::thread a(cancel_range, 0), b(cancel_range, per_thread);
    a.join();
    b.join();
    BOOST_TEST(runner.drain());
  }
  BOOST_TEST(cancelled.load() == 2 * per_thread);
  BOOST_TEST(aborted.load() == 2 * per_thread);
}

BOOST_AUTO_TEST_CASE(a_due_wait_is_cancellable_until_its_handler_is_called) {
  // A burst of due waits is delivered in chunks: the first on the thread
  // that found them, the rest posted. A wait in a posted chunk has fired but
  // its handler has not run: cancel() still counts it, and it completes with
  // operation_aborted. (Found by the timer fuzzer: an early version made
  // such waits uncancellable while the model said they were pending.)
  asio::io_context io;
  constexpr int n = 40;
  std::vector<timer> timers;
  timers.reserve(n);
  int succeeded = 0, aborted = 0;
  for (int i = 0; i < n; ++i) {
    timers.emplace_back(io, steady::now() - 1s);  // due at once
    timers.back().async_wait([&](const error_code& ec) { ++(ec ? aborted : succeeded); });
  }
  BOOST_TEST(io.poll_one() == 1u);  // the wake-up: delivers the first chunk only
  BOOST_TEST(succeeded > 0);
  BOOST_TEST(succeeded < n);
  const int delivered = succeeded;
  std::size_t cancelled = 0;
  for (auto& t : timers) cancelled += t.cancel();
  BOOST_TEST(cancelled == static_cast<std::size_t>(n - delivered));
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(succeeded == delivered);
  BOOST_TEST(aborted == n - delivered);
}

// ---- cross-thread cancel ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(cancel_from_another_thread_while_running) {
  asio::io_context io;
  timer t(io, far_away);
  sync_outcome o;
  t.async_wait(o.handler());
  bool ran_out_of_work = false;
  std::thread runner([&] {
    io.run_for(long_wait);
    ran_out_of_work = io.stopped();
  });
  const auto runner_id = runner.get_id();
  std::this_thread::sleep_for(20ms);  // let run() block on the pending wait
  const std::size_t n = t.cancel();
  const bool completed = o.wait();
  runner.join();
  BOOST_TEST(n == 1u);
  BOOST_TEST(completed);
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
  BOOST_TEST((o.thread() == runner_id));
  BOOST_TEST(ran_out_of_work);
}

BOOST_AUTO_TEST_CASE(expires_after_and_cancel_one_from_another_thread) {
  asio::io_context io;
  timer t(io, far_away);
  sync_outcome first, second, third;
  t.async_wait(first.handler());
  t.async_wait(second.handler());
  std::size_t one = 0, rest = 0;
  {
    io_thread runner(io);
    std::this_thread::sleep_for(10ms);
    one = t.cancel_one();
    BOOST_TEST(first.wait());
    rest = t.expires_after(10ms);
    t.async_wait(third.handler());  // async_wait is thread-safe too
    BOOST_TEST(second.wait());
    BOOST_TEST(third.wait());
    BOOST_TEST(runner.drain());
  }
  BOOST_TEST(one == 1u);
  BOOST_TEST(rest == 1u);
  BOOST_TEST((first.ec() == asio::error::operation_aborted));
  BOOST_TEST((second.ec() == asio::error::operation_aborted));
  BOOST_TEST(!third.ec());
  BOOST_TEST((third.at() >= t.expiry()));
  BOOST_TEST(first.calls() + second.calls() + third.calls() == 3);
}

namespace {

/// One wait of the cancel-vs-expiry race.
struct race_slot {
  std::atomic<int> calls{0};
  std::atomic<int> result{-1};  // 0 success, 1 operation_aborted, 2 anything else
  std::size_t cancelled = 0;    // what cancel() returned
};

/// Starts @p iterations waits on @p ctx, each cancelled from this thread at
/// about its expiry; every wait must complete once, and cancel() must return
/// 1 exactly when the wait was aborted.
template <class Context>
void race_cancel_against_expiry(Context& ctx, std::deque<race_slot>& slots, int iterations) {
  for (int i = 0; i < iterations; ++i) {
    race_slot& s = slots.emplace_back();
    timer t(ctx);
    t.expires_after(2ms);
    const auto expiry = t.expiry();
    t.async_wait([&s](const error_code& ec) {
      s.result.store(!ec ? 0 : ec == asio::error::operation_aborted ? 1 : 2);
      s.calls.fetch_add(1);
    });
    std::this_thread::sleep_until(expiry + std::chrono::microseconds(-300 + (i % 7) * 100));
    s.cancelled = t.cancel();
    const auto limit = steady::now() + long_wait;
    while (s.calls.load() == 0 && steady::now() < limit) std::this_thread::sleep_for(50us);
    BOOST_REQUIRE_MESSAGE(s.calls.load() != 0, "wait " << i << " never completed");
  }
}

void check_race(std::deque<race_slot>& slots) {
  int aborted = 0, succeeded = 0, disagreements = 0, bad_calls = 0, bad_results = 0;
  for (race_slot& s : slots) {
    if (s.calls.load() != 1) ++bad_calls;
    const int r = s.result.load();
    if (r == 0) ++succeeded;
    if (r == 1) ++aborted;
    if (r != 0 && r != 1) ++bad_results;
    if ((s.cancelled == 1) != (r == 1)) ++disagreements;
  }
  BOOST_TEST_MESSAGE("cancel race: " << succeeded << " succeeded, " << aborted << " aborted");
  BOOST_TEST(bad_calls == 0);
  BOOST_TEST(bad_results == 0);
  BOOST_TEST(disagreements == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(cancel_racing_expiry_on_io_context) {
  asio::io_context io;
  std::deque<race_slot> slots;
  {
    io_thread runner(io);
    race_cancel_against_expiry(io, slots, 200);
    BOOST_TEST(runner.drain());  // a second completion would have run by now
  }
  check_race(slots);
}

BOOST_AUTO_TEST_CASE(cancel_racing_expiry_on_pool) {
  std::deque<race_slot> slots;
  {
    scheduled_thread_pool pool(2);
    race_cancel_against_expiry(pool, slots, 200);
    pool.shutdown();
    BOOST_TEST(pool.wait_for_termination(long_wait));  // nothing runs after this
  }
  check_race(slots);
}

// An idle timer's cancel() and destructor take no lock: they trust the list
// head the delivering thread clears when it unlinks the last wait.
// Destroying the timer the moment cancel() finds it idle, while that thread
// may still be finishing the delivery, must be safe (TSan checks the
// hand-over) and each wait must still complete exactly once.
BOOST_AUTO_TEST_CASE(an_idle_timer_is_destroyed_while_its_last_wait_is_delivered) {
  asio::io_context io;
  constexpr int iterations = 500;
  std::vector<std::atomic<int>> calls(iterations);
  int aborted_by_cancel = 0;
  {
    io_thread runner(io);
    for (int i = 0; i < iterations; ++i) {
      auto t = std::make_unique<timer>(io);
      BOOST_TEST(t->expires_after(0ms) == 0u);  // idle: nothing to cancel
      t->async_wait([&calls, i](const error_code&) { calls[static_cast<std::size_t>(i)].fetch_add(1); });
      // Spin until the delivering thread has it (cancel() then finds it
      // idle), or cancel it first, at varying moments: 0 to 98 us, on the
      // clock (a yield would hand the core to other processes for a time
      // slice on a loaded machine).
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds((i % 50) * 2);
      while (std::chrono::steady_clock::now() < spin_until) {
      }
      aborted_by_cancel += static_cast<int>(t->cancel());
      t.reset();
    }
    BOOST_TEST(runner.drain());
  }
  int bad = 0;
  for (auto& c : calls) bad += c.load() != 1 ? 1 : 0;
  BOOST_TEST_MESSAGE("idle-destroy race: " << aborted_by_cancel << " of " << iterations << " cancelled first");
  BOOST_TEST(bad == 0);
}

BOOST_AUTO_TEST_SUITE_END()

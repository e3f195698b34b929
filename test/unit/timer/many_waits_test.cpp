// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Many waits on one timer (Asio's idiom of a timer as an asynchronous event:
// a far expiry many coroutines wait on, then cancel() or an expiry wakes
// them all): every wait completes once, in start order, with the right
// outcome; and fired waits whose delivery has not run yet still belong to
// their timer, also after the timer object moved.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "timer_test_support.hpp"

namespace {

/// What each wait's handler saw, in the order the handlers ran.
struct outcomes {
  std::vector<std::size_t> order;
  std::vector<error_code> results;

  void start(timer& t, std::size_t waits) {
    const std::size_t first = started;
    for (std::size_t i = first; i < first + waits; ++i) {
      t.async_wait([this, i](const error_code& ec) {
        order.push_back(i);
        results.push_back(ec);
      });
    }
    started += waits;
  }
  bool in_start_order() const {
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i] != i) return false;
    return order.size() == started;
  }
  std::size_t count(const error_code& ec) const {
    std::size_t n = 0;
    for (const auto& r : results) n += r == ec ? 1 : 0;
    return n;
  }

  std::size_t started = 0;
};

// More than a delivery hands to one thread at once (16): a burst of fired
// waits is delivered in chunks, the later ones posted behind the first.
constexpr std::size_t burst = 40;
constexpr std::size_t first_chunk = 16;

/// A burst of waits on one timer that fired together: the first chunk is
/// delivered, the rest have fired and wait for their delivery.
struct half_delivered_burst {
  asio::io_context io;
  std::optional<timer> t{std::in_place, io, steady::now()};
  outcomes o;

  half_delivered_burst() {
    o.start(*t, burst);
    io.run_one();  // one turn: the due waits fire, and the first chunk is delivered at once
    BOOST_REQUIRE_EQUAL(o.order.size(), first_chunk);
  }
  /// Runs what is left; true when everything ran, each wait once, in start order.
  bool finish() {
    io.run_for(long_wait);
    return io.stopped() && o.in_start_order();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(many_waits)

BOOST_AUTO_TEST_CASE(thousands_of_waits_fire_once_each_in_start_order) {
  asio::io_context io;
  timer t(io, 20ms);
  outcomes o;
  o.start(t, 5000);
  io.run_for(long_wait);
  BOOST_TEST(io.stopped());
  BOOST_TEST(o.in_start_order());
  BOOST_TEST(o.count(error_code()) == 5000u);
  BOOST_TEST(t.cancel() == 0u);  // nothing is left linked to the timer
}

BOOST_AUTO_TEST_CASE(cancel_aborts_thousands_of_waits_once_each_in_start_order) {
  asio::io_context io;
  timer t(io, 1h);
  outcomes o;
  o.start(t, 5000);
  BOOST_TEST(t.cancel() == 5000u);
  BOOST_TEST(t.cancel() == 0u);
  io.run_for(long_wait);
  BOOST_TEST(io.stopped());
  BOOST_TEST(o.in_start_order());
  BOOST_TEST(o.count(asio::error::operation_aborted) == 5000u);
}

BOOST_FIXTURE_TEST_CASE(fired_waits_not_yet_delivered_are_still_cancelled_by_their_timer, half_delivered_burst) {
  BOOST_TEST(t->cancel() == burst - first_chunk);
  BOOST_TEST(finish());
  BOOST_TEST(o.count(error_code()) == first_chunk);
  BOOST_TEST(o.count(asio::error::operation_aborted) == burst - first_chunk);
}

BOOST_FIXTURE_TEST_CASE(fired_waits_not_yet_delivered_follow_their_timer_when_it_moves, half_delivered_burst) {
  // The waits still to be delivered move with the timer; the object they
  // fired from is gone before they are delivered.
  timer after(std::move(*t));
  t.reset();
  BOOST_TEST(finish());
  BOOST_TEST(o.count(error_code()) == burst);
  // Each left the moved timer as it was delivered: nothing is left to cancel.
  BOOST_TEST(after.cancel() == 0u);
}

BOOST_FIXTURE_TEST_CASE(moved_timer_cancels_the_fired_waits_it_took_over, half_delivered_burst) {
  timer after(std::move(*t));
  t.reset();
  BOOST_TEST(after.cancel() == burst - first_chunk);
  BOOST_TEST(finish());
  BOOST_TEST(o.count(asio::error::operation_aborted) == burst - first_chunk);
}

BOOST_AUTO_TEST_CASE(shutdown_now_aborts_thousands_of_waits_on_one_timer_in_start_order) {
  chronopool::scheduled_thread_pool pool(1);
  outcomes o;
  {
    timer t(pool, 1h);
    o.start(t, 5000);
    // The pool's shutdown_now() aborts every wait (the timers' wake-up task
    // is cancelled); their handlers run on the pool as it drains.
    pool.shutdown_now();
    BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  }
  BOOST_TEST(o.in_start_order());
  BOOST_TEST(o.count(asio::error::operation_aborted) == 5000u);
}

BOOST_AUTO_TEST_SUITE_END()

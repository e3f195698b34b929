// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A deadline left to the poll (native mode) while the thread running the
// poll is held up: another thread of the context completes it.
#include "timer_test_support.hpp"
#include "../../support/bounded_wait.hpp"

#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

namespace {

/// Waits until @p done holds, or @p limit passed; whether it holds.
template <class Pred>
bool wait_until(Pred done, steady::duration limit) {
  return test_support::eventually(done, limit, 100us);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(poll_rescue)

BOOST_AUTO_TEST_CASE(a_wait_left_to_a_stalled_poll_is_completed_by_another_thread) {
  // Two threads run the context, with a poll window: the native timer wakes
  // a millisecond before A and the poll waits out the rest. A's handler,
  // which the poll completes inline, holds its thread up (as a thread
  // descheduled in the poll's turn would be). B, started then and due
  // 300 us later, is left to that poll and passes. A thread that then arms
  // other timers drains them into the shard, finds the poll's time long
  // passed and posts a collect: the other thread completes B while A's
  // handler still blocks. (Should the native timer come so late that A is
  // collected outside a poll, B gets a poll of its own on the other thread:
  // the test then passes without the rescue.)
  asio::io_context io;
  chronopool::set_poll_window(io, 1ms);
  auto work = asio::make_work_guard(io);
  std::thread runners[2] = {std::thread([&] { io.run_for(long_wait); }), std::thread([&] { io.run_for(long_wait); })};

  // The handlers only record: Boost.Test's checks are for this thread.
  std::atomic<bool> a_running{false}, release_a{false}, b_done{false};
  std::thread::id a_thread, b_thread;
  error_code b_ec = asio::error::would_block;
  timer a(io, 50ms), b(io);
  a.async_wait([&](const error_code&) {
    a_thread = std::this_thread::get_id();
    a_running = true;
    wait_until([&] { return release_a.load(); }, long_wait);
  });

  std::vector<timer> others;
  const bool a_started = wait_until([&] { return a_running.load(); }, long_wait);
  BOOST_TEST(a_started);
  if (a_started) {
    const auto b_due = steady::now() + 300us;
    b.expires_at(b_due);
    b.async_wait([&](const error_code& ec) {
      b_ec = ec;
      b_thread = std::this_thread::get_id();
      b_done = true;
    });
    std::this_thread::sleep_until(b_due + 2ms);
    others.reserve(64);
    for (int i = 0; i < 64; ++i) {
      others.emplace_back(io, 1h);
      others.back().async_wait([](const error_code&) {});
    }
  }
  const bool b_while_a_blocks = a_started && wait_until([&] { return b_done.load(); }, 5s);
  release_a = true;

  BOOST_TEST(b_while_a_blocks);
  const bool b_finished = wait_until([&] { return b_done.load(); }, long_wait);
  BOOST_TEST(b_finished);
  if (b_finished) {
    BOOST_TEST(!b_ec);
    BOOST_TEST((b_thread != a_thread));
  }
  for (auto& t : others) t.cancel();
  work.reset();
  for (auto& r : runners) r.join();
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Waits started without the shard's lock (a deadline at or after the time
// the shard is armed for goes through its inbox): they are cancelled,
// counted, ordered and dropped exactly as waits started under the lock.
// Each test first arms the shard with an anchor wait, so that the waits
// after it qualify, and checks unlocked_starts() to show they took that path.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "timer_test_support.hpp"

namespace {

/// An io_context whose (only) shard is armed for @p anchor_in from now.
struct armed_io {
  asio::io_context io;
  timer anchor;
  std::optional<error_code> anchor_result;
  explicit armed_io(steady::duration anchor_in = 1h) : anchor(io, anchor_in) {
    anchor.async_wait([this](const error_code& ec) { anchor_result = ec; });
  }
  chronopool::timer_service& service() { return asio::use_service<chronopool::timer_service>(io); }
  /// Cancels the anchor and runs until everything completed.
  bool finish() {
    anchor.cancel();
    io.run_for(long_wait);
    return io.stopped();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(unlocked_start)

BOOST_AUTO_TEST_CASE(cancel_right_after_the_start_finds_the_wait) {
  armed_io a;
  timer t(a.io, 2h);
  std::optional<error_code> result;
  t.async_wait([&](const error_code& ec) { result = ec; });
  // The wait is in the inbox, not linked to t yet: cancel() must see it.
  BOOST_TEST(t.cancel() == 1u);
  BOOST_TEST(a.service().unlocked_starts() == 1u);
  BOOST_TEST(a.finish());
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_thread_using_several_contexts_in_turn_keeps_its_shard_in_each) {
  // Each context's shard of this thread is armed; timers of the three are
  // made and started in turn. Were the thread handed a new shard of a
  // context whenever it came back to it (with several shards), its timers
  // would land in shards not armed for them and start under the lock.
  armed_io a, b, c;
  armed_io* const ios[] = {&a, &b, &c};
  constexpr std::size_t rounds = 8;
  std::vector<timer> timers;
  timers.reserve(rounds * std::size(ios));
  int aborted = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (armed_io* x : ios) {
      timers.emplace_back(x->io, 2h);
      timers.back().async_wait([&](const error_code& ec) { aborted += ec == asio::error::operation_aborted; });
    }
  }
  for (timer& t : timers) BOOST_TEST(t.cancel() == 1u);
  for (armed_io* x : ios) BOOST_TEST(x->service().unlocked_starts() == rounds);
  for (armed_io* x : ios) BOOST_TEST(x->finish());
  BOOST_TEST(aborted == static_cast<int>(rounds * std::size(ios)));
}

BOOST_AUTO_TEST_CASE(cancel_one_and_a_new_expiry_find_the_wait) {
  armed_io a;
  timer t1(a.io, 2h), t2(a.io, 2h);
  int aborted = 0;
  auto count = [&](const error_code& ec) { aborted += ec == asio::error::operation_aborted; };
  t1.async_wait(count);
  t2.async_wait(count);
  BOOST_TEST(t1.cancel_one() == 1u);
  BOOST_TEST(t2.expires_after(3h) == 1u);
  BOOST_TEST(a.service().unlocked_starts() == 2u);
  BOOST_TEST(a.finish());
  BOOST_TEST(aborted == 2);
}

BOOST_AUTO_TEST_CASE(destroying_the_timer_cancels_the_wait) {
  armed_io a;
  std::optional<error_code> result;
  {
    timer t(a.io, 2h);
    t.async_wait([&](const error_code& ec) { result = ec; });
  }
  BOOST_TEST(a.service().unlocked_starts() == 1u);
  BOOST_TEST(a.finish());
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(pending_waits_counts_waits_in_the_inbox) {
  armed_io a;
  timer t(a.io, 2h);
  t.async_wait([](const error_code&) {});
  // Nothing has locked the shard since: the wait is still in the inbox.
  BOOST_TEST(a.service().pending_waits() == 2u);
  BOOST_TEST(a.service().unlocked_starts() == 0u);
  t.cancel();
  BOOST_TEST(a.finish());
  BOOST_TEST(a.service().pending_waits() == 0u);
}

BOOST_AUTO_TEST_CASE(the_inbox_stays_short_when_nothing_locks_the_shard) {
  // Waits armed far ahead with nothing firing: the starting thread drains
  // the inbox itself now and then, so a later cancel does not inherit a
  // drain of everything ever started.
  armed_io a;
  constexpr std::size_t n = 1000;
  std::vector<std::unique_ptr<timer>> timers;
  for (std::size_t i = 0; i < n; ++i) {
    timers.push_back(std::make_unique<timer>(a.io, 2h));
    timers.back()->async_wait([](const error_code&) {});
  }
  BOOST_TEST(a.service().pending_waits() == n + 1);
  const std::uint64_t in_inbox = n - a.service().unlocked_starts();
  BOOST_TEST(in_inbox < 64u);
  for (auto& t : timers) t->cancel();
  BOOST_TEST(a.service().unlocked_starts() == n);
  BOOST_TEST(a.finish());
}

BOOST_AUTO_TEST_CASE(equal_deadlines_complete_in_start_order_whichever_path) {
  armed_io a(20ms);
  const auto due = steady::now() + 60ms;
  timer t1(a.io, due), t2(a.io, due), t3(a.io, due);
  std::vector<std::string> order;
  auto record = [&](std::string name) {
    return [&order, name](const error_code& ec) {
      if (!ec) order.push_back(name);
    };
  };
  t1.async_wait(record("t1"));
  t2.async_wait(record("t2a"));  // unlocked: t2's claim is pending
  t2.async_wait(record("t2b"));  // the same timer again: under the lock, after t2a
  t3.async_wait(record("t3"));
  a.io.run_for(long_wait);  // the anchor fires, then the rest at `due`
  BOOST_TEST(a.io.stopped());
  BOOST_TEST(a.service().unlocked_starts() == 3u);
  const std::vector<std::string> expected{"t1", "t2a", "t2b", "t3"};
  BOOST_TEST(order == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_wait_nearer_than_the_armed_time_takes_the_lock) {
  armed_io a;
  timer t(a.io, 1ms);
  bool fired = false;
  t.async_wait([&](const error_code& ec) { fired = !ec; });
  BOOST_TEST(a.service().unlocked_starts() == 0u);
  for (int i = 0; i < 100 && !fired; ++i) a.io.run_one_for(long_wait);
  BOOST_TEST(fired);
  BOOST_TEST(a.finish());
}

BOOST_AUTO_TEST_CASE(per_operation_cancellation_reaches_the_wait) {
  armed_io a;
  timer t(a.io, 2h);
  asio::cancellation_signal signal;
  std::optional<error_code> result;
  t.async_wait(asio::bind_cancellation_slot(signal.slot(), [&](const error_code& ec) { result = ec; }));
  signal.emit(asio::cancellation_type::terminal);
  // Aborted now, not when something else next locks the shard (the armed
  // wake-up is an hour away): running what is ready completes it.
  a.io.restart();
  a.io.poll();
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
  BOOST_TEST(a.service().unlocked_starts() == 1u);
  BOOST_TEST(a.finish());
}

BOOST_AUTO_TEST_CASE(a_moved_timer_takes_its_wait_along) {
  armed_io a;
  timer t(a.io, 2h);
  std::optional<error_code> result;
  t.async_wait([&](const error_code& ec) { result = ec; });
  timer moved(std::move(t));
  BOOST_TEST(t.cancel() == 0u);
  BOOST_TEST(moved.cancel() == 1u);
  BOOST_TEST(a.finish());
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_context_destroyed_drops_the_wait_uncalled) {
  // Standalone waits (async_sleep's kind): no timer object locks the shard
  // before the context goes, so the second wait is still in the inbox then.
  auto token = std::make_shared<int>(0);
  bool called = false;
  {
    asio::io_context io;
    auto& service = asio::use_service<chronopool::timer_service>(io);
    service.async_wait_at(steady::now() + 1h, [&called, token](const error_code&) { called = true; },
                          io.get_executor());
    service.async_wait_at(steady::now() + 2h, [&called, token](const error_code&) { called = true; },
                          io.get_executor());
    BOOST_TEST(token.use_count() == 3);
    BOOST_TEST(service.unlocked_starts() == 0u);  // not drained yet
  }
  BOOST_TEST(!called);
  BOOST_TEST(token.use_count() == 1);  // both handlers were destroyed with the context
}

BOOST_AUTO_TEST_CASE(on_a_pool_the_wait_fires_and_cancels_the_same_way) {
  chronopool::scheduled_thread_pool pool(2);
  auto& service = asio::use_service<chronopool::timer_service>(pool);
  std::promise<error_code> anchor_done, fired, cancelled;
  timer anchor(pool, 20ms), t1(pool, 60ms), t2(pool, 2h);
  anchor.async_wait([&](const error_code& ec) { anchor_done.set_value(ec); });
  t1.async_wait([&](const error_code& ec) { fired.set_value(ec); });
  t2.async_wait([&](const error_code& ec) { cancelled.set_value(ec); });
  BOOST_TEST(t2.cancel() == 1u);
  auto f1 = fired.get_future();
  auto f2 = cancelled.get_future();
  BOOST_REQUIRE((f1.wait_for(long_wait) == std::future_status::ready));
  BOOST_REQUIRE((f2.wait_for(long_wait) == std::future_status::ready));
  BOOST_TEST(!f1.get());
  BOOST_TEST((f2.get() == asio::error::operation_aborted));
  BOOST_TEST(service.unlocked_starts() == 2u);
  BOOST_TEST((steady::now() >= t1.expiry()));
}

BOOST_AUTO_TEST_CASE(two_threads_racing_on_one_timer_complete_every_wait_once) {
  // One thread starts waits (unlocked when it can), another moves the
  // expiry (which cancels them) and cancels; every wait completes once, and
  // the cancels reported match the aborted completions.
  asio::io_context io;
  timer anchor(io, 1h);
  anchor.async_wait([](const error_code&) {});
  timer shared(io, 2h);
  constexpr int waits = 20000;
  std::atomic<int> completed{0}, aborted{0}, reported{0};
  std::atomic<bool> starting_done{false};
  std::thread starter([&] {
    for (int i = 0; i < waits; ++i) {
      shared.async_wait([&](const error_code& ec) {
        ++completed;
        if (ec == asio::error::operation_aborted) ++aborted;
      });
    }
    starting_done = true;
  });
  std::thread canceller([&] {
    int round = 0;
    while (!starting_done) {
      reported += (++round % 2) ? static_cast<int>(shared.expires_after(2h)) : static_cast<int>(shared.cancel());
    }
  });
  starter.join();
  canceller.join();
  reported += static_cast<int>(shared.cancel());
  anchor.cancel();
  io.run_for(long_wait);
  BOOST_TEST(io.stopped());
  BOOST_TEST(completed == waits);
  BOOST_TEST(aborted == waits);
  BOOST_TEST(reported == waits);
}

BOOST_AUTO_TEST_SUITE_END()

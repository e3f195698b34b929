// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A timer's first wait, when its handler is two words or less and moves
// without throwing (a lambda capturing a pointer or two, a coroutine's
// handler), lives in the timer object itself instead of a block of its own
// (detail::timer_impl).
// These tests take such a wait through every way it leaves the timer —
// fired, cancelled, cancelled by a new expiry, moved with the timer, the
// timer destroyed, the context going, a pool shut down — and check that it
// completes exactly once, with the right outcome, in start order with the
// timer's other waits.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "timer_test_support.hpp"

namespace {

/// What the handlers saw, in the order they ran.
struct tally {
  std::vector<int> order;
  std::vector<error_code> results;
};

/// One wait's identity; its handler captures a pointer to it, one word.
struct waiter {
  tally* into;
  int id;
  void done(const error_code& ec) const {
    into->order.push_back(id);
    into->results.push_back(ec);
  }
};

void wait_inline(timer& t, const waiter& w) {
  const waiter* p = &w;
  t.async_wait([p](const error_code& ec) { p->done(ec); });
}

/// A one-word handler that counts how it ends: called, or destroyed uncalled.
struct ending {
  int called = 0;
  int destroyed_uncalled = 0;
};
class counted_handler {
 public:
  explicit counted_handler(ending* e) noexcept : e_(e) {}
  counted_handler(counted_handler&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  counted_handler& operator=(counted_handler&&) = delete;
  ~counted_handler() {
    if (e_ != nullptr) ++e_->destroyed_uncalled;
  }
  void operator()(const error_code&) { ++std::exchange(e_, nullptr)->called; }

 private:
  ending* e_;
};
static_assert(sizeof(counted_handler) == sizeof(void*));

bool all(const tally& t, const error_code& expected) {
  for (const auto& ec : t.results)
    if (ec != expected) return false;
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inline_wait)

BOOST_AUTO_TEST_CASE(it_fires_first_then_the_timers_other_waits_in_start_order) {
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0}, b{&seen, 1}, c{&seen, 2};
  timer t(io, 2ms);
  wait_inline(t, a);  // the inline wait
  wait_inline(t, b);  // blocks: the inline one is taken
  wait_inline(t, c);
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(all(seen, error_code()));
  // Free again: the next wait is inline once more, and fires.
  t.expires_after(1ms);
  wait_inline(t, a);
  io.restart();
  io.run();
  BOOST_TEST(seen.order.size() == 4u);
}

BOOST_AUTO_TEST_CASE(cancel_aborts_it_after_the_call_returns) {
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0}, b{&seen, 1};
  timer t(io, 1h);
  wait_inline(t, a);
  wait_inline(t, b);
  BOOST_TEST(t.cancel() == 2u);
  BOOST_TEST(seen.order.empty());  // never inside the call (Asio's rule)
  BOOST_TEST(t.cancel() == 0u);
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0, 1}), boost::test_tools::per_element());
  BOOST_TEST(all(seen, asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(many_cancelled_with_handlers_of_two_types_complete_in_cancel_order) {
  // Aborted inline waits are delivered from records kept many to a block,
  // a block holding handlers of one type: a mix of types, and more waits
  // than one block holds, still completes each once, in cancel order.
  struct other_type {  // two words where wait_inline's lambda is one: records of another size
    const waiter* w;
    int offset;
    void operator()(const error_code& ec) const {
      w->into->order.push_back(offset + w->id);
      w->into->results.push_back(ec);
    }
  };
  asio::io_context io;
  tally seen;
  constexpr int n = 100;
  std::vector<waiter> waiters;
  std::vector<std::unique_ptr<timer>> timers;
  for (int i = 0; i < n; ++i) waiters.push_back(waiter{&seen, i});
  std::vector<int> expected;
  for (int i = 0; i < n; ++i) {
    timers.push_back(std::make_unique<timer>(io, 1h));
    // Runs of one type of varying length, then of the other.
    if ((i / 3 + i / 17) % 2 == 0) {
      wait_inline(*timers.back(), waiters[static_cast<std::size_t>(i)]);
    } else {
      timers.back()->async_wait(other_type{&waiters[static_cast<std::size_t>(i)], 1000});
    }
    expected.push_back((i / 3 + i / 17) % 2 == 0 ? i : 1000 + i);
  }
  for (auto& t : timers) BOOST_TEST(t->cancel() == 1u);
  io.run();
  BOOST_TEST(seen.order == expected, boost::test_tools::per_element());
  BOOST_TEST(all(seen, asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(cancel_one_takes_the_inline_wait_first) {
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0}, b{&seen, 1};
  timer t(io, 1h);
  wait_inline(t, a);
  wait_inline(t, b);
  BOOST_TEST(t.cancel_one() == 1u);
  io.run_for(5ms);
  BOOST_TEST(seen.order == (std::vector<int>{0}), boost::test_tools::per_element());
  BOOST_TEST(t.cancel_one() == 1u);
  BOOST_TEST(t.cancel_one() == 0u);
  io.restart();
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0, 1}), boost::test_tools::per_element());
  BOOST_TEST(all(seen, asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_wait_still_on_its_way_to_the_shard_keeps_the_inline_wait_for_older_ones) {
  // Found by the timer_ops fuzzer: a wait in a block started without the
  // lock sits in the shard's inbox, not linked to its timer yet; a one-word
  // wait started next must not take the inline place, which cancel_one()
  // treats as the oldest.
  asio::io_context io;
  tally seen;
  const waiter b{&seen, 1};
  timer anchor(io, 1h);  // arms the shard: later waits start without the lock
  wait_inline(anchor, b);
  timer t(io, 2h);
  tally* into = &seen;
  t.async_wait([into, id = 0, pad = std::size_t{0}](const error_code& ec) {  // three words: a block
    into->order.push_back(id + static_cast<int>(pad));
    into->results.push_back(ec);
  });
  const waiter c{&seen, 2};
  wait_inline(t, c);
  BOOST_TEST(t.cancel_one() == 1u);
  io.run_for(5ms);
  BOOST_TEST(seen.order == (std::vector<int>{0}), boost::test_tools::per_element());
  BOOST_TEST(t.cancel() == 1u);
  BOOST_TEST(anchor.cancel() == 1u);
  io.restart();
  io.run();
  BOOST_TEST(seen.order.size() == 3u);
  BOOST_TEST(all(seen, asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_new_expiry_cancels_it_and_the_next_wait_keeps_the_new_one) {
  // The inline wait's deadline is the timer's expiry word: the old wait must
  // leave the index before that word changes, and the new wait is indexed
  // by the new value.
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0}, b{&seen, 1};
  timer t(io, 1h);
  wait_inline(t, a);
  const auto before = steady::now();
  BOOST_TEST(t.expires_after(3ms) == 1u);
  wait_inline(t, b);
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0, 1}), boost::test_tools::per_element());
  BOOST_REQUIRE(seen.results.size() == 2u);
  BOOST_TEST((seen.results[0] == asio::error::operation_aborted));
  BOOST_TEST(!seen.results[1]);
  BOOST_TEST((steady::now() - before >= 3ms));
}

BOOST_AUTO_TEST_CASE(a_moved_timer_takes_its_waits_along) {
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0}, b{&seen, 1};
  std::optional<timer> t(std::in_place, io, 2ms);
  wait_inline(*t, a);
  wait_inline(*t, b);
  timer moved(std::move(*t));
  BOOST_TEST(t->cancel() == 0u);  // moved-from: idle
  t.reset();                      // and gone, before the waits fire
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0, 1}), boost::test_tools::per_element());
  BOOST_TEST(all(seen, error_code()));

  // Moved while far, then cancelled through the new object.
  timer far(io, 1h);
  wait_inline(far, a);
  timer far_moved(std::move(far));
  BOOST_TEST(far.cancel() == 0u);
  BOOST_TEST(far_moved.cancel() == 1u);
  io.restart();
  io.run();
  BOOST_REQUIRE(seen.results.size() == 3u);
  BOOST_TEST((seen.results[2] == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(destroying_the_timer_aborts_it) {
  asio::io_context io;
  tally seen;
  const waiter a{&seen, 0};
  {
    timer t(io, 1h);
    wait_inline(t, a);
  }
  io.run();
  BOOST_TEST(seen.order == (std::vector<int>{0}), boost::test_tools::per_element());
  BOOST_TEST(all(seen, asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(a_context_destroyed_drops_it_uncalled) {
  // The timer object is left alive (never destroyed) so that only the
  // context's shutdown takes the wait out of it.
  ending e;
  alignas(timer) unsigned char storage[sizeof(timer)];
  {
    asio::io_context io;
    timer* t = ::new (static_cast<void*>(storage)) timer(io, 1h);
    t->async_wait(counted_handler(&e));
    BOOST_TEST(e.destroyed_uncalled == 0);  // the moved-from handlers were empty
  }
  BOOST_TEST(e.called == 0);
  BOOST_TEST(e.destroyed_uncalled == 1);
}

BOOST_AUTO_TEST_CASE(a_pool_shut_down_now_aborts_it) {
  chronopool::scheduled_thread_pool pool(2);
  ending e;
  std::atomic<int> aborted{0};
  timer t(pool, 1h);
  std::atomic<int>* counter = &aborted;
  t.async_wait([counter](const error_code& ec) {
    if (ec == asio::error::operation_aborted) counter->fetch_add(1);
  });
  timer u(pool, 1h);
  u.async_wait(counted_handler(&e));
  pool.shutdown_now();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(aborted.load() == 1);
  BOOST_TEST(e.called == 1);
  BOOST_TEST(e.destroyed_uncalled == 0);
}

BOOST_AUTO_TEST_CASE(a_handler_holding_a_shared_ptr_waits_inline_and_lets_go_once) {
  // The server's usual handler: [self = shared_from_this()] is two words that
  // move without throwing, so its wait lives in the timer. Fired, cancelled,
  // moved with its timer, and aborted by the timer's destructor but dropped
  // by its context, destroyed before it ran the abort, the handler is moved
  // out of the timer and destroyed exactly once: the count comes back to 1.
  auto self = std::make_shared<int>(0);
  static_assert(sizeof(self) == 2 * sizeof(void*));
  const auto wait_holding = [&self](timer& t) {
    t.async_wait([s = self](const error_code& ec) { *s += ec ? 100 : 1; });
  };
  {
    asio::io_context io;
    timer fires(io, 1ms);
    timer cancelled(io, 1h);
    timer far(io, 1h);
    wait_holding(fires);
    wait_holding(cancelled);
    wait_holding(far);
    BOOST_TEST(self.use_count() == 4);  // three handlers held in their timers
    BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 3u);
    timer moved(std::move(far));
    BOOST_TEST(self.use_count() == 4);  // the move relocated it, no copy
    BOOST_TEST(cancelled.cancel() == 1u);
    // The fire and the abort; `moved` stays pending.
    const auto give_up = std::chrono::steady_clock::now() + long_wait;
    while (*self != 101 && std::chrono::steady_clock::now() < give_up) io.run_one_for(10ms);
    BOOST_TEST(*self == 101);
    BOOST_TEST(self.use_count() == 2);  // only the moved timer's handler still holds it
  }
  BOOST_TEST(*self == 101);  // dropped uncalled
  BOOST_TEST(self.use_count() == 1);
}

BOOST_AUTO_TEST_CASE(a_coroutines_wait_is_inline_and_completes) {
  // use_awaitable's handler is one word: the coroutine's wait lives in its
  // timer, which lives in the coroutine's frame.
  asio::io_context io;
  std::vector<error_code> results;
  auto sleeper = [&](std::chrono::milliseconds d) -> asio::awaitable<void> {
    timer t(co_await asio::this_coro::executor, d);
    error_code ec;
    try {
      co_await t.async_wait(asio::use_awaitable);
    } catch (const sys_ns::system_error& e) {
      ec = e.code();
    }
    results.push_back(ec);
  };
  asio::co_spawn(io, sleeper(1ms), asio::detached);
  asio::co_spawn(io, sleeper(2ms), asio::detached);
  io.run();
  BOOST_TEST(results.size() == 2u);
  for (const auto& ec : results) BOOST_TEST(!ec);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(handler_size_rule)

// The rule basic_scheduled_timer::async_wait and docs/performance.md state:
// two words wait inline, three or four take a block. A change to the rule
// must change those docs too.
BOOST_AUTO_TEST_CASE(two_words_wait_inline_three_and_four_do_not) {
  int a = 0;
  long b = 0;
  void* c = nullptr;
  std::size_t d = 0;
  auto two = [&a, &b](const error_code&) { (void)a, (void)b; };
  auto three = [&a, &b, c](const error_code&) { (void)a, (void)b, (void)c; };
  auto four = [&a, &b, c, d](const error_code&) { (void)a, (void)b, (void)c, (void)d; };
  using two_t = decltype(two);
  using three_t = decltype(three);
  using four_t = decltype(four);
  BOOST_TEST(sizeof(two_t) == 2 * sizeof(void*));
  BOOST_TEST(sizeof(three_t) == 3 * sizeof(void*));
  BOOST_TEST(sizeof(four_t) == 4 * sizeof(void*));
  BOOST_TEST((chronopool::detail::inline_capable<two_t, two_t>));
  BOOST_TEST(!(chronopool::detail::inline_capable<three_t, three_t>));
  BOOST_TEST(!(chronopool::detail::inline_capable<four_t, four_t>));
}

BOOST_AUTO_TEST_SUITE_END()

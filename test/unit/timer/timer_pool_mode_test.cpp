// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// steady_timer driven by a pool: waits on a scheduled_thread_pool, and an
// io_context's waits kept by a pool (use_pool).
#include "timer_modes_support.hpp"

BOOST_AUTO_TEST_SUITE(timer_modes)

// ---- on a scheduled_thread_pool --------------------------------------------------

BOOST_AUTO_TEST_CASE(pool_timer_completes_on_a_pool_thread) {
  scheduled_thread_pool pool(2);
  sync_outcome expired(&pool), cancelled(&pool);
  timer t(pool, 20ms);
  const auto expiry = t.expiry();
  t.async_wait(expired.handler());
  BOOST_REQUIRE(expired.wait());
  BOOST_TEST(expired.calls() == 1);
  BOOST_TEST(!expired.ec());
  BOOST_TEST((expired.at() >= expiry));
  BOOST_TEST(expired.on_pool());

  t.expires_after(far_away);
  t.async_wait(cancelled.handler());
  BOOST_TEST(t.cancel() == 1u);
  BOOST_REQUIRE(cancelled.wait());
  BOOST_TEST((cancelled.ec() == asio::error::operation_aborted));
  BOOST_TEST(cancelled.on_pool());
}

BOOST_AUTO_TEST_CASE(pool_timer_keeps_the_pool_executor_it_was_made_with) {
  scheduled_thread_pool pool(1), other(1);
  const asio::any_io_executor plain = pool.get_executor();
  const asio::any_io_executor continuation = asio::prefer(plain, asio::execution::relationship.continuation);
  for (const auto& ex : {plain, continuation}) {
    timer t(ex);
    BOOST_TEST((t.get_executor() == ex));
    timer moved(std::move(t));
    BOOST_TEST((moved.get_executor() == ex));
    BOOST_TEST((t.get_executor() == ex));
  }
  timer from_pool(pool);
  BOOST_TEST((from_pool.get_executor() == plain));
  BOOST_TEST(!(from_pool.get_executor() == asio::any_io_executor(other.get_executor())));
}

// A context's own executor is not stored (detail::timer_object_impl rebuilds
// it from the context of the timer's home shard), and the service is found
// through that shard: a timer object is its state, eight words with its
// inline wait (the index node: expiry, sequence, slot; one word for the home
// and the inline wait's operations; first and last wait in blocks; a handler
// of two words), so that a pending timer with a handler of two words or less
// costs nothing more.
BOOST_AUTO_TEST_CASE(a_timer_object_is_eight_words) {
  BOOST_TEST(sizeof(timer) == 8 * sizeof(void*));
}

// A wait with a one-pointer handler takes 7 words, so that malloc gives it a
// 64-byte block (the list links share words with what is not in use then).
BOOST_AUTO_TEST_CASE(a_wait_with_a_one_pointer_handler_is_seven_words) {
  struct one_pointer_handler {
    int* p;
    void operator()(const sys_ns::error_code&) const {}
  };
  BOOST_TEST(sizeof(chronopool::detail::wait_op<one_pointer_handler, asio::any_io_executor, false>) ==
             7 * sizeof(void*));
}

BOOST_AUTO_TEST_CASE(cancelling_most_far_waits_gives_the_index_buffers_back) {
  // The cancels leave a far bucket sparse; each shard gives the buffer back
  // after its lock is released (allocating the smaller one under it held the
  // lock for milliseconds with a million waits).
  asio::io_context io;
  auto& service = asio::use_service<chronopool::timer_service>(io);
  std::vector<timer> timers;
  timers.reserve(20'000);
  int aborted = 0;
  for (int i = 0; i < 20'000; ++i) {
    timers.emplace_back(io, 1h + std::chrono::microseconds(i));
    timers.back().async_wait([&aborted](const error_code& ec) {
      if (ec == asio::error::operation_aborted) ++aborted;
    });
  }
  const std::size_t peak = service.index_bytes();
  BOOST_TEST(peak >= 20'000 * sizeof(void*));
  for (std::size_t i = 0; i < timers.size(); ++i)
    if (i % 1000 != 0) BOOST_TEST_REQUIRE(timers[i].cancel() == 1u);
  io.poll();
  BOOST_TEST(aborted == 19'980);
  BOOST_TEST(service.pending_waits() == 20u);
  BOOST_TEST(service.index_bytes() * 8 <= peak);
  // The ones left are still there, and still cancel.
  for (std::size_t i = 0; i < timers.size(); i += 1000) BOOST_TEST_REQUIRE(timers[i].cancel() == 1u);
  io.poll();
  BOOST_TEST(aborted == 20'000);
}

BOOST_AUTO_TEST_CASE(pool_shutdown_now_aborts_pending_wait) {
  scheduled_thread_pool pool(2);
  timer t(pool, far_away);
  sync_outcome o(&pool);
  lifetime_probe probe;
  t.async_wait([h = o.handler(), token = std::move(probe.token)](const error_code& ec) { h(ec); });
  pool.shutdown_now();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  // The pool's threads are gone: whatever was going to happen has happened.
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
  BOOST_TEST(probe.watch.expired());
}

BOOST_AUTO_TEST_CASE(pool_shutdown_now_aborts_wait_with_handler_on_io_context) {
  asio::io_context io;
  scheduled_thread_pool pool(2);
  timer t(pool, far_away);
  sync_outcome o;
  t.async_wait(asio::bind_executor(io, o.handler()));
  pool.shutdown_now();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
}

// ---- use_pool: an io_context's waits kept by a pool ----------------------------------

BOOST_AUTO_TEST_CASE(use_pool_completes_on_the_io_context_thread) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  chronopool::use_pool(io, pool);
  BOOST_TEST(asio::use_service<chronopool::timer_service>(io).driven_by_pool());
  sync_outcome o(&pool);
  timer t(io, 40ms);
  const auto expiry = t.expiry();
  t.async_wait(o.handler());
  BOOST_TEST(pool.queued_count() >= 1u);  // the wait sits in the pool's queue
  BOOST_TEST(run_bounded(io));            // run() waited for the wait
  BOOST_TEST((steady::now() >= expiry));
  check_completed_here(o, expiry);

  // A cancelled wait also completes on the io_context's thread.
  sync_outcome c(&pool);
  t.expires_after(far_away);
  t.async_wait(c.handler());
  BOOST_TEST(t.cancel() == 1u);
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((c.ec() == asio::error::operation_aborted));
  BOOST_TEST((c.thread() == std::this_thread::get_id()));
}

// A wait already due when it starts (a zero sleep) is collected by a function
// posted to the io_context, not by a pool task: it never sits in the pool's
// queue, and due waits still complete in order, on the io_context's thread.
// Once the pool is shut down its policies decide, as for any wait.
BOOST_AUTO_TEST_CASE(use_pool_due_waits_skip_the_pool_queue) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  chronopool::use_pool(io, pool);
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  timer a(io, steady::now() - 1ms);
  timer b(io, steady::now() - 1ms);
  a.async_wait([&](const error_code& ec) {
    if (!ec) order.push_back(1);
    threads.push_back(std::this_thread::get_id());
  });
  b.async_wait([&](const error_code& ec) {
    if (!ec) order.push_back(2);
    threads.push_back(std::this_thread::get_id());
  });
  BOOST_TEST(pool.queued_count() == 0u);  // no wake-up task
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((order == std::vector<int>{1, 2}));
  BOOST_TEST_REQUIRE(threads.size() == 2u);
  for (const auto& id : threads) BOOST_TEST((id == std::this_thread::get_id()));

  pool.shutdown_now();
  BOOST_TEST(pool.wait_for_termination(long_wait));
  timer c(io, steady::now() - 1ms);
  sync_outcome o;
  c.async_wait(o.handler());  // through the stopped pool: aborted, as any wait there
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
}

// After use_pool, a wait due within a hand-off (an io thread's start after a
// post, 100 us until one was measured) is not left to a pool task: a held
// collect waits for it on the io_context itself, so the io thread is not
// woken only at the deadline. It still completes there, never early.
BOOST_AUTO_TEST_CASE(use_pool_a_wait_within_a_hand_off_is_held_on_the_io_context) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  chronopool::use_pool(io, pool);
  sync_outcome o(&pool);
  timer t(io, steady::now() + 40us);
  const auto expiry = t.expiry();
  t.async_wait(o.handler());
  BOOST_TEST(pool.queued_count() == 0u);  // no wake-up task
  BOOST_TEST(run_bounded(io));
  check_completed_here(o, expiry);

  // Cancelled while it is held: aborted (cancel() came first), or completed
  // (the deadline did), once either way; and run() still returns.
  sync_outcome c(&pool);
  t.expires_after(60us);
  t.async_wait(c.handler());
  const std::size_t cancelled = t.cancel();
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(c.calls() == 1);
  BOOST_TEST((c.ec() == (cancelled == 1 ? error_code(asio::error::operation_aborted) : error_code())));
  BOOST_TEST((c.thread() == std::this_thread::get_id()));
}

// Waits a few tens of microseconds apart, after use_pool: they go back and
// forth between pool tasks (gaps longer than a hand-off) and held collects
// on the io_context (the rest). On one io thread each completes once, in
// expiry order, never before its expiry; on two, each once, never early.
BOOST_AUTO_TEST_CASE(use_pool_waits_handed_over_early_complete_once_in_order_never_early) {
  for (const int io_threads : {1, 2}) {
    BOOST_TEST_CONTEXT("io threads " << io_threads) {
      constexpr std::size_t n = 1000;
      scheduled_thread_pool pool(1);
      asio::io_context io;
      chronopool::use_pool(io, pool);
      std::mt19937 rng(20261126);
      std::uniform_int_distribution<int> offset_us(0, 50'000);
      const auto start = steady::now() + 2ms;
      std::vector<std::unique_ptr<timer>> timers;
      std::vector<steady::time_point> expiry(n);
      std::vector<std::size_t> order;
      order.reserve(n);
      std::mutex m;
      int failures = 0, early = 0;
      for (std::size_t i = 0; i < n; ++i) {
        expiry[i] = start + std::chrono::microseconds(offset_us(rng));
        auto& t = timers.emplace_back(std::make_unique<timer>(io, expiry[i]));
        t->async_wait([&, i](const error_code& ec) {
          const bool is_early = steady::now() < expiry[i];
          std::lock_guard lock(m);
          if (ec) ++failures;
          if (is_early) ++early;
          order.push_back(i);
        });
      }
      std::thread second;
      if (io_threads == 2) second = std::thread([&] { io.run_for(long_wait); });
      BOOST_TEST(run_bounded(io));
      if (second.joinable()) second.join();
      BOOST_TEST(failures == 0);
      BOOST_TEST(early == 0);
      BOOST_REQUIRE(order.size() == n);
      std::vector<std::size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      BOOST_TEST((std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()));  // each once
      if (io_threads == 1) BOOST_TEST(out_of_expiry_order(expiry, order) == 0);
    }
  }
}

// Zero sleeps, short waits and cancels mixed on a pool: every path that
// changes a shard's wake-up (a due wait collected by a posted function, a
// cancel while the wake-up task runs) must leave a wake-up queued for the
// waits that remain, or they would never complete.
BOOST_AUTO_TEST_CASE(mixed_due_future_and_cancelled_waits_on_a_pool_all_complete) {
  constexpr int rounds = 300;
  std::atomic<int> completed{0};
  int started = 0;
  {
    scheduled_thread_pool pool(2);
    std::vector<std::unique_ptr<timer>> timers;
    for (int i = 0; i < rounds; ++i) {
      auto& due = *timers.emplace_back(std::make_unique<timer>(pool, steady::now()));
      auto& soon = *timers.emplace_back(std::make_unique<timer>(pool, std::chrono::microseconds(50 * (i % 40))));
      auto& cancelled = *timers.emplace_back(std::make_unique<timer>(pool, std::chrono::milliseconds(1 + i % 3)));
      for (timer* t : {&due, &soon, &cancelled}) {
        t->async_wait([&completed](const error_code&) { completed.fetch_add(1); });
        ++started;
      }
      if (i % 2 == 0) cancelled.cancel();
      if (i % 50 == 0) std::this_thread::sleep_for(200us);
    }
    const auto limit = steady::now() + long_wait;
    while (completed.load() < started && steady::now() < limit) std::this_thread::sleep_for(1ms);
    BOOST_TEST(completed.load() == started);
    pool.shutdown_now();
  }
}

BOOST_AUTO_TEST_CASE(use_pool_after_a_timer_exists_throws) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  {
    timer t(io);
    BOOST_CHECK_THROW(chronopool::use_pool(io, pool), std::logic_error);
  }
  BOOST_CHECK_THROW(chronopool::use_pool(io, pool), std::logic_error);  // existed once
  BOOST_TEST(!asio::use_service<chronopool::timer_service>(io).driven_by_pool());

  asio::io_context io2;
  chronopool::use_pool(io2, pool);
  BOOST_CHECK_THROW(chronopool::use_pool(io2, pool), std::logic_error);  // already set
}

BOOST_AUTO_TEST_CASE(use_pool_shutdown_now_aborts_io_wait) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  chronopool::use_pool(io, pool);
  timer t(io, far_away);
  sync_outcome o;
  t.async_wait(o.handler());
  pool.shutdown_now();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
  BOOST_TEST((o.thread() == std::this_thread::get_id()));
}

BOOST_AUTO_TEST_SUITE_END()

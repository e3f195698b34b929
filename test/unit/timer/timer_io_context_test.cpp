// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// steady_timer on an io_context's own reactor: the context shut down or destroyed, timers
// moving between shards, bookkeeping, throwing handlers, saturating expiries, many timers.
#include "timer_modes_support.hpp"

BOOST_AUTO_TEST_SUITE(timer_modes)

// ---- context destruction -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(timer_destroyed_first_aborts_through_run) {
  asio::io_context io;
  sync_outcome o;
  {
    timer t(io, far_away);
    t.async_wait(o.handler());
  }
  BOOST_TEST(o.calls() == 0);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(context_destroyed_with_aborted_handler_queued_never_calls_it) {
  for (bool pooled : {false, true}) {
    BOOST_TEST_CONTEXT("use_pool " << pooled) {
      scheduled_thread_pool pool(1);
      auto io = std::make_unique<asio::io_context>();
      if (pooled) chronopool::use_pool(*io, pool);
      lifetime_probe probe;
      bool called = false;
      {
        timer t(*io, far_away);
        t.async_wait([&called, token = std::move(probe.token)](const error_code&) { called = true; });
      }
      // The aborted completion is queued on the context, which is never run.
      BOOST_TEST(!probe.watch.expired());
      io.reset();
      BOOST_TEST(probe.watch.expired());
      BOOST_TEST(!called);
    }
  }
}

BOOST_AUTO_TEST_CASE(context_shutdown_abandons_live_waits) {
  for (bool pooled : {false, true}) {
    BOOST_TEST_CONTEXT("use_pool " << pooled) {
      scheduled_thread_pool pool(1);
      shutdownable_io_context io;
      if (pooled) chronopool::use_pool(io, pool);
      lifetime_probe probe;
      bool called = false;
      timer t(io, far_away);
      t.async_wait([&called, token = std::move(probe.token)](const error_code&) { called = true; });
      BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 1u);
      io.shutdown();  // what ~io_context does first
      BOOST_TEST(probe.watch.expired());
      BOOST_TEST(!called);
      BOOST_TEST(t.cancel() == 0u);  // the abandoned wait is no longer pending
    }
  }
}

// ---- shards: a timer lives with the thread that last armed it ---------------------------

BOOST_AUTO_TEST_CASE(a_timer_armed_from_other_threads_moves_with_its_waits_intact) {
  // The service hands each thread its own shard; an idle timer moves to the
  // shard of the thread that starts a wait on it. Every other operation
  // must find it wherever it is now, from any thread.
  asio::io_context io;
  timer t(io, far_away);  // constructed here: this thread's shard
  std::vector<error_code> outcomes;
  auto handler = [&outcomes](const error_code& ec) { outcomes.push_back(ec); };
  for (int round = 0; round < 3; ++round) {
    const auto expiry = t.expiry();
    std::thread([&] { t.async_wait(handler); }).join();  // another thread: moves it
    BOOST_TEST((t.expiry() == expiry));  // its state moved with it
    // (Cancelled waits count until their handlers have them: io has not run yet.)
    auto& service = asio::use_service<chronopool::timer_service>(io);
    BOOST_TEST(service.pending_waits() == static_cast<std::size_t>(1 + 2 * round));
    t.async_wait(handler);  // this thread: it has a wait pending, so it stays
    BOOST_TEST(service.pending_waits() == static_cast<std::size_t>(2 + 2 * round));
    std::size_t cancelled = 0;
    std::thread([&] { cancelled = t.expires_after(far_away); }).join();
    BOOST_TEST(cancelled == 2u);
  }
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(outcomes.size() == 6u);
  for (const auto& ec : outcomes) BOOST_TEST((ec == asio::error::operation_aborted));
  // And a real expiry after all that moving.
  t.expires_after(1ms);
  std::thread([&] { t.async_wait(handler); }).join();
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(outcomes.size() == 7u);
  BOOST_TEST(!outcomes.back());
}

// ---- bookkeeping ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(pending_waits_counts_started_not_completed_waits) {
  asio::io_context io;
  auto& service = asio::use_service<chronopool::timer_service>(io);
  BOOST_TEST(service.pending_waits() == 0u);
  timer soon(io, 10ms);
  timer later(io, far_away);
  BOOST_TEST(service.pending_waits() == 0u);  // timers without waits
  sync_outcome a, b, c;
  soon.async_wait(a.handler());
  later.async_wait(b.handler());
  later.async_wait(c.handler());
  BOOST_TEST(service.pending_waits() == 3u);
  while (a.calls() == 0 && io.run_one_for(long_wait) != 0) {
  }
  BOOST_TEST(a.calls() == 1);
  BOOST_TEST(service.pending_waits() == 2u);
  BOOST_TEST(later.cancel() == 2u);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(b.calls() == 1);
  BOOST_TEST(c.calls() == 1);
  BOOST_TEST(service.pending_waits() == 0u);
}

// ---- handler exceptions ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(throwing_handler_propagates_out_of_run_and_service_recovers) {
  asio::io_context io;
  timer thrower(io), sibling(io);
  const auto when = steady::now() + 10ms;
  thrower.expires_at(when);
  sibling.expires_at(when);  // due in the same batch, after the thrower
  thrower.async_wait([](const error_code&) { throw std::runtime_error("handler failed"); });
  sync_outcome s;
  sibling.async_wait(s.handler());
  BOOST_CHECK_THROW(io.run_for(long_wait), std::runtime_error);

  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(s.calls() == 1);  // not lost to the exception
  BOOST_TEST(!s.ec());

  sync_outcome next;
  thrower.expires_after(10ms);
  thrower.async_wait(next.handler());
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(next.calls() == 1);
  BOOST_TEST(!next.ec());
  BOOST_TEST((next.at() >= thrower.expiry()));
}

// A drain that takes a batch of many aborts stays to take again (a mass
// cancel streaming in); a handler throwing in it must not leave the shard
// believing a drain is still coming.
BOOST_AUTO_TEST_CASE(a_handler_throwing_in_a_large_abort_batch_loses_no_later_abort) {
  asio::io_context io;
  constexpr std::size_t n = 40;  // well over the batch size from which a drain stays
  std::vector<timer> timers;
  timers.reserve(n);
  for (std::size_t i = 0; i < n; ++i) timers.emplace_back(io, 1h);
  std::size_t aborted = 0;
  timers[0].async_wait([](const error_code&) { throw std::runtime_error("handler failed"); });
  for (std::size_t i = 1; i < n; ++i) {
    timers[i].async_wait([&aborted](const error_code& ec) {
      if (ec == asio::error::operation_aborted) ++aborted;
    });
  }
  for (auto& t : timers) BOOST_TEST(t.cancel() == 1u);
  BOOST_CHECK_THROW(io.run_for(long_wait), std::runtime_error);
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(aborted == n - 1);

  sync_outcome late;
  timers[1].async_wait(late.handler());
  BOOST_TEST(timers[1].cancel() == 1u);
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(late.calls() == 1);
  BOOST_TEST((late.ec() == asio::error::operation_aborted));
}

// The staying drain ends within the poll that ran it, and leaves the next
// abort a drain of its own.
BOOST_AUTO_TEST_CASE(a_poll_delivers_a_large_abort_batch_and_the_next_abort) {
  asio::io_context io;
  constexpr std::size_t n = 40;
  std::vector<timer> timers;
  timers.reserve(n);
  std::vector<sync_outcome> outcomes(n);
  for (std::size_t i = 0; i < n; ++i) {
    timers.emplace_back(io, 1h);
    timers[i].async_wait(outcomes[i].handler());
  }
  for (std::size_t i = 0; i + 1 < n; ++i) BOOST_TEST(timers[i].cancel() == 1u);
  io.poll();
  for (std::size_t i = 0; i + 1 < n; ++i) BOOST_TEST(outcomes[i].calls() == 1);
  BOOST_TEST(outcomes[n - 1].calls() == 0);

  BOOST_TEST(timers[n - 1].cancel() == 1u);
  io.restart();
  io.poll();
  BOOST_TEST(outcomes[n - 1].calls() == 1);
  BOOST_TEST((outcomes[n - 1].ec() == asio::error::operation_aborted));
}

// ---- saturating expiries -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(max_duration_means_never) {
  asio::io_context io;
  timer t(io);
  BOOST_TEST(t.expires_after(timer::duration::max()) == 0u);
  BOOST_TEST((t.expiry() == timer::time_point::max()));
  sync_outcome o;
  t.async_wait(o.handler());
  io.run_for(30ms);  // must not fire
  BOOST_TEST(o.calls() == 0);
  BOOST_TEST(t.cancel() == 1u);
  io.restart();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST((o.ec() == asio::error::operation_aborted));

  timer at_max(io, timer::time_point::max());
  BOOST_TEST((at_max.expiry() == timer::time_point::max()));
  timer from_ctor(io, timer::duration::max());
  BOOST_TEST((from_ctor.expiry() == timer::time_point::max()));
}

BOOST_AUTO_TEST_CASE(max_duration_on_pool_means_never) {
  scheduled_thread_pool pool(2);
  timer t(pool, timer::duration::max());
  BOOST_TEST((t.expiry() == timer::time_point::max()));
  sync_outcome o(&pool);
  t.async_wait(o.handler());
  BOOST_TEST(!o.wait(30ms));
  BOOST_TEST(t.cancel() == 1u);
  BOOST_REQUIRE(o.wait());
  BOOST_TEST((o.ec() == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(min_duration_means_now) {
  asio::io_context io;
  timer t(io);
  t.expires_after(timer::duration::min());
  BOOST_TEST((t.expiry() <= steady::now()));
  sync_outcome o;
  const auto start = steady::now();
  t.async_wait(o.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST(!o.ec());
  BOOST_TEST((o.at() - start < long_wait / 2));
}

// ---- many timers ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(thousand_timers_complete_in_expiry_order) {
  constexpr std::size_t n = 1000;
  asio::io_context io;
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> offset_us(0, 50'000);
  const auto start = steady::now();
  std::vector<std::unique_ptr<timer>> timers;
  std::vector<steady::time_point> expiry(n), completed(n);
  std::vector<std::size_t> order;
  order.reserve(n);
  int failures = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = timers.emplace_back(std::make_unique<timer>(io));
    expiry[i] = start + std::chrono::microseconds(offset_us(rng));
    t->expires_at(expiry[i]);
    t->async_wait([&, i](const error_code& ec) {
      if (ec) ++failures;
      completed[i] = steady::now();
      order.push_back(i);
    });
  }
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(failures == 0);
  BOOST_REQUIRE(order.size() == n);
  int early = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (completed[i] < expiry[i]) ++early;
  BOOST_TEST(early == 0);
  BOOST_TEST(out_of_expiry_order(expiry, order) == 0);
}

BOOST_AUTO_TEST_CASE(a_backlog_of_due_waits_completes_in_expiry_order) {
  // 5,000 waits all due before run() starts (expiries spread over the last
  // 50 ms): one collect takes them all, runs the first chunk and posts the
  // rest in order, and the re-arm comes behind them. On one thread every
  // wait completes once, in expiry order.
  constexpr std::size_t n = 5000;
  asio::io_context io;
  std::mt19937 rng(20261125);
  std::uniform_int_distribution<int> offset_us(0, 50'000);
  const auto past = steady::now() - 60ms;
  std::vector<std::unique_ptr<timer>> timers;
  std::vector<steady::time_point> expiry(n);
  std::vector<std::size_t> order;
  order.reserve(n);
  int failures = 0;
  for (std::size_t i = 0; i < n; ++i) {
    expiry[i] = past + std::chrono::microseconds(offset_us(rng));
    auto& t = timers.emplace_back(std::make_unique<timer>(io, expiry[i]));
    t->async_wait([&, i](const error_code& ec) {
      if (ec) ++failures;
      order.push_back(i);
    });
  }
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(failures == 0);
  BOOST_REQUIRE(order.size() == n);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST((std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()));  // each once
  BOOST_TEST(out_of_expiry_order(expiry, order) == 0);
}

BOOST_AUTO_TEST_CASE(a_burst_of_due_waits_is_shared_by_the_io_threads) {
  // 200 waits due at one instant, each handler busy for 1 ms: the thread the
  // native timer wakes must hand chunks of the batch to the other io thread
  // instead of completing all 200 itself (~200 ms). Each completes once.
  constexpr std::size_t n = 200;
  asio::io_context io;
  const auto when = steady::now() + 20ms;
  std::vector<std::unique_ptr<timer>> timers;
  std::vector<int> calls(n, 0);
  std::mutex m;
  std::set<std::thread::id> threads;
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = timers.emplace_back(std::make_unique<timer>(io, when));
    t->async_wait([&, i](const error_code& ec) {
      std::this_thread::sleep_for(1ms);
      std::lock_guard lock(m);
      if (!ec) ++calls[i];
      threads.insert(std::this_thread::get_id());
    });
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  BOOST_TEST(std::count(calls.begin(), calls.end(), 1) == static_cast<long>(n));
  BOOST_TEST(threads.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

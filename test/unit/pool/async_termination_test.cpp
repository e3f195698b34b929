// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// async_join and async_wait_for_termination: completion once the pool is
// terminated, on the handler's executor (directly on the terminating thread
// when that executor is the pool's own), never inside the initiating call,
// and cancellation of the wait through its slot.
#include "pool_test_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <future>
#include <thread>

using namespace pool_test;
using sys_ns::error_code;
using chronopool::scheduled_thread_pool;

BOOST_AUTO_TEST_SUITE(async_termination)

BOOST_AUTO_TEST_CASE(async_join_shuts_down_and_completes_once_running_work_finished) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  gate g;
  auto running = pool.submit([&] { g.wait(); });
  recorded r;
  pool.async_join(asio::bind_executor(io, [&](error_code ec) {
    ++r.calls;
    r.ec = ec;
  }));
  BOOST_TEST(pool.is_shutdown());
  io.poll();
  BOOST_TEST(r.calls == 0);  // a task still runs
  g.open();
  io.run_for(long_wait);  // the pending wait keeps io's work: returns once it completed
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
  BOOST_TEST(pool.is_terminated());
}

BOOST_AUTO_TEST_CASE(async_wait_for_termination_does_not_shut_down) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  recorded r;
  pool.async_wait_for_termination(asio::bind_executor(io, [&](error_code ec) {
    ++r.calls;
    r.ec = ec;
  }));
  BOOST_TEST(!pool.is_shutdown());
  io.poll();
  BOOST_TEST(r.calls == 0);
  pool.shutdown();
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
  BOOST_TEST(pool.is_terminated());
}

BOOST_AUTO_TEST_CASE(a_wait_on_a_terminated_pool_is_posted_not_run_inside_the_call) {
  scheduled_thread_pool pool(1);
  pool.join();
  asio::io_context io;
  recorded r;
  pool.async_wait_for_termination(asio::bind_executor(io, [&](error_code ec) {
    ++r.calls;
    r.ec = ec;
  }));
  BOOST_TEST(r.calls == 0);
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
}

BOOST_AUTO_TEST_CASE(a_handler_on_the_pools_own_executor_runs_on_the_terminating_thread) {
  scheduled_thread_pool pool(1);
  gate g;
  auto running = pool.submit([&] { g.wait(); });
  std::promise<std::thread::id> where;
  std::atomic<bool> terminated_inside{false};
  std::atomic<bool> inside_the_call{true};
  bool inline_call = false;
  pool.async_join(asio::bind_executor(pool.get_executor(), [&](error_code ec) {
    if (inside_the_call.load()) inline_call = true;
    terminated_inside.store(!ec && pool.is_terminated());
    where.set_value(std::this_thread::get_id());
  }));
  inside_the_call.store(false);
  g.open();  // the pool's last thread leaves and terminates it: the handler runs there
  auto w = where.get_future();
  BOOST_REQUIRE(w.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(!inline_call);
  BOOST_TEST(terminated_inside.load());
  BOOST_TEST((w.get() != std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(a_plain_callback_defaults_to_the_pool_and_runs_when_termination_happens_in_shutdown) {
  scheduled_thread_pool pool(0);  // no thread ever started: shutdown() itself terminates the pool
  std::thread::id where;
  int calls = 0;
  pool.async_wait_for_termination([&](error_code ec) {
    ++calls;
    BOOST_CHECK(!ec);
    where = std::this_thread::get_id();
  });
  BOOST_TEST(calls == 0);
  pool.shutdown();  // the terminating call: the handler runs here, after the state is final
  BOOST_TEST(calls == 1);
  BOOST_TEST((where == std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(a_handler_on_the_pools_executor_after_termination_still_runs) {
  scheduled_thread_pool pool(1);
  pool.join();
  std::promise<error_code> done;
  pool.async_wait_for_termination(
      asio::bind_executor(pool.get_executor(), [&](error_code ec) { done.set_value(ec); }));
  auto d = done.get_future();
  BOOST_REQUIRE(d.wait_for(long_wait) == std::future_status::ready);  // not dropped by the terminated pool
  BOOST_TEST(!d.get());
}

BOOST_AUTO_TEST_CASE(cancelling_the_wait_completes_it_with_operation_aborted_and_leaves_the_pool_running) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  asio::cancellation_signal signal;
  recorded r;
  pool.async_wait_for_termination(asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](error_code ec) {
                                                                   ++r.calls;
                                                                   r.ec = ec;
                                                                 })));
  signal.emit(asio::cancellation_type::terminal);
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(r.ec == asio::error::operation_aborted);
  BOOST_TEST(!pool.is_shutdown());
  pool.join();
  signal.emit(asio::cancellation_type::terminal);  // nothing left to cancel
  io.restart();
  io.poll();
  BOOST_TEST(r.calls == 1);
}

BOOST_AUTO_TEST_CASE(cancelling_an_async_join_leaves_the_shutdown_in_place) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  gate g;
  auto running = pool.submit([&] { g.wait(); });
  asio::cancellation_signal signal;
  recorded r;
  pool.async_join(asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](error_code ec) {
                                                   ++r.calls;
                                                   r.ec = ec;
                                                 })));
  signal.emit(asio::cancellation_type::partial);
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(r.ec == asio::error::operation_aborted);
  BOOST_TEST(pool.is_shutdown());
  g.open();
  BOOST_TEST(pool.wait_for_termination(long_wait));
}

BOOST_AUTO_TEST_CASE(a_coroutine_and_use_future_await_termination) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  bool joined = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await pool.async_join(asio::use_awaitable);
        joined = pool.is_terminated();
      },
      asio::detached);
  io.run_for(long_wait);
  BOOST_TEST(joined);

  scheduled_thread_pool other(1);
  std::future<void> f = other.async_join(asio::use_future);
  BOOST_REQUIRE(f.wait_for(long_wait) == std::future_status::ready);
  BOOST_CHECK_NO_THROW(f.get());
  BOOST_TEST(other.is_terminated());
}

BOOST_AUTO_TEST_CASE(async_join_with_a_deferred_token_shuts_down_when_launched) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto op = pool.async_join(asio_compat::deferred);
  BOOST_TEST(!pool.is_shutdown());
  recorded r;
  std::move(op)(asio::bind_executor(io, [&](error_code ec) {
    ++r.calls;
    r.ec = ec;
  }));
  BOOST_TEST(pool.is_shutdown());
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
}

BOOST_AUTO_TEST_CASE(async_join_from_a_pool_thread_does_not_deadlock) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  recorded r;
  auto t = pool.submit([&] {
    pool.async_join(asio::bind_executor(io, [&](error_code ec) {
      ++r.calls;
      r.ec = ec;
    }));
  });
  BOOST_REQUIRE(ready_within(t));
  BOOST_CHECK_NO_THROW(t.get());
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
  BOOST_TEST(pool.is_terminated());
}

BOOST_AUTO_TEST_SUITE_END()

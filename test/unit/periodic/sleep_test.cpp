// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// async_sleep and sleep_for: timer-less waits on any executor.
#include <chronopool/async_sleep.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

BOOST_AUTO_TEST_SUITE(sleeping)

BOOST_AUTO_TEST_CASE(async_sleep_completes_after_the_duration_never_inline) {
  asio::io_context io;
  const auto start = steady::now();
  bool returned = false;
  bool inline_call = false;
  sys_ns::error_code result = asio::error::would_block;
  steady::time_point done_at;
  chronopool::async_sleep(io.get_executor(), 30ms, [&](sys_ns::error_code ec) {
    inline_call = !returned;
    result = ec;
    done_at = steady::now();
  });
  returned = true;
  io.run();
  BOOST_TEST(!inline_call);
  BOOST_TEST(!result);
  BOOST_TEST((done_at - start >= 30ms));
  BOOST_TEST((done_at - start < 5s));
}

BOOST_AUTO_TEST_CASE(sleep_for_in_a_coroutine_and_as_a_timeout) {
  asio::io_context io;
  using namespace asio::experimental::awaitable_operators;
  auto f = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<std::pair<long, std::size_t>> {
        const auto start = steady::now();
        co_await chronopool::sleep_for(20ms);
        const auto slept = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
        // The one-hour sleep loses the race and is cancelled, so run() can end.
        auto winner = co_await (chronopool::sleep_for(1h) || chronopool::sleep_for(5ms));
        co_return std::make_pair(static_cast<long>(slept), winner.index());
      },
      asio::use_future);
  io.run();
  BOOST_REQUIRE(f.wait_for(0s) == std::future_status::ready);
  const auto [slept, index] = f.get();
  BOOST_TEST(slept >= 20);
  BOOST_TEST(index == 1u);
}

BOOST_AUTO_TEST_CASE(per_operation_cancellation_aborts_the_sleep) {
  asio::io_context io;
  asio::cancellation_signal signal;
  sys_ns::error_code result;
  chronopool::async_sleep(io.get_executor(), 1h,
                          asio::bind_cancellation_slot(signal.slot(), [&](sys_ns::error_code ec) { result = ec; }));
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.run();  // returns: the sleep was cancelled
  BOOST_TEST((result == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(huge_and_negative_durations_saturate) {
  asio::io_context io;
  asio::cancellation_signal signal;
  sys_ns::error_code never_result, negative_result = asio::error::would_block;
  chronopool::async_sleep(io.get_executor(), std::chrono::hours::max(),
                          asio::bind_cancellation_slot(signal.slot(), [&](auto ec) { never_result = ec; }));
  chronopool::async_sleep(io.get_executor(), -5s, [&](auto ec) {
    negative_result = ec;
    signal.emit(asio::cancellation_type::total);  // "never" would otherwise keep run() alive forever
  });
  io.run();
  BOOST_TEST(!negative_result);
  BOOST_TEST((never_result == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(async_sleep_on_a_pool_runs_on_the_pool) {
  chronopool::scheduled_thread_pool pool(1);
  std::promise<bool> where;
  chronopool::async_sleep(pool.get_executor(), 10ms,
                          [&](sys_ns::error_code ec) { where.set_value(!ec && pool.running_in_this_thread()); });
  auto f = where.get_future();
  BOOST_REQUIRE(f.wait_for(10s) == std::future_status::ready);
  BOOST_TEST(f.get());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// async_sleep_until and sleep_until: waits for a steady_clock instant. A
// past instant completes at once, but never inside the initiating call.
#include <chronopool/async_sleep.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <optional>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

BOOST_AUTO_TEST_SUITE(sleeping_until)

BOOST_AUTO_TEST_CASE(async_sleep_until_completes_at_the_instant_never_inline) {
  asio::io_context io;
  const auto deadline = steady::now() + 30ms;
  bool returned = false;
  bool inline_call = false;
  sys_ns::error_code result = asio::error::would_block;
  steady::time_point done_at;
  chronopool::async_sleep_until(io.get_executor(), deadline, [&](sys_ns::error_code ec) {
    inline_call = !returned;
    result = ec;
    done_at = steady::now();
  });
  returned = true;
  io.run();
  BOOST_TEST(!inline_call);
  BOOST_TEST(!result);
  BOOST_TEST((done_at >= deadline));
  BOOST_TEST((done_at - deadline < 5s));
}

BOOST_AUTO_TEST_CASE(a_past_instant_completes_at_once_but_not_inline) {
  asio::io_context io;
  bool returned = false;
  bool inline_call = false;
  std::optional<sys_ns::error_code> result;
  const auto start = steady::now();
  chronopool::async_sleep_until(io.get_executor(), start - 1h, [&](sys_ns::error_code ec) {
    inline_call = !returned;
    result = ec;
  });
  returned = true;
  io.run();
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST(!*result);
  BOOST_TEST(!inline_call);
  BOOST_TEST((steady::now() - start < 5s));
}

BOOST_AUTO_TEST_CASE(any_duration_type_of_the_steady_clock) {
  asio::io_context io;
  const auto deadline = std::chrono::time_point_cast<std::chrono::milliseconds>(steady::now()) + 20ms;
  bool done = false;
  chronopool::async_sleep_until(io.get_executor(), deadline, [&](sys_ns::error_code) { done = true; });
  io.run();
  BOOST_TEST(done);
  BOOST_TEST((steady::now() >= deadline));
}

BOOST_AUTO_TEST_CASE(cancelled_by_its_slot) {
  asio::io_context io;
  asio::cancellation_signal signal;
  std::optional<sys_ns::error_code> result;
  const auto start = steady::now();
  chronopool::async_sleep_until(io.get_executor(), start + 1h,
                                asio::bind_cancellation_slot(signal.slot(), [&](sys_ns::error_code ec) {
                                  result = ec;
                                }));
  asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
  BOOST_TEST((steady::now() - start < 60s));
}

BOOST_AUTO_TEST_CASE(sleep_until_in_a_coroutine) {
  asio::io_context io;
  auto f = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<bool> {
        const auto deadline = steady::now() + 20ms;
        co_await chronopool::sleep_until(deadline);
        const bool after = steady::now() >= deadline;
        co_await chronopool::sleep_until(steady::now() - 1s);  // past: resumes at once
        co_return after;
      },
      asio::use_future);
  io.run();
  BOOST_REQUIRE(f.wait_for(0s) == std::future_status::ready);
  BOOST_TEST(f.get());
}

BOOST_AUTO_TEST_SUITE_END()

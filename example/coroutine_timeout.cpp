// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// coroutine_timeout: co_await a delay, and bound an operation with a timeout.
#include <chronopool/async_sleep.hpp>
#include <chronopool/steady_timer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <chrono>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

// Stands in for real I/O that may take too long.
asio::awaitable<int> slow_lookup(std::chrono::milliseconds cost) {
  co_await chronopool::sleep_for(cost);
  co_return 42;
}

asio::awaitable<int> main_coro() {
  const auto start = std::chrono::steady_clock::now();
  co_await chronopool::sleep_for(20ms);  // a plain delay
  fmt::print("slept {} ms\n",
             std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());

  int found = 0;
  // Fast enough: the lookup wins the race against a 100 ms timeout.
  auto fast = co_await (slow_lookup(10ms) || chronopool::sleep_for(100ms));
  if (fast.index() == 0) found += std::get<0>(fast);
  fmt::print("fast lookup: {}\n", fast.index() == 0 ? "answered" : "timed out");

  // Too slow: the timeout wins, and the lookup is cancelled with it.
  chronopool::steady_timer timeout(co_await asio::this_coro::executor, 30ms);
  auto slow = co_await (slow_lookup(10s) || timeout.async_wait(asio::use_awaitable));
  fmt::print("slow lookup: {}\n", slow.index() == 0 ? "answered" : "timed out");
  co_return slow.index() == 1 ? found : -1;
}

int main() {
  asio::io_context io;
  int result = -1;
  asio::co_spawn(io, main_coro(), [&](std::exception_ptr e, int r) {
    if (!e) result = r;
  });
  io.run();  // returns at once after the coroutine: the cancelled 10 s sleep leaves nothing pending
  return result == 42 ? 0 : 1;
}

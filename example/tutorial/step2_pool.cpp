// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 2: work on a scheduled thread pool, its results awaited by a coroutine.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  chronopool::scheduled_thread_pool pool(2);  // two threads

  // Java's ScheduledThreadPoolExecutor: one-shot work with a result, after a delay.
  chronopool::scheduled_future<int> answer = pool.schedule(20ms, [] { return 6 * 7; });
  std::cout << "get() blocks: " << answer.get() << "\n";

  // A coroutine on an io_context awaits work done on the pool; no thread blocks.
  asio::io_context io;
  asio::co_spawn(
      io,
      [&pool]() -> asio::awaitable<void> {
        auto text = pool.submit([] { return std::string("computed on the pool"); });
        std::cout << co_await text.async_wait(asio::use_awaitable) << "\n";

        auto failing = pool.submit([]() -> int { throw std::runtime_error("failed on the pool"); });
        try {
          co_await failing.async_wait(asio::use_awaitable);
        } catch (const std::runtime_error& e) {
          std::cout << "rethrown in the coroutine: " << e.what() << "\n";
        }
      },
      asio::detached);
  io.run();

  pool.join();  // shutdown(), then wait until every thread is done
}

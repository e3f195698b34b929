// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 1: a first timer, with a callback and in a coroutine.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  asio::io_context io;

  // asio::steady_timer's members: change the type name and keep the code.
  chronopool::steady_timer timer(io, 100ms);
  timer.async_wait([](boost::system::error_code ec) {
    std::cout << "timer: " << (ec ? ec.message() : "expired") << "\n";
  });

  // In a coroutine, a sleep needs no timer object.
  asio::co_spawn(
      io,
      []() -> asio::awaitable<void> {
        co_await chronopool::sleep_for(50ms);
        std::cout << "slept 50 ms\n";
      },
      asio::detached);

  io.run();  // returns once both are done
}

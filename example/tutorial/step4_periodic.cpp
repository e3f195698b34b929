// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 4: periodic work: heartbeats, a flaky housekeeping task, a ticking coroutine.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <iostream>
#include <stdexcept>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  asio::io_context io;

  // Every 20 ms on the io_context's thread. Runs never overlap; this one ends
  // its own schedule after five beats.
  int beats = 0;
  chronopool::periodic_handle heartbeat = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 20ms, [&] {
    std::cout << "heartbeat " << ++beats << "\n";
    return beats == 5 ? chronopool::periodic_control::stop : chronopool::periodic_control::keep;
  });

  // An exception stops a schedule by default (one line on stderr). This one
  // goes on, and its errors go to our handler.
  int sweeps = 0;
  chronopool::periodic_options options;
  options.continue_after_error = true;
  options.error_handler = [](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::cout << "housekeeping failed: " << ex.what() << "\n";
    }
  };
  chronopool::periodic_handle housekeeping = chronopool::schedule_with_fixed_delay(
      io.get_executor(), 10ms, 30ms,
      [&] {
        if (++sweeps % 2 == 0) throw std::runtime_error("disk busy");
      },
      options);

  // A coroutine ticking every 40 ms, the first tick at once.
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        chronopool::periodic_timer ticker(co_await asio::this_coro::executor, 40ms,
                                          chronopool::missed_tick_policy::skip, chronopool::first_tick::immediately);
        for (int i = 0; i < 4; ++i) {
          co_await ticker.async_tick(asio::use_awaitable);
          std::cout << "tick " << i << "\n";
        }
        housekeeping.cancel();  // the last schedule left: io.run() can return
      },
      asio::detached);

  io.run();
  std::cout << beats << " heartbeats, " << sweeps << " sweeps, heartbeat active: " << heartbeat.active() << "\n";
}

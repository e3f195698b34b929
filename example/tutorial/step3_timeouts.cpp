// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 3: a timeout on work, by racing it against a timer.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <iostream>
#include <stop_token>
#include <thread>

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

// Work that takes @p steps milliseconds and stops early when asked to.
int slow_work(std::stop_token stop, int steps) {
  int done = 0;
  for (; done < steps && !stop.stop_requested(); ++done) std::this_thread::sleep_for(1ms);
  return done;
}

asio::awaitable<void> with_timeout(chronopool::scheduled_thread_pool& pool, int steps,
                                   std::chrono::milliseconds limit) {
  auto job = pool.submit([steps](std::stop_token stop) { return slow_work(stop, steps); });
  chronopool::steady_timer deadline(co_await asio::this_coro::executor, limit);
  // Whichever finishes first wins; the other wait is cancelled (not the job).
  auto first = co_await (job.async_wait(asio::use_awaitable) || deadline.async_wait(asio::use_awaitable));
  if (first.index() == 0) {
    std::cout << "finished " << std::get<0>(first) << " steps in time\n";
  } else {
    job.cancel(true);  // too late: ask the job to stop through its stop token
    std::cout << "timed out after " << limit.count() << " ms\n";
  }
}

int main() {
  chronopool::scheduled_thread_pool pool(2);
  asio::io_context io;
  asio::co_spawn(io, with_timeout(pool, 10, 500ms), asio::detached);
  asio::co_spawn(io, with_timeout(pool, 2000, 50ms), asio::detached);
  io.run();
  pool.join();
}

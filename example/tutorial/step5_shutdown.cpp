// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 5: shutting down, gracefully and at once.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <iostream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  std::atomic<int> reports{0};
  chronopool::scheduled_thread_pool pool(2);
  auto report = pool.schedule_at_fixed_rate(0ms, 10ms, [&] { ++reports; });
  auto reminder = pool.schedule(1h, [] { std::cout << "an hour later\n"; });

  // Java's defaults: after shutdown() periodic tasks stop, and delayed
  // one-shot tasks still run at their deadline. Not waiting an hour:
  pool.set_execute_existing_delayed_tasks_after_shutdown(false);

  // The graceful path, awaited by a coroutine: no new work, then wait until
  // the pool has terminated.
  asio::io_context io;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await chronopool::sleep_for(35ms);
        co_await pool.async_join(asio::use_awaitable);
        std::cout << "terminated after " << reports.load() << " reports; reminder cancelled: "
                  << reminder.cancelled() << "\n";
      },
      asio::detached);
  io.run();

  // The other path: shutdown_now() runs nothing more and hands back the tasks
  // that never started, in deadline order, to run or to save.
  chronopool::scheduled_thread_pool other(1);
  other.schedule(1h, [] { std::cout << "saved task runs now\n"; });
  for (chronopool::pending_task& t : other.shutdown_now()) t.run();
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool demo: one-shot and periodic work on a scheduled thread pool,
// a cancellation, and a clean shutdown. Prints what happens as it happens.
#include <chronopool/scheduled_thread_pool.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>

using namespace std::chrono_literals;

int main() {
  const auto t0 = std::chrono::steady_clock::now();
  auto stamp = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  };

  chronopool::scheduled_thread_pool_options options;
  options.core_pool_size = 2;
  options.thread_name_prefix = "demo";
  chronopool::scheduled_thread_pool pool(options);

  // One-shot work with a result.
  auto answer = pool.schedule(50ms, [&] {
    fmt::print("[{:4} ms] one-shot: computing the answer\n", stamp());
    return 42;
  });

  // A heartbeat at a fixed rate, and a housekeeping tick with a fixed delay.
  std::atomic<int> beats{0};
  auto heartbeat = pool.schedule_at_fixed_rate(0ms, 100ms, [&] {
    fmt::print("[{:4} ms] heartbeat #{}\n", stamp(), ++beats);
  });
  auto housekeeping = pool.schedule_with_fixed_delay(30ms, 150ms, [&] {
    fmt::print("[{:4} ms] housekeeping (takes 20 ms)\n", stamp());
    std::this_thread::sleep_for(20ms);
  });

  // A long job that honours cancellation through its stop token.
  auto long_job = pool.submit([&](std::stop_token stop) {
    int steps = 0;
    while (!stop.stop_requested() && steps < 100) {
      std::this_thread::sleep_for(10ms);
      ++steps;
    }
    fmt::print("[{:4} ms] long job stopped after {} steps\n", stamp(), steps);
    return steps;
  });

  // A task that will never run: we change our mind.
  auto never = pool.schedule(10s, [] { fmt::print("this never prints\n"); });

  fmt::print("[{:4} ms] the answer is {}\n", stamp(), answer.get());
  std::this_thread::sleep_for(250ms);
  fmt::print("[{:4} ms] cancel the long job: {}\n", stamp(), long_job.cancel(true));
  const bool cancelled_never = never.cancel();  // removed from the queue at once
  fmt::print("[{:4} ms] cancel the 10 s task: {} (queued now: {})\n", stamp(), cancelled_never, pool.queued_count());

  std::this_thread::sleep_for(300ms);
  heartbeat.cancel();
  fmt::print("[{:4} ms] stats: {}\n", stamp(), pool.stats());

  // Graceful stop: periodic tasks are cancelled by the default shutdown
  // policy; join() waits for running work and the threads.
  pool.join();
  fmt::print("[{:4} ms] pool {}; housekeeping cancelled: {}\n", stamp(), pool.state(), housekeeping.cancelled());
  return beats.load() >= 5 ? 0 : 1;
}

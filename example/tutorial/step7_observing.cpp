// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial step 7: what the pool cannot return to a caller goes to a log
// handler; how late and how long its runs were is in stats().
#include <chronopool/chronopool.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>

using namespace std::chrono_literals;

int main() {
  std::atomic<int> errors{0};
  chronopool::scheduled_thread_pool_options options;
  options.core_pool_size = 2;
  // Fire-and-forget work has no future to carry its exception: the pool
  // logs it. Without a handler the line goes to stderr.
  options.log_handler = [&](const chronopool::log_record& r) {
    std::cout << chronopool::format_log_line(r) << "\n";
    ++errors;
  };
  chronopool::scheduled_thread_pool pool(options);

  pool.execute([] { throw std::runtime_error("disk full"); });
  for (int i = 0; i < 100; ++i) pool.execute_after(std::chrono::milliseconds(i % 10), [] {});
  pool.join();

  const chronopool::pool_stats s = pool.stats();
  std::cout << chronopool::to_string(s) << "\n";  // counters, lateness and run time
  const chronopool::latency_histogram& late = s.lateness_histogram;
  std::cout << "lateness p99.9: " << late.quantile(0.999).count() << " ns over " << late.count() << " runs\n";
  return errors == 1 && s.failed_task_count == 1 && late.count() == 101 ? 0 : 1;
}

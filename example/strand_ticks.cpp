// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// strand_ticks: periodic handlers on a strand of a multi-threaded pool. Two
// schedules touch the same counter without a mutex: the strand serialises
// them, and chronopool never overlaps a schedule with itself.
#include <chronopool/periodic.hpp>

#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fmt/format.h>

#include <chrono>
#include <future>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  asio::thread_pool threads(4);
  auto strand = asio::make_strand(threads);
  int shared_counter = 0;  // touched only on the strand
  std::promise<void> finished;

  auto fast = chronopool::schedule_at_fixed_rate(strand, 0ms, 5ms, [&] { ++shared_counter; });
  auto report = chronopool::schedule_with_fixed_delay(strand, 25ms, 25ms, [&] {
    fmt::print("counter = {}\n", shared_counter);
    if (shared_counter >= 20) finished.set_value();
  });

  const bool done = finished.get_future().wait_for(10s) == std::future_status::ready;
  fast.cancel();
  report.cancel();
  threads.join();
  fmt::print("fast ticks {}, reports {}\n", fast.ticks(), report.ticks());
  return done ? 0 : 1;
}

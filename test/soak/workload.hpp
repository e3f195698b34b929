// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One cycle of the soak workload: a second or so of mixed, overlapping work
// on long-lived objects (a pool, an io_context and its timers) plus a
// short-lived pool made and destroyed, after which everything the cycle
// started has ended. Repeating cycles for minutes must neither lose work nor
// grow memory.
#pragma once

#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace soak {

struct counts {
  std::uint64_t tasks = 0;        // one-shot tasks submitted
  std::uint64_t ran = 0;          // of those, ran
  std::uint64_t cancelled = 0;    // of those, cancelled (by the cycle or by shutdown_now)
  std::uint64_t periodic_runs = 0;
  std::uint64_t timer_waits = 0;  // async_wait/async_sleep started
  std::uint64_t handler_calls = 0;
  std::uint64_t pools = 0;        // short-lived pools made and destroyed
  std::uint64_t violations = 0;   // work lost or done twice
  std::string first_violation;

  void add(const counts& o);
};

struct io_runner;

/// The long-lived half of the workload and the cycles that use it.
class workload {
 public:
  explicit workload(std::uint64_t seed);
  ~workload();
  workload(const workload&) = delete;
  workload& operator=(const workload&) = delete;

  /// Runs one cycle of about @p length; returns what it did.
  counts cycle(std::chrono::milliseconds length);

 private:
  std::uint64_t seed_;
  std::uint64_t cycles_ = 0;
  chronopool::scheduled_thread_pool pool_;
  asio::io_context io_;
  std::vector<std::unique_ptr<chronopool::steady_timer>> timers_;
  std::unique_ptr<io_runner> runner_;
};

}  // namespace soak

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Timers under fire: chronopool::steady_timer waits on one io_context, armed,
// re-armed and cancelled at random from several threads at once (and
// re-armed from inside their own handlers), with a ledger of every
// async_wait. Runs next to the pool stress so both compete for the CPU.
//
// At the end the ledger checks that every handler ran exactly once, that the
// number of handlers that saw operation_aborted equals the sum of what
// cancel(), cancel_one() and expires_*() reported, that io_context::run()
// returned (no wait left holding work), and that every handler object was
// destroyed.
#pragma once

#include "violation_log.hpp"

#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace stress {

struct timer_counts {
  std::uint64_t waits = 0;            // async_wait calls (each one a ledger entry)
  std::uint64_t rearmed_in_handler = 0;  // of those, started from inside a handler
  std::uint64_t succeeded = 0;        // handlers that saw success
  std::uint64_t aborted = 0;          // handlers that saw operation_aborted
  std::uint64_t cancel_reported = 0;  // sum of cancel()/cancel_one()/expires_*() results

  void add(const timer_counts& o) {
    waits += o.waits;
    rearmed_in_handler += o.rearmed_in_handler;
    succeeded += o.succeeded;
    aborted += o.aborted;
    cancel_reported += o.cancel_reported;
  }
  std::string str() const;
};

class timer_churn {
 public:
  /// @p waits_per_armer async_waits are started by each of the arming threads.
  timer_churn(std::uint64_t seed, std::size_t waits_per_armer);
  ~timer_churn();
  timer_churn(const timer_churn&) = delete;
  timer_churn& operator=(const timer_churn&) = delete;

  /// Starts the io_context threads and the arming threads.
  void start();
  /// Stops arming, cancels what is left, waits for every handler, and checks
  /// the ledger; violations go to @p log.
  timer_counts stop(violation_log& log);

 private:
  struct wait_record {
    std::atomic<int> calls{0};
    // For a small_handler: what the block handler's lambda captures.
    timer_churn* owner = nullptr;
    std::size_t timer_index = 0;
  };
  template <class Extra>
  class small_handler;

  static constexpr int io_threads = 2;
  static constexpr int armers = 2;
  static constexpr std::size_t timer_count = 16;

  wait_record* claim_record();
  void start_wait(std::size_t timer_index, bool from_handler);
  void on_complete(wait_record& rec, std::size_t timer_index, const sys_ns::error_code& ec);
  void arm_loop(int armer);

  std::uint64_t seed_;
  std::size_t waits_per_armer_;

  asio::io_context io_;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::unique_ptr<chronopool::steady_timer>> timers_;

  // Ledger entries, claimed in order; a handler re-arms only while some are left.
  std::unique_ptr<wait_record[]> records_;
  std::size_t capacity_ = 0;
  std::atomic<std::size_t> next_record_{0};

  std::atomic<bool> stopping_{false};
  std::atomic<long> live_handlers_{0};
  std::atomic<std::uint64_t> rearmed_in_handler_{0};
  std::atomic<std::uint64_t> succeeded_{0};
  std::atomic<std::uint64_t> aborted_{0};
  std::atomic<std::uint64_t> other_errors_{0};
  std::atomic<std::uint64_t> cancel_reported_{0};

  std::vector<std::thread> io_threads_;
  std::vector<std::thread> armer_threads_;
  std::atomic<int> io_threads_done_{0};
  bool started_ = false;
};

}  // namespace stress

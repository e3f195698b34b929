// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A task the pool refused, as a rejection handler sees it.
#pragma once

#include <chronopool/errors.hpp>
#include <chronopool/task_view.hpp>

#include <cstddef>

namespace chronopool {

namespace detail {
class pool_core;
class task_base;
}  // namespace detail

/// What a rejection handler (Java's RejectedExecutionHandler) is given: why
/// the task was refused, by which call, and the means to end it.
///
/// The task ends exactly once whatever the handler does: run() runs it on the
/// handler's thread; if the handler returns without running it, the task is
/// dropped (its future is cancelled); if the handler throws, the task is
/// dropped and the exception propagates from the submitting call.
///
/// @par Thread Safety
/// Valid only during the handler call, on the submitting thread.
class rejected_task {
 public:
  rejected_task(const rejected_task&) = delete;
  rejected_task& operator=(const rejected_task&) = delete;

  /// Why the task was refused: the pool is shut down, or its queue is full.
  rejection_reason reason() const noexcept { return reason_; }
  /// The public call that submitted the task ("submit", "execute_after", ...).
  const char* call() const noexcept { return call_; }
  /// The task itself (its kind, deadline, sequence).
  task_view task() const noexcept { return task_view(*task_); }
  /// Whether the task is periodic (then run() throws).
  bool is_periodic() const noexcept { return task_->is_periodic(); }

  /// Runs the task now on this thread, ignoring its deadline, and completes
  /// its future (an error goes to the future, or for execute()d work to the
  /// pool's error handler). Allowed after shutdown too. Does nothing if the
  /// task already ended. A periodic task cannot run on the submitting thread:
  /// throws std::logic_error.
  void run();
  /// Drops the task now: its future is cancelled. Does nothing if it already ended.
  void discard() noexcept;
  /// Whether the task has ended (run or dropped).
  bool done() const noexcept;

  /// The exception the `abort` policy throws for this rejection.
  rejected_execution exception() const;

 private:
  friend class detail::pool_core;
  rejected_task(detail::task_base& t, rejection_reason reason, const char* call, std::size_t max_queued) noexcept
      : task_(&t), reason_(reason), call_(call), max_queued_(max_queued) {}

  detail::task_base* task_;
  rejection_reason reason_;
  const char* call_;
  std::size_t max_queued_;
};

}  // namespace chronopool

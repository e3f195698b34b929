// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Exceptions thrown by chronopool.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace chronopool {

/// Why a pool refused a task.
enum class rejection_reason : std::uint8_t {
  /// The pool is shut down (shutdown() or shutdown_now() was called).
  shutdown,
  /// The queue holds max_queued tasks.
  queue_full,
};

/// The enumerator's name, e.g. "queue_full".
constexpr std::string_view to_string(rejection_reason r) noexcept {
  switch (r) {
    case rejection_reason::shutdown: return "shutdown";
    case rejection_reason::queue_full: return "queue_full";
  }
  return "?";
}

/// Thrown by submission functions when the `abort` rejection policy refuses
/// a task: the pool is shut down, or its queue bound (max_queued) is reached.
/// reason() tells which; the message names the submitting call and the reason.
class rejected_execution : public std::runtime_error {
 public:
  /// An exception for `reason` with the message `what`.
  rejected_execution(rejection_reason reason, const std::string& what) : std::runtime_error(what), reason_(reason) {}
  /// Why the task was refused.
  rejection_reason reason() const noexcept { return reason_; }

 private:
  rejection_reason reason_;
};

/// Thrown by scheduled_future::get() when the task was cancelled (by
/// cancel(), remove(), a shutdown policy, shutdown_now(), or a rejection
/// policy that discards).
class task_cancelled : public std::runtime_error {
 public:
  /// The exception with its fixed message.
  task_cancelled() : std::runtime_error("chronopool: task was cancelled") {}
};

}  // namespace chronopool

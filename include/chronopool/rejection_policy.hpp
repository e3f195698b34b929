// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// What a pool does with a task it cannot accept.
#pragma once

#include <cstdint>

namespace chronopool {

/// A pool rejects work after shutdown() / shutdown_now(), and while its queue
/// holds max_queued tasks. The policy decides what the submitter sees, unless
/// a rejection handler is set (scheduled_thread_pool_options::rejection_handler),
/// which then decides instead.
enum class rejection_policy : std::uint8_t {
  /// Throw chronopool::rejected_execution from the submitting call. Default.
  abort,
  /// Run a one-shot task at once on the submitting thread (back-pressure: the
  /// producer does the work instead of queueing it), ignoring its delay.
  /// After shutdown the task is discarded instead, as in Java. A periodic task
  /// cannot be run by its caller and is rejected as by `abort`.
  caller_runs,
  /// Drop the task silently; its future is returned already cancelled.
  discard,
  /// Drop the queued task that would run next (its future is cancelled) and
  /// queue the new one. After shutdown the new task is discarded, as in Java.
  discard_oldest,
};

}  // namespace chronopool

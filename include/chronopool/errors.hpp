// Exceptions thrown by chronopool.
#pragma once

#include <stdexcept>
#include <string>

namespace chronopool {

/// Thrown by submission functions when the `abort` rejection policy refuses
/// a task: the pool is shut down, or its queue bound (max_queued) is reached.
class rejected_execution : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by scheduled_future::get() when the task was cancelled (by
/// cancel(), remove(), a shutdown policy, shutdown_now(), or a rejection
/// policy that discards).
class task_cancelled : public std::runtime_error {
 public:
  task_cancelled() : std::runtime_error("chronopool: task was cancelled") {}
};

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A task that shutdown_now() took out of the queue before it ever started.
#pragma once

#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/scheduled_future.hpp>
#include <chronopool/task_view.hpp>

#include <chrono>
#include <exception>

namespace chronopool {

/// Move-only. Running it runs the task once on the calling thread and
/// completes its future (a periodic task runs once and its future completes
/// normally); dropping it unrun cancels its future, so no waiter is ever left
/// hanging (Java leaves such futures neither done nor cancelled). The pool's
/// hooks do not apply to a run made this way.
class pending_task {
 public:
  /// The clock of deadline().
  using clock = std::chrono::steady_clock;

  /// Takes over `o`'s task; `o` is left empty (valid() is false).
  pending_task(pending_task&&) noexcept = default;
  /// Cancels this object's own task if it still holds one unrun, then takes
  /// over `o`'s task.
  pending_task& operator=(pending_task&& o) noexcept {
    if (this != &o) {
      drop();
      task_ = std::move(o.task_);
    }
    return *this;
  }
  pending_task(const pending_task&) = delete;
  pending_task& operator=(const pending_task&) = delete;
  /// Cancels the task's future if the task was not run (see the class).
  ~pending_task() { drop(); }

  /// Runs the task once here. Returns the exception the run threw (null on
  /// success); a future of the task receives it too. Does nothing if the task
  /// was cancelled through its future meanwhile, or was already run.
  std::exception_ptr run();
  /// run(), for use as a plain callable; the run's exception is dropped here
  /// (its future still receives it).
  void operator()() { run(); }

  /// Whether this object holds a task (false once moved from).
  bool valid() const noexcept { return static_cast<bool>(task_); }
  /// The task's identity, equal to its futures' id(); the empty id when not valid().
  task_id id() const noexcept { return task_id(task_.get()); }
  /// Whether `f` is a future of this task (false when not valid()).
  bool belongs_to(const scheduled_future_base& f) const noexcept { return valid() && f.id() == id(); }
  /// Whether the task was scheduled at a fixed rate or with a fixed delay.
  bool is_periodic() const noexcept { return task_ && task_->is_periodic(); }
  /// The deadline it was queued for.
  clock::time_point deadline() const noexcept { return task_ ? task_->deadline() : clock::time_point{}; }

 private:
  friend class scheduled_thread_pool;
  explicit pending_task(detail::task_ptr t) noexcept : task_(std::move(t)) {}
  void drop() noexcept {
    if (task_) task_->cancel(false);
    task_.reset();
  }

  detail::task_ptr task_;
};

}  // namespace chronopool

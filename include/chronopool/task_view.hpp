// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A read-only look at a task, passed to the pool's hooks.
#pragma once

#include <chronopool/detail/pool/task_base.hpp>

#include <chrono>
#include <cstdint>
#include <functional>

namespace chronopool {

/// Identifies one task; equal for a future, its copies, and the pending_task
/// that shutdown_now() returns for it. Valid while any of those exist.
class task_id {
 public:
  /// The empty id, equal to no task's.
  constexpr task_id() noexcept = default;
  /// Equal when both name the same task (or both are empty).
  friend constexpr bool operator==(task_id, task_id) noexcept = default;
  /// An arbitrary but consistent order, for ordered containers.
  friend constexpr auto operator<=>(task_id, task_id) noexcept = default;
  /// The id as an integer (0 for the empty id), e.g. for logs and hashing;
  /// it may be reused by a later task once this one is gone.
  constexpr std::uintptr_t value() const noexcept { return v_; }

 private:
  friend class task_view;
  friend class scheduled_future_base;
  friend class pending_task;
  explicit task_id(const void* p) noexcept : v_(reinterpret_cast<std::uintptr_t>(p)) {}
  std::uintptr_t v_ = 0;
};

/// How a task is scheduled.
enum class schedule_kind : std::uint8_t {
  one_shot,     ///< runs once (execute(), submit(), schedule() and their variants)
  fixed_rate,   ///< runs every period from its first deadline (schedule_at_fixed_rate())
  fixed_delay,  ///< runs a fixed delay after each run ends (schedule_with_fixed_delay())
};

/// What hooks (before_execute, after_execute, task_decorator, error_handler)
/// are told about the task at hand.
class task_view {
 public:
  /// The clock of deadline().
  using clock = std::chrono::steady_clock;

  /// For the pool: a view of @p t, valid while the hook that receives it runs.
  explicit task_view(const detail::task_base& t) noexcept : t_(&t) {}

  /// The task's identity, equal to its futures' id().
  task_id id() const noexcept { return task_id(t_); }
  /// Submission order within the pool; breaks ties between equal deadlines.
  std::uint64_t sequence() const noexcept { return t_->sequence(); }
  /// The deadline of the current (or last) run.
  clock::time_point deadline() const noexcept { return t_->deadline(); }
  /// One-shot, fixed rate or fixed delay.
  schedule_kind kind() const noexcept { return static_cast<schedule_kind>(t_->kind()); }
  /// Whether kind() is fixed_rate or fixed_delay.
  bool is_periodic() const noexcept { return t_->is_periodic(); }
  /// Zero for one-shot tasks.
  clock::duration period() const noexcept { return t_->period(); }

 private:
  const detail::task_base* t_;
};

}  // namespace chronopool

template <>
struct std::hash<chronopool::task_id> {
  std::size_t operator()(chronopool::task_id id) const noexcept { return std::hash<std::uintptr_t>{}(id.value()); }
};

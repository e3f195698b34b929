// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A read-only look at a task, passed to the pool's hooks.
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
  constexpr task_id() noexcept = default;
  friend constexpr bool operator==(task_id, task_id) noexcept = default;
  friend constexpr auto operator<=>(task_id, task_id) noexcept = default;
  constexpr std::uintptr_t value() const noexcept { return v_; }

 private:
  friend class task_view;
  friend class scheduled_future_base;
  friend class pending_task;
  explicit task_id(const void* p) noexcept : v_(reinterpret_cast<std::uintptr_t>(p)) {}
  std::uintptr_t v_ = 0;
};

enum class schedule_kind : std::uint8_t { one_shot, fixed_rate, fixed_delay };

/// What hooks (before_execute, after_execute, task_decorator, error_handler)
/// are told about the task at hand.
class task_view {
 public:
  using clock = std::chrono::steady_clock;

  explicit task_view(const detail::task_base& t) noexcept : t_(&t) {}

  task_id id() const noexcept { return task_id(t_); }
  /// Submission order within the pool; breaks ties between equal deadlines.
  std::uint64_t sequence() const noexcept { return t_->sequence(); }
  /// The deadline of the current (or last) run.
  clock::time_point deadline() const noexcept { return t_->deadline(); }
  schedule_kind kind() const noexcept { return static_cast<schedule_kind>(t_->kind()); }
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

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// An owning pointer to an intrusively reference-counted task.
//
// Tasks are shared by the queue, the worker running them, every future
// handle and the objects returned by shutdown_now(). Keeping the count in the
// task itself means one allocation per task (the callable, its result and its
// bookkeeping live together) and lets the queue hold raw pointers that it can
// adopt back into owners without touching a control block.
#pragma once

#include <cstddef>
#include <utility>

namespace chronopool::detail {

class task_base;
void intrusive_add_ref(task_base* t) noexcept;
void intrusive_release(task_base* t) noexcept;

class task_ptr {
 public:
  struct adopt_t {};
  static constexpr adopt_t adopt{};

  task_ptr() noexcept = default;
  /// Shares ownership of @p t (adds a reference).
  explicit task_ptr(task_base* t) noexcept : p_(t) {
    if (p_) intrusive_add_ref(p_);
  }
  /// Takes over a reference the caller already owns.
  task_ptr(task_base* t, adopt_t) noexcept : p_(t) {}
  task_ptr(const task_ptr& o) noexcept : task_ptr(o.p_) {}
  task_ptr(task_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  task_ptr& operator=(task_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~task_ptr() {
    if (p_) intrusive_release(p_);
  }

  task_base* get() const noexcept { return p_; }
  task_base* operator->() const noexcept { return p_; }
  task_base& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// Gives up ownership without releasing; the caller now owns the reference.
  task_base* detach() noexcept { return std::exchange(p_, nullptr); }
  void reset() noexcept { task_ptr().swap(*this); }
  void swap(task_ptr& o) noexcept { std::swap(p_, o.p_); }

  friend bool operator==(const task_ptr& a, const task_ptr& b) noexcept { return a.p_ == b.p_; }

 private:
  task_base* p_ = nullptr;
};

}  // namespace chronopool::detail

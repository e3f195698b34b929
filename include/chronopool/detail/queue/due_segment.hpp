// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The delayed work queue's due segment: a few tasks that were due when a
// busy taker took its own, set out in (deadline, sequence) order so that
// every taker can claim them without the queue's lock.
//
// Filling, removing one, and taking them all back happen under the queue's
// lock; claiming needs no lock. Each slot is claimed by an exchange, so a
// task leaves exactly once, to a claimer or to its owner's lock holder,
// whoever comes first; the cursor is only a hint of where to look. A
// claimed task keeps the slot's number in its heap_index (a claimer does
// not write it, the lock holder reads it): remove() finds the slot empty
// or holding another task, and fails, as for any task no longer queued.
//
// The count of tasks left is kept by additions and subtractions only,
// never set: whoever empties a slot counts it down after the exchange,
// and a claimer may do so after the lock holder has taken the others back
// and set some out again (remove_if), or, with a stale cursor, may empty a
// slot of a fill before that fill counted it. Each fill adds what it set
// out, so every exchange is matched by one subtraction whatever the
// order; the count may dip below zero for the moment of such a fill, and
// reads as zero then. Under the owner's lock, with no fill in progress, it
// is the tasks in the slots plus the claims not yet counted down.
#pragma once

#include <chronopool/detail/pool/task_base.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace chronopool::detail {

class due_segment {
 public:
  /// What claim() does between emptying a slot and counting it: nothing.
  struct nothing_between {
    void operator()() const noexcept {}
  };

  /// Tasks a fill sets out at most: the batch the timer shards complete
  /// per chunk.
  static constexpr std::size_t capacity = 16;

  due_segment() = default;
  due_segment(const due_segment&) = delete;
  due_segment& operator=(const due_segment&) = delete;

  /// Tasks set out and not yet claimed or taken back, counting a claim
  /// until it has counted itself down just after its exchange (a
  /// snapshot: claims go on without the lock).
  std::size_t left() const noexcept {
    const std::ptrdiff_t n = left_.load(std::memory_order_acquire);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }

  /// Claims the next task, without a lock; null when none is left. The
  /// caller owns the reference the queue held. @p between runs after the
  /// slot is emptied and before it is counted down: tests stand in there
  /// for the lock holder's moves that a claimer may be overtaken by.
  template <class Between = nothing_between>
  task_base* claim(Between&& between = {}) noexcept {
    while (left_.load(std::memory_order_acquire) > 0) {
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= capacity) {
        // The cursor ran past the end (claims raced, or slots were put
        // back): look at every slot once.
        for (auto& s : slots_)
          if (task_base* t = take_slot(s, between)) return t;
        return nullptr;
      }
      if (task_base* t = take_slot(slots_[i], between)) return t;
    }
    return nullptr;
  }

  // ---- under the owner's lock ------------------------------------------------

  /// Sets out @p n (at most capacity) tasks, in order; every slot must be
  /// empty (all taken back, or left() == 0). Each task's heap_index becomes
  /// @p tag | its slot. Adds @p n to the count (see the file comment).
  void fill(task_base* const* tasks, std::size_t n, std::size_t tag) noexcept {
    for (std::size_t j = 0; j < n; ++j) {
      tasks[j]->heap_index = tag | j;
      deadlines_[j] = tasks[j]->deadline().time_since_epoch().count();
      slots_[j].store(tasks[j], std::memory_order_release);
    }
    if (n != 0) {
      last_deadline_ = tasks[n - 1]->deadline().time_since_epoch().count();
      last_sequence_ = tasks[n - 1]->sequence();
    }
    next_.store(0, std::memory_order_relaxed);
    left_.fetch_add(static_cast<std::ptrdiff_t>(n), std::memory_order_release);
  }

  /// Takes @p t back out of slot @p slot if it is still there.
  bool remove(task_base& t, std::size_t slot) noexcept {
    if (slot >= capacity) return false;
    task_base* expected = &t;
    if (!slots_[slot].compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                              std::memory_order_relaxed))
      return false;
    left_.fetch_sub(1, std::memory_order_release);
    t.heap_index = task_base::not_queued;
    return true;
  }

  /// Takes back every task still set out, in order, calling @p f with each
  /// (its heap_index reset). Returns how many.
  template <class F>
  std::size_t take_all(F&& f) noexcept {
    std::size_t n = 0;
    for (auto& s : slots_) {
      if (task_base* t = take_slot(s)) {
        t->heap_index = task_base::not_queued;
        f(t);
        ++n;
      }
    }
    return n;
  }

  /// The deadline of the first task still set out, if any: read from the
  /// fill's record, never through the slot (a claimer may have taken the
  /// task and freed it since). A snapshot: claims go on without the lock.
  std::optional<std::int64_t> first_left_deadline() const noexcept {
    for (std::size_t j = 0; j < capacity; ++j)
      if (slots_[j].load(std::memory_order_acquire) != nullptr) return deadlines_[j];
    return std::nullopt;
  }

  /// Whether a task with key (@p deadline, @p sequence) comes before the
  /// last task the latest fill set out (recorded at the fill: a claimed
  /// task may be gone already). Such a task, queued later, must go first.
  bool precedes_last(std::int64_t deadline, std::uint64_t sequence) const noexcept {
    return deadline < last_deadline_ || (deadline == last_deadline_ && sequence < last_sequence_);
  }

 private:
  template <class Between = nothing_between>
  task_base* take_slot(std::atomic<task_base*>& s, Between&& between = {}) noexcept {
    task_base* const t = s.exchange(nullptr, std::memory_order_acq_rel);
    if (t != nullptr) {
      between();
      left_.fetch_sub(1, std::memory_order_release);
    }
    return t;
  }

  std::array<std::atomic<task_base*>, capacity> slots_{};
  std::atomic<std::size_t> next_{0};
  std::atomic<std::ptrdiff_t> left_{0};  // may dip below zero during a fill (see the file comment)
  std::array<std::int64_t, capacity> deadlines_{};  // each slot's deadline at the fill (owner's lock)
  std::int64_t last_deadline_ = 0;   // the key of the fill's last task (owner's lock)
  std::uint64_t last_sequence_ = 0;
};

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The key types of a deadline index: index_node, the base of everything an
// index orders (tasks, timer waits), and index_entry, the slot that carries
// a node's key inline so that ordering reads arrays, never the nodes.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace chronopool::detail {

/// What a deadline_index orders: a key (deadline, sequence) and the slot the
/// index keeps the node in. Tasks and timer waits derive from it.
class index_node {
 public:
  static constexpr std::size_t not_queued = std::numeric_limits<std::size_t>::max();

  // The deadline is atomic only so that a task's handle can report delay()
  // while a worker re-arms it; indexes read it under their owner's lock.
  time_point deadline() const noexcept { return time_point(duration(deadline_.load(std::memory_order_relaxed))); }
  void set_deadline(time_point t) noexcept { deadline_.store(t.time_since_epoch().count(), std::memory_order_relaxed); }
  std::uint64_t sequence() const noexcept { return sequence_; }
  void set_sequence(std::uint64_t s) noexcept { sequence_ = s; }

  /// Strict (deadline, sequence) order: equal deadlines in submission order.
  friend bool runs_before(const index_node& a, const index_node& b) noexcept {
    const auto da = a.deadline_.load(std::memory_order_relaxed);
    const auto db = b.deadline_.load(std::memory_order_relaxed);
    return da < db || (da == db && a.sequence_ < b.sequence_);
  }

  /// The node's slot in the index that holds it, or not_queued. Guarded by
  /// that index's owner.
  std::size_t heap_index = not_queued;

 protected:
  index_node() noexcept = default;
  index_node(const index_node&) = delete;
  index_node& operator=(const index_node&) = delete;
  ~index_node() = default;

  /// The deadline with a chosen order, for a node whose deadline word is
  /// also its owner's own state (a timer object's expiry, see timer_impl).
  time_point load_deadline(std::memory_order order) const noexcept {
    return time_point(duration(deadline_.load(order)));
  }
  void store_deadline(time_point t, std::memory_order order) noexcept {
    deadline_.store(t.time_since_epoch().count(), order);
  }

  /// A node's sequence is read only by the index that holds it: before it
  /// is inserted (its sequence set) and once it is out, its owner may keep a
  /// list link in the same word (a timer wait does: see wait_op_base::link).
  index_node* spare_link() const noexcept { return spare_link_; }
  void set_spare_link(index_node* n) noexcept { spare_link_ = n; }

 private:
  std::atomic<time_point::rep> deadline_{0};
  union {
    std::uint64_t sequence_ = 0;
    index_node* spare_link_;
  };
};

/// A heap, run or wheel slot: the node's key, copied in when it is inserted
/// (an indexed node's deadline and sequence do not change), and the node.
struct index_entry {
  time_point::rep deadline;
  std::uint64_t sequence;
  index_node* node;

  static index_entry of(index_node* n) noexcept {
    return {n->deadline().time_since_epoch().count(), n->sequence(), n};
  }
  friend bool operator<(const index_entry& a, const index_entry& b) noexcept {
    return a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence);
  }
};

}  // namespace chronopool::detail

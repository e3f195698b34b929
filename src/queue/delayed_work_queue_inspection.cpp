// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the delayed work queue reports about itself under its lock: its
// size, head and wake deadlines, activity for quiet checks, and the
// invariants tests check.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

namespace chronopool::detail {

std::size_t delayed_work_queue::size() const {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  absorb_posted_locked();
  return count();
}

std::uint64_t delayed_work_queue::inbox_drained() const {
  std::lock_guard lock(mutex_);
  return inbox_drained_;
}

std::size_t delayed_work_queue::index_bytes() const {
  std::lock_guard lock(mutex_);
  return index_.reserved_bytes();
}

std::optional<time_point> delayed_work_queue::head_deadline() const {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  std::optional<time_point> head = index_.first_deadline();
  if (segment_.left() != 0) {
    // What is still set out comes before all the rest.
    if (const auto first = segment_.first_left_deadline()) head = time_point(duration(*first));
  }
  if (!ready_.empty()) {
    const time_point ready_head(duration(ready_.front().deadline));
    if (!head || ready_head < *head) head = ready_head;
  }
  return head;
}

delayed_work_queue::activity delayed_work_queue::current_activity() const {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  absorb_posted_locked();
  activity a;
  a.taken = taken_;
  if (!functions_.empty()) {
    a.earliest = time_point::min();
    return a;
  }
  a.earliest = index_.first_deadline();
  if (!ready_.empty()) {
    const time_point ready_head(duration(ready_.front().deadline));
    if (!a.earliest || ready_head < *a.earliest) a.earliest = ready_head;
  }
  return a;
}

std::optional<time_point> delayed_work_queue::wake_deadline() const {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  return index_.wake_time();
}

bool delayed_work_queue::check_invariants() const {
  std::lock_guard lock(mutex_);
  if (!index_.check_invariants()) return false;
  if (segment_.left() > due_segment::capacity) return false;
  std::size_t live = 0;
  for (std::size_t k = 0; k < ready_.size(); ++k) {
    const entry& e = ready_[k];
    if (e.node == nullptr) {
      if (k == 0) return false;  // the front is never an empty slot
      continue;
    }
    ++live;
    if (e.node->heap_index != (ready_tag | (ready_popped_ + k))) return false;
    if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
  }
  return live == ready_count_;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A shard on a manual clock: no native timer, no poll. The manual clock's
// driver asks each shard for its first deadline, moves the virtual time
// there and tells the shard, which posts one collect to the context; the
// collect, the deliveries and the re-arms are the real clock's.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <mutex>

namespace chronopool::detail {

void timer_shard::use_manual_time(const manual_time* m) {
  const std::lock_guard lock(mutex_);
  manual_ = m;
}

std::optional<time_point> timer_shard::manual_first_deadline() {
  after_unlock later(*this);
  const std::lock_guard lock(mutex_);
  drain_inbox_locked(later);
  std::optional<time_point> first = index_.first_deadline();
  if (first && is_never(*first)) first.reset();
  return first;
}

void timer_shard::manual_time_moved() {
  after_unlock later(*this);
  const std::lock_guard lock(mutex_);
  rewake_locked(later, false);
}

void timer_shard::arm_manual_locked() {
  const std::optional<time_point> first = index_.first_deadline();
  if (!first || *first > manual_->now()) {
    // Nothing due by the virtual time: no wake-up at all (the gate stays
    // closed, so every start takes the lock and the index stays exact).
    if (armed_) {
      armed_ = false;
      generation_.fetch_add(1, std::memory_order_relaxed);  // a collect on its way finds nothing to do
    }
    return;
  }
  if (armed_ && armed_at_ <= *first) return;  // a collect is on its way
  post_collect_locked(*first);
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What a deadline index answers about its deadlines without changing: the
// first deadline, exactly, and when its owner must look again.
#include <chronopool/detail/queue/deadline_index.hpp>

#include <algorithm>
#include <bit>
#include <optional>

namespace chronopool::detail {

std::optional<time_point> deadline_index::first_deadline() const noexcept {
  if (const entry* front = heap_front()) return time_point(duration(front->deadline));
  if (near_empty() && wheel_count_ == 0 && tier_mask_ == 0 && stale_mask_ == 0) {
    if (!never_.empty()) return time_point::max();
    return std::nullopt;
  }
  // The heap is empty, or nodes set aside may come before its front: the
  // earliest of its front (or, with none, the first wheel slot's), the
  // set-aside nodes and the lowest tier bucket (every other tier node comes
  // later). Scans: no hot path.
  key m = ~key{0};
  if (const entry* f = near_front()) {
    m = key_of(f->deadline);
  } else if (wheel_count_ != 0) {
    m = first_wheel_key();
  }
  for (std::uint64_t b = stale_mask_; b != 0; b &= b - 1) m = std::min(m, bucket_min(stale_[std::countr_zero(b)]));
  if (tier_mask_ != 0) m = std::min(m, bucket_min(tier_[std::countr_zero(tier_mask_)]));
  return time_of(m);
}

deadline_index::key deadline_index::last_near_key(key bound, key last) const noexcept {
  // The run is sorted: its entries up to the bound (tombstones skipped).
  const std::size_t run_end = std::min(run_.size(), run_pos_ + coalesce_scan_limit);
  for (std::size_t p = run_pos_; p < run_end && key_of(run_[p].deadline) <= bound; ++p)
    if (run_[p].node != nullptr) last = std::max(last, key_of(run_[p].deadline));
  // The heap's entries up to the bound: a walk that goes below an entry only
  // when it is within the bound (its children come no earlier).
  if (!heap_.empty() && key_of(heap_.front().deadline) <= bound) {
    std::size_t todo[coalesce_scan_limit];
    std::size_t n = 0;
    todo[n++] = 0;
    for (std::size_t seen = 0; n != 0 && seen < coalesce_scan_limit; ++seen) {
      const std::size_t i = todo[--n];
      last = std::max(last, key_of(heap_[i].deadline));
      for (std::size_t c = i * arity + 1; c < std::min(heap_.size(), i * arity + 1 + arity); ++c)
        if (key_of(heap_[c].deadline) <= bound && n < coalesce_scan_limit) todo[n++] = c;
    }
  }
  return last;
}

deadline_index::key deadline_index::last_wheel_key(key bound, key last) const noexcept {
  // The entries (unsorted) of the first occupied slot and of the few after
  // it, up to the bound's slot; the floor is at or before all of them. Only
  // keys within the bound count, so a ring that wraps within the bound (a
  // test's tiny window) costs coverage, never a late wake.
  const std::size_t first = (slot_of(heap_limit_) + *first_occupied()) & (wheel_slots - 1);
  const std::size_t bound_slot = slot_of(bound);
  std::size_t budget = coalesce_scan_limit;
  for (std::size_t i = 0; i < max_coalesce_slots && budget != 0; ++i) {
    const std::size_t s = (first + i) & (wheel_slots - 1);
    const slot_buffer& slot = wheel_[s];
    const std::size_t n = std::min(slot.size(), budget);
    budget -= n;
    for (std::size_t j = 0; j < n; ++j) {
      const key k = key_of(slot.begin()[j].deadline);
      if (k <= bound) last = std::max(last, k);
    }
    if (s == bound_slot) break;
  }
  return last;
}

std::optional<time_point> deadline_index::wake_time(duration slack) const noexcept {
  std::optional<time_point> wake;
  // How far a slack takes the wake from @p first: not past a node set aside
  // from the tier, which may come before the near front's later entries.
  const auto slack_bound = [&](key first) {
    key bound = key_of(saturating_add(time_of(first), slack));
    if (stale_count_ != 0) bound = stale_floor_ == 0 ? 0 : std::min(bound, stale_floor_ - 1);
    return bound;
  };
  if (const entry* f = near_front()) {
    wake = time_point(duration(f->deadline));
    if (slack > duration::zero()) {
      const key first = key_of(f->deadline);
      const key bound = slack_bound(first);
      if (bound > first) {
        key last = last_near_key(bound, first);
        // Past the near front's end: the wheel's first slots within the bound too.
        if (wheel_count_ != 0 && bound >= heap_limit_) last = last_wheel_key(bound, last);
        wake = time_of(last);
      }
    }
  } else if (wheel_count_ != 0) {
    // The first wheel deadline (or, when that node was erased, an earlier
    // time: one wake-up too many, no scan): advance() at that time finds the
    // first key again, or takes its slot onto the run when it is that near.
    // With a slack, on to the latest key within it in the first slots: the
    // wheel holds everything near when the first deadline is more than a
    // slot away, as most are when the owner goes to sleep.
    wake = time_of(wheel_floor_);
    if (slack > duration::zero()) {
      const key bound = slack_bound(wheel_floor_);
      if (bound > wheel_floor_) wake = time_of(last_wheel_key(bound, wheel_floor_));
    }
  }
  if (tier_mask_ != 0) {
    // A window before the lowest bucket's lower bound (and not before the
    // reference time must move: advance() moves it then), even with nodes
    // nearer: the bucket's nodes are set aside then and moved near in shares
    // while the near ones come due. An owner that slept on to a later near
    // deadline would move them all at once, under its lock, as they came due.
    const key floor = std::max(bucket_floor(static_cast<unsigned>(std::countr_zero(tier_mask_))), near_limit_);
    const key width = key{1} << near_bits_;
    const time_point move = time_of(floor > width ? floor - width : 0);
    if (!wake || move < *wake) wake = move;
  }
  // The next slice, when nothing else wakes the owner sooner.
  if (stale_count_ != 0) {
    const time_point next = time_of(slice_after(last_slice_));
    if (!wake || next < *wake) wake = next;
  }
  return wake;
}

}  // namespace chronopool::detail

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

std::optional<time_point> deadline_index::wake_time() const noexcept {
  std::optional<time_point> wake;
  if (const entry* f = near_front()) {
    wake = time_point(duration(f->deadline));
  } else if (wheel_count_ != 0) {
    // The first wheel deadline (or, when that node was erased, an earlier
    // time: one wake-up too many, no scan): advance() at that time finds the
    // first key again, or takes its slot onto the run when it is that near.
    wake = time_of(wheel_floor_);
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

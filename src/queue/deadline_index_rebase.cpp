// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Keeping a deadline index's reference time a window ahead of the clock: the far
// tier's buckets coming near set aside, then moved near in shares.
#include <chronopool/detail/queue/deadline_index.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace chronopool::detail {

void deadline_index::rebase(key to, key now, bool at_once) noexcept {
  // The nodes set aside last time first (usually moved long ago): they are
  // relative to the reference time this replaces.
  if (!move_all_stale()) return;  // out of memory: a later advance retries
  // Buckets at or below the highest bit in which the reference time changes
  // are set aside to be redistributed: their nodes go to the heap (those
  // below bucket `top`, all due before `to`, and those of bucket `top` due
  // before the new near limit) or to lower buckets. Those above keep their
  // meaning (their nodes share the same higher bits with the new reference
  // time as with the old one).
  // The wheel first reaches as far as the new near window: usually it does.
  if (!wheel_cover(window_end(to))) return;  // out of memory: a later advance retries
  const auto top = static_cast<unsigned>(std::bit_width(base_ ^ to) - 1);
  const std::uint64_t affected = tier_mask_ & (top == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << top) - 1);
  stale_floor_ = near_limit_;
  set_base(to);
  if (affected == 0) return;
  // A swap per bucket: no node is touched here. stale_[j] is empty, with the
  // buffer of the bucket that went through last time.
  for (std::uint64_t m = affected; m != 0; m &= m - 1) {
    const auto j = static_cast<unsigned>(std::countr_zero(m));
    tier_[j].swap(stale_[j]);
    tier_count_ -= stale_[j].size();
    stale_count_ += stale_[j].size();
  }
  tier_mask_ &= ~affected;
  stale_mask_ = affected;
  if (at_once || stale_count_ <= whole_move) {
    move_all_stale();
    return;
  }
  last_slice_ = now;
}

void deadline_index::move_stale_share(key now) noexcept {
  // Done half a window before the first set-aside node can be due; until
  // then, at each turn at least 1/1024 window after the last, the share of
  // what is left that the time since the last turn is of the time left.
  const key done_by = stale_done_by();
  if (now >= done_by) {
    move_all_stale();
    last_slice_ = now;  // out of memory: the owner retries at the next turn, not at once
    return;
  }
  if (now < last_slice_ || now - last_slice_ < (key{1} << (near_bits_ - std::min(near_bits_, min_turn_log2))))
    return;
  const double share = static_cast<double>(now - last_slice_) / static_cast<double>(done_by - last_slice_);
  move_stale(static_cast<std::size_t>(std::ceil(static_cast<double>(stale_count_) * share)));
  last_slice_ = now;
}

void deadline_index::move_stale(std::size_t limit) noexcept {
  while (limit != 0 && stale_mask_ != 0) {
    const auto j = static_cast<unsigned>(std::countr_zero(stale_mask_));
    auto& bucket = stale_[j];
    for (; limit != 0 && !bucket.empty(); --limit) {
      index_node* const n = bucket.back();
      const key k = key_of(n->deadline());
      try {
        if (k < near_limit_) {
          near_push(n, k);
        } else {
          tier_push(n, k);  // a lower bucket than j's, relative to the new reference time
        }
      } catch (...) {
        return;  // out of memory: nothing changed for this node, it stays set aside
      }
      bucket.pop_back();
      --stale_count_;
    }
    if (bucket.empty()) stale_mask_ &= ~(std::uint64_t{1} << j);
  }
}

}  // namespace chronopool::detail

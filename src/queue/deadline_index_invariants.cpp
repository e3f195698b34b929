// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What must hold of a deadline index, checked from end to end (tests and the
// queue's own check_invariants()).
#include <chronopool/detail/queue/deadline_index.hpp>

#include <bit>
#include <cstddef>

namespace chronopool::detail {

bool deadline_index::check_invariants() const noexcept {
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    const entry& e = heap_[i];
    if (e.node->heap_index != i) return false;
    // The inline key must still be the node's key.
    if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
    if (i > 0 && e < heap_[(i - 1) / arity]) return false;
    if (key_of(e.deadline) >= near_limit_ || key_of(e.deadline) >= heap_limit_ || is_never(time_point(duration(e.deadline))))
      return false;
  }
  // The run: sorted (tombstones keep their keys), below the limit, its
  // front live, every live node knowing its id.
  std::size_t in_run = 0;
  if (run_pos_ > run_.size() || (run_pos_ < run_.size() && run_[run_pos_].node == nullptr)) return false;
  for (std::size_t p = run_pos_; p < run_.size(); ++p) {
    const entry& e = run_[p];
    if (p > run_pos_ && e < run_[p - 1]) return false;
    if (key_of(e.deadline) >= heap_limit_ || key_of(e.deadline) >= near_limit_) return false;
    if (e.node == nullptr) continue;
    ++in_run;
    if (e.node->heap_index != (run_tag | (run_origin_ + p))) return false;
    if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
  }
  if (in_run != run_count_) return false;
  std::size_t in_wheel = 0;
  const key span = static_cast<key>(wheel_slots) << slot_bits_;
  for (std::size_t s = 0; s < wheel_slots; ++s) {
    if (((wheel_mask_[s / 64] >> (s % 64) & 1) != 0) == wheel_[s].empty()) return false;
    for (std::size_t pos = 0; pos < wheel_[s].size(); ++pos) {
      const entry& e = wheel_[s][pos];
      if (e.node->heap_index != (wheel_tag | (s << bucket_shift) | pos)) return false;
      if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
      // After every heap node, before the tier, within the ring, in its slot.
      const key k = key_of(e.deadline);
      if (k < heap_limit_ || k >= near_limit_ || k - heap_limit_ >= span || slot_of(k) != s || k < wheel_floor_)
        return false;
    }
    in_wheel += wheel_[s].size();
  }
  if (in_wheel != wheel_count_) return false;
  std::size_t in_tier = 0;
  for (std::size_t j = 0; j < buckets; ++j) {
    const bool marked = (tier_mask_ >> j & 1) != 0;
    if (marked == tier_[j].empty()) return false;
    for (std::size_t pos = 0; pos < tier_[j].size(); ++pos) {
      const index_node* n = tier_[j][pos];
      if (n->heap_index != (tier_tag | (j << bucket_shift) | pos)) return false;
      const key k = key_of(n->deadline());
      // In the tier only when not near, and in the bucket its key names.
      if (k < near_limit_ || is_never(n->deadline())) return false;
      if (static_cast<std::size_t>(std::bit_width(k ^ base_) - 1) != j) return false;
    }
    in_tier += tier_[j].size();
  }
  if (in_tier != tier_count_) return false;
  std::size_t set_aside = 0;
  for (std::size_t j = 0; j < buckets; ++j) {
    if (((stale_mask_ >> j & 1) != 0) == stale_[j].empty()) return false;
    for (std::size_t pos = 0; pos < stale_[j].size(); ++pos) {
      const index_node* n = stale_[j][pos];
      if (n->heap_index != (tier_tag | (j << bucket_shift) | pos)) return false;
      // None may be due before the floor the heap's front is measured against.
      if (key_of(n->deadline()) < stale_floor_ || is_never(n->deadline())) return false;
    }
    set_aside += stale_[j].size();
  }
  if (set_aside != stale_count_) return false;
  for (std::size_t pos = 0; pos < never_.size(); ++pos)
    if (never_[pos]->heap_index != (never_tag | pos) || !is_never(never_[pos]->deadline())) return false;
  return true;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The heap, run, wheel and far tier behind both queues: inserting, erasing and
// taking nodes in deadline order. See detail/queue/deadline_index.hpp.
#include <chronopool/detail/queue/deadline_index.hpp>

#include "deadline_index_internal.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

namespace chronopool::detail {

namespace {

/// The slot width's log2 for a near window of 2^near_bits ns: a 1,024th of it.
unsigned slot_bits_for(unsigned near_bits) noexcept { return near_bits > 10 ? near_bits - 10 : 0; }

}  // namespace

deadline_index::deadline_index(unsigned near_window_log2)
    : near_bits_(near_window_log2), slot_bits_(slot_bits_for(near_window_log2)) {
  if (near_window_log2 < 1 || near_window_log2 > 62)
    throw std::invalid_argument("chronopool: the near window must be 2^1 to 2^62 ns");
  wheel_ = std::make_unique<slot_buffer[]>(wheel_slots);
  const key now = key_of(clock::now());
  set_base(now);
  heap_limit_ = first_heap_limit(now);
}

// ---- the heap -----------------------------------------------------------------

void deadline_index::sift_up(std::size_t i) noexcept {
  const entry e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / arity;
    if (!(e < heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void deadline_index::sift_down(std::size_t i) noexcept {
  const entry e = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = arity * i + 1;
    if (first >= n) break;
    const std::size_t last = std::min(first + arity, n);
    std::size_t best = first;
    for (std::size_t c = first + 1; c < last; ++c)
      if (heap_[c] < heap_[best]) best = c;
    if (!(heap_[best] < e)) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, e);
}

void deadline_index::push_entry(index_node* n) {
  heap_.push_back(entry::of(n));  // may throw (allocation): nothing changed yet
  n->heap_index = heap_.size() - 1;
  sift_up(n->heap_index);
}

index_node* deadline_index::remove_at(std::size_t i) noexcept {
  index_node* const n = heap_[i].node;
  const entry last = heap_.back();
  heap_.pop_back();
  n->heap_index = index_node::not_queued;
  if (i < heap_.size()) {
    // The moved-in last entry may belong above or below slot i.
    place(i, last);
    sift_down(i);
    if (heap_[i].node == last.node) sift_up(i);
  } else {
    refill_near();
  }
  return n;
}

// ---- the run -------------------------------------------------------------------

index_node* deadline_index::pop_near_front() noexcept {
  // The same choice as near_front(): the heap's front only when it comes first.
  const bool from_run = run_pos_ < run_.size() && (heap_.empty() || !(heap_.front() < run_[run_pos_]));
  if (!from_run) return remove_at(0);
  index_node* const n = run_[run_pos_].node;
  // Nodes are popped in run order, and each pop writes its node, which was
  // last touched when it was inserted, maybe long ago: ask for the one a few
  // places on now, so that its line is here by the time it is popped (the
  // pops happen under the owner's lock).
  if (run_pos_ + run_lookahead < run_.size()) {
    if (const index_node* ahead = run_[run_pos_ + run_lookahead].node) __builtin_prefetch(ahead, 1);
  }
  ++run_pos_;
  --run_count_;
  n->heap_index = index_node::not_queued;
  settle_run();
  refill_near();
  return n;
}

index_node* deadline_index::run_erase(std::size_t p) noexcept {
  index_node* const n = run_[p].node;
  run_[p].node = nullptr;  // a tombstone: no other entry moves
  --run_count_;
  n->heap_index = index_node::not_queued;
  settle_run();
  refill_near();
  return n;
}

void deadline_index::settle_run() noexcept {
  if (run_count_ == 0) {
    reset_run();
    return;
  }
  while (run_[run_pos_].node == nullptr) ++run_pos_;  // a live entry is left
}

void deadline_index::renumber_run(std::size_t origin) noexcept {
  run_origin_ = origin;
  for (std::size_t p = run_pos_; p < run_.size(); ++p)
    if (index_node* const n = run_[p].node) n->heap_index = run_tag | (origin + p);
}

bool deadline_index::run_append_slot(std::size_t s) noexcept {
  auto& slot = wheel_[s];
  const std::size_t k = slot.size();
  // The taken front goes once it is half the buffer, or when it makes room:
  // a memmove, and the origin keeps every live entry's id.
  if (run_pos_ != 0 && (run_pos_ >= run_.size() / 2 || run_.size() + k > run_.capacity())) {
    const std::size_t live = run_.size() - run_pos_;
    std::memmove(run_.data(), run_.data() + run_pos_, live * sizeof(entry));
    run_.truncate(live);
    run_origin_ += run_pos_;
    run_pos_ = 0;
    if (run_origin_ >= run_renumber_at) renumber_run(0);
  }
  if (run_.size() + k > run_.capacity()) {
    try {
      run_.reserve(std::max(run_.size() + k, 2 * run_.capacity()));
    } catch (...) {
      return false;
    }
  }
  const std::size_t first = run_.size();
  for (const entry& e : slot) run_.push_back(e);  // within the capacity: no allocation
  // Every key of the slot comes after every key already in the run. A slot
  // filled in key order (waits of one deadline, many timers of one leeway
  // slot, K waits on one timer) is left as it is: the check is one pass
  // that stops at the first key out of order, which in any other slot comes
  // within its first few entries.
  if (!std::is_sorted(run_.begin() + first, run_.end())) std::sort(run_.begin() + first, run_.end());
  // One write per node (the only one until it leaves): ahead of it, the
  // nodes a few entries on are fetched, so their misses overlap.
  constexpr std::size_t ahead = 8;
  for (std::size_t p = first; p < run_.size(); ++p) {
    if (p + ahead < run_.size()) __builtin_prefetch(run_[p + ahead].node, 1);
    run_[p].node->heap_index = run_tag | (run_origin_ + p);
  }
  run_count_ += k;
  return true;
}

void deadline_index::rebuild_heap() noexcept {
  for (std::size_t i = 0; i < heap_.size(); ++i) place(i, heap_[i]);
  // Floyd's construction: sift down every parent, the last one first.
  const std::size_t parents = heap_.size() < 2 ? 0 : (heap_.size() - 2) / arity + 1;
  for (std::size_t i = parents; i-- > 0;) sift_down(i);
}

// ---- the wheel -------------------------------------------------------------------

void deadline_index::slot_push(slot_buffer& slot, const entry& e) {
  const std::size_t capacity = slot.block_class == slot_buffer::no_block ? 0 : slot_pool::capacity_of(slot.block_class);
  if (slot.count == capacity) {
    const unsigned c = slot.block_class == slot_buffer::no_block ? 0u : slot.block_class + 1u;
    if (c >= slot_pool::classes) throw std::bad_alloc();
    entry* bigger = slot_pool_.take(c);  // may throw: nothing changed yet
    if (slot.count != 0) std::memcpy(static_cast<void*>(bigger), slot.data, slot.count * sizeof(entry));
    if (slot.data != nullptr) slot_pool_.give(slot.data, slot.block_class);
    slot.data = bigger;
    slot.block_class = static_cast<std::uint8_t>(c);
  }
  slot.data[slot.count++] = e;
}

void deadline_index::slot_release(slot_buffer& slot) noexcept {
  if (slot.data != nullptr) slot_pool_.give(slot.data, slot.block_class);
  slot.data = nullptr;
  slot.count = 0;
  slot.block_class = slot_buffer::no_block;
}

void deadline_index::near_push(index_node* n, key k) {
  if (k >= heap_limit_) {
    wheel_push(n, k);
    return;
  }
  // Coming after the whole run (a run of timeouts armed in order), it goes
  // on the run's end: no sift, and one write to the node.
  const entry e = entry::of(n);
  if (run_count_ == 0 || !(e < run_.back())) {
    run_.push_back(e);  // may throw (allocation): nothing changed yet
    n->heap_index = run_tag | (run_origin_ + run_.size() - 1);
    if (run_count_++ == 0) run_pos_ = run_.size() - 1;
    return;
  }
  push_entry(n);
}

void deadline_index::wheel_push(index_node* n, key k) {
  // k < near_limit_, which is at most two windows (the ring) past heap_limit_.
  const std::size_t s = slot_of(k);
  auto& slot = wheel_[s];
  slot_push(slot, entry::of(n));  // may throw (allocation): nothing changed yet
  n->heap_index = wheel_tag | (s << bucket_shift) | (slot.size() - 1);
  wheel_mask_[s / 64] |= std::uint64_t{1} << (s % 64);
  ++wheel_count_;
  wheel_floor_ = std::min(wheel_floor_, k);
}

index_node* deadline_index::wheel_erase(std::size_t s, std::size_t pos) noexcept {
  auto& slot = wheel_[s];
  index_node* const n = slot[pos].node;
  // Slots are unordered: the last entry fills the hole.
  slot[pos] = slot.back();
  slot[pos].node->heap_index = wheel_tag | (s << bucket_shift) | pos;
  slot.pop_back();
  if (slot.empty()) wheel_mask_[s / 64] &= ~(std::uint64_t{1} << (s % 64));
  if (--wheel_count_ == 0) wheel_floor_ = ~key{0};
  n->heap_index = index_node::not_queued;
  return n;
}

std::optional<std::size_t> deadline_index::first_occupied() const noexcept {
  if (wheel_count_ == 0) return std::nullopt;
  // Around the ring from heap_limit_'s slot: its word from that bit, the
  // other words, then its word again below that bit.
  constexpr std::size_t words = wheel_slots / 64;
  const std::size_t start = slot_of(heap_limit_);
  for (std::size_t i = 0; i <= words; ++i) {
    const std::size_t w = (start / 64 + i) % words;
    std::uint64_t bits = wheel_mask_[w];
    if (i == 0) bits &= ~std::uint64_t{0} << (start % 64);
    if (i == words) bits &= (std::uint64_t{1} << (start % 64)) - 1;
    if (bits != 0) {
      const std::size_t s = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
      return (s - start) & (wheel_slots - 1);
    }
  }
  return std::nullopt;  // not reached: wheel_count_ says a slot is occupied
}

bool deadline_index::wheel_take_through(key through) noexcept {
  const key width = key{1} << slot_bits_;
  while (heap_limit_ <= through && heap_limit_ != ~key{0}) {
    const auto d = first_occupied();
    // Keys in the wheel are below the end of the range, so an occupied
    // slot's floor does not overflow.
    const key floor = d ? heap_limit_ + (static_cast<key>(*d) << slot_bits_) : ~key{0};
    if (!d || floor > through) {
      // Nothing up to `through`: the limit jumps past it (the slot holding
      // `through` is empty, so it stays at or below the next floor).
      const key past = through >> slot_bits_ << slot_bits_;
      heap_limit_ = past > ~key{0} - width ? ~key{0} : past + width;
      settle_wheel_floor();
      return true;
    }
    const std::size_t s = slot_of(floor);
    auto& slot = wheel_[s];
    if (!run_append_slot(s)) return false;  // the slot stays whole, and the limit
    wheel_count_ -= slot.size();
    if (wheel_count_ == 0) wheel_floor_ = ~key{0};
    wheel_mask_[s / 64] &= ~(std::uint64_t{1} << (s % 64));
    slot.clear();
    slot_release(slot);  // for the slots coming next
    heap_limit_ = floor > ~key{0} - width ? ~key{0} : floor + width;
    settle_wheel_floor();
  }
  return true;
}

deadline_index::key deadline_index::first_heap_limit(key now) const noexcept {
  // Where advance(now) leaves it: past the slot a slot after now.
  const key width = key{1} << slot_bits_;
  const key soon = (now > ~key{0} - width ? ~key{0} : now + width) >> slot_bits_ << slot_bits_;
  return soon > ~key{0} - width ? ~key{0} : soon + width;
}

void deadline_index::settle_wheel_floor() noexcept {
  if (wheel_count_ == 0) {
    wheel_floor_ = ~key{0};
    return;
  }
  // A floor below heap_limit_ was the key of a node that has left the
  // wheel: the first key now, found with one pass over the first slot.
  if (wheel_floor_ >= heap_limit_) return;
  wheel_floor_ = first_wheel_key();
}

void deadline_index::refill_near_slot() noexcept {
  // Only the slot right after the near front: taking a slot further out
  // would move heap_limit_ past it, and every node inserted before it from
  // then on would go into the heap, to be sifted at every pop, instead of
  // into the wheel. A slot further out is found by the wake time
  // (wheel_floor_), and taken when advance() comes near it.
  const auto d = first_occupied();
  if (d && *d == 0) wheel_take_through(heap_limit_);
}

bool deadline_index::wheel_take_first() noexcept {
  const auto d = first_occupied();
  if (!d) return true;
  return wheel_take_through(heap_limit_ + (static_cast<key>(*d) << slot_bits_));
}

bool deadline_index::wheel_cover(key limit) noexcept {
  const key span = static_cast<key>(wheel_slots) << slot_bits_;
  if (limit <= span) return true;
  // Every key below `limit` must fall within the ring from heap_limit_.
  const key lowest = limit - span;  // heap_limit_ must reach it (rounded up to a slot)
  if (heap_limit_ >= lowest) return true;
  return wheel_take_through(lowest - 1);
}

deadline_index::key deadline_index::slot_min(std::size_t s) const noexcept {
  key m = ~key{0};
  for (const entry& e : wheel_[s]) m = std::min(m, key_of(e.deadline));
  return m;
}

deadline_index::key deadline_index::first_wheel_key() const noexcept {
  return slot_min((slot_of(heap_limit_) + *first_occupied()) & (wheel_slots - 1));
}

// ---- the far tier ---------------------------------------------------------------

deadline_index::key deadline_index::window_end(key b) const noexcept {
  const key window_start = b >> near_bits_ << near_bits_;
  const key width = key{1} << near_bits_;
  // The last window of the key range has no end: everything there is near.
  return window_start > ~key{0} - width ? ~key{0} : window_start + width;
}

void deadline_index::set_base(key b) noexcept {
  base_ = b;
  near_limit_ = window_end(b);
}

deadline_index::key deadline_index::lead(key now) const noexcept {
  const key width = key{1} << near_bits_;
  return now > ~key{0} - width ? ~key{0} : now + width;
}

deadline_index::key deadline_index::slice_after(key last) const noexcept {
  key interval = key{1} << (near_bits_ - std::min(near_bits_, idle_turn_log2));
  const key done_by = stale_done_by();
  if (stale_count_ > turn_goal && done_by > last) {
    // The time in which turn_goal of them are due to move at the pace
    // move_stale_share() keeps, within the turns' bounds.
    const key paced = (done_by - last) / (stale_count_ / turn_goal);
    const key min_turn = key{1} << (near_bits_ - std::min(near_bits_, min_turn_log2));
    interval = std::clamp(paced, min_turn, interval);
  }
  return last > ~key{0} - interval ? ~key{0} : last + interval;
}

deadline_index::key deadline_index::stale_done_by() const noexcept {
  const key half = key{1} << (near_bits_ - 1);
  return stale_floor_ - std::min(stale_floor_, half);
}

deadline_index::key deadline_index::bucket_floor(unsigned j) const noexcept {
  // Keys in bucket j share the bits above j with base_ and have bit j set.
  const key above = j == 63 ? 0 : base_ >> (j + 1) << (j + 1);
  return above | (key{1} << j);
}

deadline_index::key deadline_index::bucket_min(const node_buffer& bucket) noexcept {
  key m = ~key{0};
  for (const index_node* n : bucket) m = std::min(m, key_of(n->deadline()));
  return m;
}

void deadline_index::tier_push(index_node* n, key k) {
  // k >= near_limit_ > base_, so they differ, in a bit at or above near_bits_.
  const auto j = static_cast<unsigned>(std::bit_width(k ^ base_) - 1);
  auto& bucket = tier_[j];
  bucket.push_back(n);  // may throw (allocation): nothing changed yet
  n->heap_index = tier_tag | (std::size_t{j} << bucket_shift) | (bucket.size() - 1);
  tier_mask_ |= std::uint64_t{1} << j;
  ++tier_count_;
}

index_node* deadline_index::bucket_erase(bucket_array& array, std::uint64_t& mask, std::size_t& count,
                                          std::uint64_t& shrink_marks, std::size_t j, std::size_t pos) noexcept {
  auto& bucket = array[j];
  index_node* const n = bucket[pos];
  // Buckets are unordered: the last node fills the hole.
  bucket[pos] = bucket.back();
  bucket[pos]->heap_index = tier_tag | (j << bucket_shift) | pos;
  bucket.pop_back();
  if (sparse(bucket)) [[unlikely]]
    shrink_marks |= std::uint64_t{1} << j;
  if (bucket.empty()) mask &= ~(std::uint64_t{1} << j);
  --count;
  n->heap_index = index_node::not_queued;
  return n;
}

index_node* deadline_index::never_erase(std::size_t pos) noexcept {
  index_node* const n = never_[pos];
  never_[pos] = never_.back();
  never_[pos]->heap_index = never_tag | pos;
  never_.pop_back();
  if (sparse(never_)) [[unlikely]]
    shrink_never_ = true;
  n->heap_index = index_node::not_queued;
  return n;
}

void deadline_index::insert(index_node* n) {
  const time_point d = n->deadline();
  if (is_never(d)) {
    never_.push_back(n);  // may throw: nothing changed yet
    n->heap_index = never_tag | (never_.size() - 1);
    return;
  }
  // An empty index may have an old reference time; start from now, so the
  // near window is the one that holds now rather than one long past (and
  // the wheel's ring starts at now: two windows reach that window's end).
  if (near_empty() && wheel_count_ == 0 && tier_count_ == 0 && stale_count_ == 0) {
    const key now = key_of(clock::now());
    set_base(lead(now));
    heap_limit_ = first_heap_limit(now);
  }
  const key k = key_of(d);
  if (k < near_limit_) {
    near_push(n, k);
  } else {
    tier_push(n, k);
  }
}

bool deadline_index::erase(index_node& n) noexcept {
  const std::size_t i = n.heap_index;
  if (i == index_node::not_queued || (i & owner_tag) != 0) return false;
  if ((i & wheel_tag) != 0 && (i & (tier_tag | never_tag)) == 0) {
    const std::size_t s = (i & ~wheel_tag) >> bucket_shift;
    const std::size_t pos = i & position_mask;
    if (s >= wheel_slots || pos >= wheel_[s].size() || wheel_[s][pos].node != &n) return false;
    wheel_erase(s, pos);
  } else if ((i & tier_tag) != 0) {
    const std::size_t j = (i & ~tier_tag) >> bucket_shift;
    const std::size_t pos = i & position_mask;
    if (j >= buckets) return false;
    if (pos < tier_[j].size() && tier_[j][pos] == &n) {
      bucket_erase(tier_, tier_mask_, tier_count_, shrink_tier_, j, pos);
    } else if (pos < stale_[j].size() && stale_[j][pos] == &n) {
      bucket_erase(stale_, stale_mask_, stale_count_, shrink_stale_, j, pos);
    } else {
      return false;
    }
  } else if ((i & never_tag) != 0) {
    const std::size_t pos = i & ~never_tag;
    if (pos >= never_.size() || never_[pos] != &n) return false;
    never_erase(pos);
  } else if ((i & run_tag) != 0) {
    const std::size_t id = i & ~run_tag;
    if (id < run_origin_) return false;
    const std::size_t p = id - run_origin_;
    if (p < run_pos_ || p >= run_.size() || run_[p].node != &n) return false;
    run_erase(p);
  } else {
    if (i >= heap_.size() || heap_[i].node != &n) return false;
    remove_at(i);
  }
  return true;
}

bool deadline_index::relocate(index_node& from, index_node& to) noexcept {
  // The same lookup as erase(); the entry (or bucket slot) is re-pointed.
  const std::size_t i = from.heap_index;
  if (i == index_node::not_queued || (i & owner_tag) != 0) return false;
  index_node** where = nullptr;
  if ((i & wheel_tag) != 0 && (i & (tier_tag | never_tag)) == 0) {
    const std::size_t s = (i & ~wheel_tag) >> bucket_shift;
    const std::size_t pos = i & position_mask;
    if (s < wheel_slots && pos < wheel_[s].size() && wheel_[s][pos].node == &from) where = &wheel_[s][pos].node;
  } else if ((i & tier_tag) != 0) {
    const std::size_t j = (i & ~tier_tag) >> bucket_shift;
    const std::size_t pos = i & position_mask;
    if (j < buckets) {
      if (pos < tier_[j].size() && tier_[j][pos] == &from) {
        where = &tier_[j][pos];
      } else if (pos < stale_[j].size() && stale_[j][pos] == &from) {
        where = &stale_[j][pos];
      }
    }
  } else if ((i & never_tag) != 0) {
    const std::size_t pos = i & ~never_tag;
    if (pos < never_.size() && never_[pos] == &from) where = &never_[pos];
  } else if ((i & run_tag) != 0) {
    const std::size_t id = i & ~run_tag;
    if (id >= run_origin_) {
      const std::size_t p = id - run_origin_;
      if (p >= run_pos_ && p < run_.size() && run_[p].node == &from) where = &run_[p].node;
    }
  } else if (i < heap_.size() && heap_[i].node == &from) {
    where = &heap_[i].node;
  }
  if (where == nullptr) return false;
  *where = &to;
  to.heap_index = i;
  from.heap_index = index_node::not_queued;
  return true;
}

void deadline_index::pull_earliest() noexcept {
  if (!move_all_stale()) return;  // out of memory: heap_front() stays null
  if (!near_empty()) return;
  if (wheel_count_ == 0) {
    if (tier_mask_ == 0) return;
    // A reference time at the earliest tier key puts that node in the wheel
    // (or the heap).
    rebase(bucket_min(tier_[std::countr_zero(tier_mask_)]), key_of(clock::now()), true);
    if (!near_empty()) return;
  }
  wheel_take_first();  // out of memory: heap_front() stays null
}

void deadline_index::advance(time_point now) noexcept {
  // Less than a window is left before the near window ends: move what is
  // coming near into the wheel one window ahead of time, so that a node is
  // at the near front, and whoever sleeps for the first deadline sleeps for
  // its exact deadline, before it is due.
  const key now_key = key_of(now);
  if (stale_count_ != 0) move_stale_share(now_key);
  // The wheel's slots a slot ahead (the near front is then the exact first
  // deadline for whoever sleeps on it, and the move is not paid by the node
  // due first); the first one at any distance when the near front is
  // empty, for the same reason. Out of memory, they stay in the wheel,
  // after every node of the near front: late, never out of order.
  const key width = key{1} << slot_bits_;
  const key soon = now_key > ~key{0} - width ? ~key{0} : now_key + width;
  if (heap_limit_ <= soon) wheel_take_through(soon);
  refill_near();
  const key ahead = lead(now_key);
  if (ahead < near_limit_) return;
  if (tier_mask_ != 0) {
    rebase(ahead, now_key, false);
  } else if (near_empty() && stale_count_ == 0 && wheel_cover(window_end(ahead))) {
    set_base(ahead);  // nothing to move: just follow the clock
  }
}

index_node* deadline_index::pop_due(time_point now) noexcept {
  advance(now);
  const entry* front = heap_front();
  if (front == nullptr || front->deadline > now.time_since_epoch().count()) return nullptr;
  return pop_near_front();
}

index_node* deadline_index::pop_first() noexcept {
  if (empty()) return nullptr;
  pull_earliest();  // the true first node, due or not, may wait in the tier
  if (stale_count_ != 0) return nullptr;  // out of memory moving the tier: nothing taken
  if (!near_empty()) return pop_near_front();
  if (wheel_count_ != 0 || tier_mask_ != 0) return nullptr;  // out of memory moving them: nothing taken
  // Only "never" nodes: the first submitted of them.
  const auto first = std::min_element(never_.begin(), never_.end(), [](const index_node* a, const index_node* b) {
    return a->sequence() < b->sequence();
  });
  return never_erase(static_cast<std::size_t>(first - never_.begin()));
}

void deadline_index::extract_all(std::vector<index_node*>& out) {
  out.reserve(out.size() + size());  // may throw: nothing changed yet
  clear([&](index_node& n) { out.push_back(&n); });
}

}  // namespace chronopool::detail

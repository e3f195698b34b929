// The heap and far tier behind both queues. See detail/deadline_index.hpp.
#include <chronopool/detail/deadline_index.hpp>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace chronopool::detail {

deadline_index::deadline_index(unsigned near_window_log2) : near_bits_(near_window_log2) {
  if (near_window_log2 < 1 || near_window_log2 > 62)
    throw std::invalid_argument("chronopool: the near window must be 2^1 to 2^62 ns");
  set_base(key_of(clock::now()));
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

namespace {

/// Gives most of a tier bucket's (or the "never" list's) buffer back once it
/// holds less than a 64th of it. A server that drops its connections, or a
/// pool whose far tasks are cancelled, would otherwise keep the buffers of
/// its peak for good (a million cancelled far timers kept 7.6 MiB of
/// bucket). The heap is left alone: it empties as its nodes fire, and
/// freeing a big buffer is slow where it matters most. Giving 8 MiB back to
/// the system (munmap) takes ~6 ms on this VM, under the owner's lock: a
/// heap shrinking as a million timers fired stalled the last of them
/// (`fire` 1M p99 1.0 -> 1.4-1.6 ms), while a bucket shrinks only as its
/// far waits are cancelled. Shrinking to four times the size keeps pushes
/// and erases amortised O(1); the order, and so every node's slot, stays.
/// Best effort: when the smaller buffer cannot be allocated, the old one
/// stays.
constexpr std::size_t keep_capacity = 1024;  // small buffers are not worth a copy

template <class T>
[[gnu::noinline]] void shrink(std::vector<T>& v) noexcept {
  try {
    std::vector<T> smaller;
    smaller.reserve(std::max(keep_capacity, 4 * v.size()));
    smaller.assign(v.begin(), v.end());
    v.swap(smaller);
  } catch (...) {
  }
}

template <class T>
void shrink_if_sparse(std::vector<T>& v) noexcept {
  if (v.capacity() > keep_capacity && v.size() < v.capacity() / 64) [[unlikely]]
    shrink(v);
}

}  // namespace

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
  }
  return n;
}

void deadline_index::rebuild_heap() noexcept {
  for (std::size_t i = 0; i < heap_.size(); ++i) place(i, heap_[i]);
  // Floyd's construction: sift down every parent, the last one first.
  const std::size_t parents = heap_.size() < 2 ? 0 : (heap_.size() - 2) / arity + 1;
  for (std::size_t i = parents; i-- > 0;) sift_down(i);
}

// ---- the far tier ---------------------------------------------------------------

void deadline_index::set_base(key b) noexcept {
  base_ = b;
  const key window_start = b >> near_bits_ << near_bits_;
  const key width = key{1} << near_bits_;
  // The last window of the key range has no end: everything there is near.
  near_limit_ = window_start > ~key{0} - width ? ~key{0} : window_start + width;
}

deadline_index::key deadline_index::lead(key now) const noexcept {
  const key width = key{1} << near_bits_;
  return now > ~key{0} - width ? ~key{0} : now + width;
}

deadline_index::key deadline_index::bucket_floor(unsigned j) const noexcept {
  // Keys in bucket j share the bits above j with base_ and have bit j set.
  const key above = j == 63 ? 0 : base_ >> (j + 1) << (j + 1);
  return above | (key{1} << j);
}

deadline_index::key deadline_index::bucket_min(unsigned j) const noexcept {
  key m = ~key{0};
  for (const index_node* n : tier_[j]) m = std::min(m, key_of(n->deadline()));
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

index_node* deadline_index::tier_erase(std::size_t j, std::size_t pos) noexcept {
  auto& bucket = tier_[j];
  index_node* const n = bucket[pos];
  // Buckets are unordered: the last node fills the hole.
  bucket[pos] = bucket.back();
  bucket[pos]->heap_index = tier_tag | (j << bucket_shift) | pos;
  bucket.pop_back();
  shrink_if_sparse(bucket);
  if (bucket.empty()) tier_mask_ &= ~(std::uint64_t{1} << j);
  --tier_count_;
  n->heap_index = index_node::not_queued;
  return n;
}

index_node* deadline_index::never_erase(std::size_t pos) noexcept {
  index_node* const n = never_[pos];
  never_[pos] = never_.back();
  never_[pos]->heap_index = never_tag | pos;
  never_.pop_back();
  shrink_if_sparse(never_);
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
  // near window is the one that holds now rather than one long past.
  if (heap_.empty() && tier_count_ == 0) set_base(lead(key_of(clock::now())));
  const key k = key_of(d);
  if (k < near_limit_) {
    push_entry(n);
  } else {
    tier_push(n, k);
  }
}

bool deadline_index::erase(index_node& n) noexcept {
  const std::size_t i = n.heap_index;
  if (i == index_node::not_queued || (i & owner_tag) != 0) return false;
  if ((i & tier_tag) != 0) {
    const std::size_t j = (i & ~tier_tag) >> bucket_shift;
    const std::size_t pos = i & position_mask;
    if (j >= buckets || pos >= tier_[j].size() || tier_[j][pos] != &n) return false;
    tier_erase(j, pos);
  } else if ((i & never_tag) != 0) {
    const std::size_t pos = i & ~never_tag;
    if (pos >= never_.size() || never_[pos] != &n) return false;
    never_erase(pos);
  } else {
    if (i >= heap_.size() || heap_[i].node != &n) return false;
    remove_at(i);
  }
  return true;
}

void deadline_index::rebase(key to) noexcept {
  // Buckets at or below the highest bit in which the reference time changes
  // are redistributed; those above keep their meaning (their nodes share the
  // same higher bits with the new reference time as with the old one).
  const auto top = static_cast<unsigned>(std::bit_width(base_ ^ to) - 1);
  const std::uint64_t affected = tier_mask_ & (top == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << top) - 1);
  const key old_base = base_;
  const key old_limit = near_limit_;
  set_base(to);
  if (affected == 0) return;
  // Reserve every destination first, so that moving cannot fail half-way.
  // Nodes below bucket `top` are all due before `to` (they have a 0 where it
  // has its 1 at bit top): they go to the heap. Those of bucket `top` go to
  // the heap or to a lower bucket, all of which are empty by then.
  std::size_t to_heap = 0;
  std::size_t per_bucket[buckets] = {};
  for (std::uint64_t m = affected; m != 0; m &= m - 1) {
    const auto j = static_cast<unsigned>(std::countr_zero(m));
    for (const index_node* n : tier_[j]) {
      const key k = key_of(n->deadline());
      if (k < near_limit_) {
        ++to_heap;
      } else {
        ++per_bucket[std::bit_width(k ^ base_) - 1];
      }
    }
  }
  try {
    heap_.reserve(heap_.size() + to_heap);
    for (std::size_t j = 0; j < buckets; ++j)
      if (per_bucket[j] != 0) tier_[j].reserve(tier_[j].size() + per_bucket[j]);
  } catch (...) {
    base_ = old_base;  // out of memory: the nodes stay, a later advance retries
    near_limit_ = old_limit;
    return;
  }
  for (std::uint64_t m = affected; m != 0; m &= m - 1) {
    const auto j = static_cast<unsigned>(std::countr_zero(m));
    std::vector<index_node*> moving;
    moving.swap(tier_[j]);
    tier_mask_ &= ~(std::uint64_t{1} << j);
    tier_count_ -= moving.size();
    for (index_node* n : moving) {
      const key k = key_of(n->deadline());
      if (k < near_limit_) {
        push_entry(n);  // reserved: does not throw
      } else {
        tier_push(n, k);  // a lower bucket, reserved: does not throw
      }
    }
    // Nothing moved back into bucket j (only lower ones): it keeps its buffer.
    moving.clear();
    tier_[j].swap(moving);
  }
}

void deadline_index::pull_earliest() noexcept {
  if (!heap_.empty() || tier_mask_ == 0) return;
  // A reference time at the earliest tier key puts that node in the heap.
  rebase(bucket_min(static_cast<unsigned>(std::countr_zero(tier_mask_))));
}

void deadline_index::advance(time_point now) noexcept {
  // Less than a window is left before the near window ends: move what is
  // coming near into the heap one window ahead of time, so that a node is in
  // the heap, and whoever sleeps for the first deadline sleeps for its exact
  // deadline, before it is due.
  const key ahead = lead(key_of(now));
  if (ahead < near_limit_) return;
  if (tier_mask_ != 0) {
    rebase(ahead);
  } else if (heap_.empty()) {
    set_base(ahead);  // nothing to move: just follow the clock
  }
}

index_node* deadline_index::pop_due(time_point now) noexcept {
  advance(now);
  if (heap_.empty() || heap_.front().deadline > now.time_since_epoch().count()) return nullptr;
  return remove_at(0);
}

index_node* deadline_index::pop_first() noexcept {
  if (empty()) return nullptr;
  pull_earliest();  // the true first node, due or not, may wait in the tier
  if (!heap_.empty()) return remove_at(0);
  if (tier_mask_ != 0) return nullptr;  // out of memory moving the tier: nothing taken
  // Only "never" nodes: the first submitted of them.
  const auto first = std::min_element(never_.begin(), never_.end(), [](const index_node* a, const index_node* b) {
    return a->sequence() < b->sequence();
  });
  return never_erase(static_cast<std::size_t>(first - never_.begin()));
}

std::optional<time_point> deadline_index::first_deadline() const noexcept {
  // Every tier node comes after every heap node.
  if (!heap_.empty()) return time_point(duration(heap_.front().deadline));
  if (tier_mask_ != 0) return time_of(bucket_min(static_cast<unsigned>(std::countr_zero(tier_mask_))));
  if (!never_.empty()) return time_point::max();
  return std::nullopt;
}

std::optional<time_point> deadline_index::wake_time() const noexcept {
  if (!heap_.empty()) return time_point(duration(heap_.front().deadline));
  if (tier_mask_ == 0) return std::nullopt;
  // A window before the bucket's lower bound: its nodes move into the heap
  // then, and the sleeper sleeps on for the exact first deadline.
  const key floor = bucket_floor(static_cast<unsigned>(std::countr_zero(tier_mask_)));
  const key width = key{1} << near_bits_;
  return time_of(floor > width ? floor - width : 0);
}

std::size_t deadline_index::reserved_bytes() const noexcept {
  std::size_t n = heap_.capacity() * sizeof(entry) + never_.capacity() * sizeof(index_node*);
  for (const auto& bucket : tier_) n += bucket.capacity() * sizeof(index_node*);
  return n;
}

void deadline_index::extract_all(std::vector<index_node*>& out) {
  out.reserve(out.size() + size());  // may throw: nothing changed yet
  clear([&](index_node& n) { out.push_back(&n); });
}

bool deadline_index::check_invariants() const noexcept {
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    const entry& e = heap_[i];
    if (e.node->heap_index != i) return false;
    // The inline key must still be the node's key.
    if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
    if (i > 0 && e < heap_[(i - 1) / arity]) return false;
    if (key_of(e.deadline) >= near_limit_ || is_never(time_point(duration(e.deadline)))) return false;
  }
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
  for (std::size_t pos = 0; pos < never_.size(); ++pos)
    if (never_[pos]->heap_index != (never_tag | pos) || !is_never(never_[pos]->deadline())) return false;
  return true;
}

}  // namespace chronopool::detail

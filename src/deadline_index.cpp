// The heap and far tier behind both queues. See detail/deadline_index.hpp.
#include <chronopool/detail/deadline_index.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

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

/// A tier bucket (or the "never" list) gives most of its buffer back once it
/// holds less than a 64th of it. A server that drops its connections, or a
/// pool whose far tasks are cancelled, would otherwise keep the buffers of
/// its peak for good (a million cancelled far timers kept 7.6 MiB of
/// bucket). The heap is left alone: it empties as its nodes fire, and
/// freeing a big buffer is slow where it matters most (giving 8 MiB back to
/// the system takes ~6 ms on these VMs: a heap shrinking as a million timers
/// fired stalled the last of them, `fire` 1M p99 1.0 -> 1.4-1.6 ms).
/// Shrinking to four times the size keeps pushes and erases amortised O(1).
constexpr std::size_t keep_capacity = 1024;  // small buffers are not worth a copy

template <class Buffer>
bool sparse(const Buffer& v) noexcept {
  return v.capacity() > keep_capacity && v.size() < v.capacity() / 64;
}

std::size_t shrunk_capacity(std::size_t size) noexcept { return std::max(keep_capacity, 4 * size); }

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

deadline_index::key deadline_index::slice_after(key last) const noexcept {
  const key interval = key{1} << (near_bits_ - std::min(near_bits_, idle_turn_log2));
  return last > ~key{0} - interval ? ~key{0} : last + interval;
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
  // near window is the one that holds now rather than one long past.
  if (heap_.empty() && tier_count_ == 0 && stale_count_ == 0) set_base(lead(key_of(clock::now())));
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
  } else {
    if (i >= heap_.size() || heap_[i].node != &n) return false;
    remove_at(i);
  }
  return true;
}

// ---- giving a sparse buffer back ---------------------------------------------------------

deadline_index::node_buffer& deadline_index::buffer_of(const shrink_request& r) noexcept {
  switch (r.in) {
    case shrink_request::where::tier: return tier_[r.bucket];
    case shrink_request::where::stale: return stale_[r.bucket];
    case shrink_request::where::never: break;
  }
  return never_;
}

std::optional<deadline_index::shrink_request> deadline_index::next_shrink() noexcept {
  // A mark names a place, not a buffer: a rebase may have swapped another
  // buffer in since. Whatever is there is shrunk if it is sparse.
  using where = shrink_request::where;
  for (auto [marks, in] : {std::pair{&shrink_tier_, where::tier}, std::pair{&shrink_stale_, where::stale}}) {
    while (*marks != 0) {
      const auto j = static_cast<std::uint8_t>(std::countr_zero(*marks));
      shrink_request r{in, j, 0};
      const auto& v = buffer_of(r);
      if (sparse(v)) {
        r.capacity = shrunk_capacity(v.size());
        return r;
      }
      *marks &= *marks - 1;
    }
  }
  if (shrink_never_) {
    if (sparse(never_)) return shrink_request{where::never, 0, shrunk_capacity(never_.size())};
    shrink_never_ = false;
  }
  return std::nullopt;
}

void deadline_index::shrink(const shrink_request& r, node_buffer& smaller) noexcept {
  using where = shrink_request::where;
  if (r.in == where::never) {
    shrink_never_ = false;
  } else {
    (r.in == where::tier ? shrink_tier_ : shrink_stale_) &= ~(std::uint64_t{1} << r.bucket);
  }
  auto& v = buffer_of(r);
  // Erased from or pushed to since the request: still worth it, and still fits?
  if (!sparse(v) || !smaller.empty() || smaller.capacity() < v.size() || smaller.capacity() >= v.capacity()) return;
  smaller.assign_within_capacity(v.begin(), v.end());
  v.swap(smaller);
  smaller.clear();
}

void deadline_index::shrink_now() noexcept {
  struct no_lock {
    void lock() noexcept {}
    void unlock() noexcept {}
  } none;
  shrink_index_buffers(*this, none);
}

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
  const key half = key{1} << (near_bits_ - 1);
  const key done_by = stale_floor_ - std::min(stale_floor_, half);
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
          push_entry(n);
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

void deadline_index::pull_earliest() noexcept {
  if (!move_all_stale()) return;  // out of memory: heap_front() stays null
  if (!heap_.empty() || tier_mask_ == 0) return;
  // A reference time at the earliest tier key puts that node in the heap.
  rebase(bucket_min(tier_[std::countr_zero(tier_mask_)]), key_of(clock::now()), true);
}

void deadline_index::advance(time_point now) noexcept {
  // Less than a window is left before the near window ends: move what is
  // coming near into the heap one window ahead of time, so that a node is in
  // the heap, and whoever sleeps for the first deadline sleeps for its exact
  // deadline, before it is due.
  const key now_key = key_of(now);
  if (stale_count_ != 0) move_stale_share(now_key);
  const key ahead = lead(now_key);
  if (ahead < near_limit_) return;
  if (tier_mask_ != 0) {
    rebase(ahead, now_key, false);
  } else if (heap_.empty() && stale_count_ == 0) {
    set_base(ahead);  // nothing to move: just follow the clock
  }
}

index_node* deadline_index::pop_due(time_point now) noexcept {
  advance(now);
  const entry* front = heap_front();
  if (front == nullptr || front->deadline > now.time_since_epoch().count()) return nullptr;
  return remove_at(0);
}

index_node* deadline_index::pop_first() noexcept {
  if (empty()) return nullptr;
  pull_earliest();  // the true first node, due or not, may wait in the tier
  if (stale_count_ != 0) return nullptr;  // out of memory moving the tier: nothing taken
  if (!heap_.empty()) return remove_at(0);
  if (tier_mask_ != 0) return nullptr;  // out of memory moving the tier: nothing taken
  // Only "never" nodes: the first submitted of them.
  const auto first = std::min_element(never_.begin(), never_.end(), [](const index_node* a, const index_node* b) {
    return a->sequence() < b->sequence();
  });
  return never_erase(static_cast<std::size_t>(first - never_.begin()));
}

std::optional<time_point> deadline_index::first_deadline() const noexcept {
  if (const entry* front = heap_front()) return time_point(duration(front->deadline));
  if (heap_.empty() && tier_mask_ == 0 && stale_mask_ == 0) {
    if (!never_.empty()) return time_point::max();
    return std::nullopt;
  }
  // The heap is empty, or nodes set aside may come before its front: the
  // earliest of its front, the set-aside nodes and the lowest tier bucket
  // (every other tier node comes later). Scans: no hot path.
  key m = heap_.empty() ? ~key{0} : key_of(heap_.front().deadline);
  for (std::uint64_t b = stale_mask_; b != 0; b &= b - 1) m = std::min(m, bucket_min(stale_[std::countr_zero(b)]));
  if (tier_mask_ != 0) m = std::min(m, bucket_min(tier_[std::countr_zero(tier_mask_)]));
  return time_of(m);
}

std::optional<time_point> deadline_index::wake_time() const noexcept {
  std::optional<time_point> wake;
  if (!heap_.empty()) {
    wake = time_point(duration(heap_.front().deadline));
  } else if (tier_mask_ != 0) {
    // A window before the bucket's lower bound: its nodes move into the heap
    // then, and the sleeper sleeps on for the exact first deadline.
    const key floor = bucket_floor(static_cast<unsigned>(std::countr_zero(tier_mask_)));
    const key width = key{1} << near_bits_;
    wake = time_of(floor > width ? floor - width : 0);
  }
  // The next slice, when nothing else wakes the owner sooner.
  if (stale_count_ != 0) {
    const time_point next = time_of(slice_after(last_slice_));
    if (!wake || next < *wake) wake = next;
  }
  return wake;
}

std::size_t deadline_index::reserved_bytes() const noexcept {
  std::size_t n = heap_.capacity() * sizeof(entry) + never_.capacity() * sizeof(index_node*);
  for (const auto* array : {&tier_, &stale_})
    for (const auto& bucket : *array) n += bucket.capacity() * sizeof(index_node*);
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

// The ordered index under both of chronopool's queues: a pool's delayed work
// queue and a timer service's waits. Not thread-safe: its owner locks.
//
// * Work due soon sits in a 4-ary min-heap of 24-byte entries that carry
//   their key (deadline, sequence) inline next to the node pointer, so
//   sifting compares entries in one contiguous array and never touches the
//   nodes themselves (a node is a task or a wait somewhere else on the heap;
//   reading its key at every level is a cache miss per level at a million
//   entries). Four children per node halve the depth; the four sit in 96
//   contiguous bytes. Each node records its own slot (index_node::heap_index),
//   so erase() is O(log n) and never scans.
// * A node due after the "near window" (the aligned 2^near_window_log2 ns
//   span, ~1.07 s by default, that holds the reference time) waits in a far
//   tier instead: 64 unordered buckets, the node in bucket j when the highest
//   bit in which its deadline differs from the reference time is j. Putting a
//   node there and taking it out are O(1): a push, and a swap with the last.
//   advance() keeps the reference time a window ahead of the clock: when less
//   than a window is left before the near window ends, the buckets that come
//   near move into the heap (or into lower buckets), so a node is in the heap
//   before it is due. A node moves down at most once per bucket, and a
//   timeout cancelled long before its deadline (most of a server's) never
//   sifts through the heap at all. Order stays exact: every heap node is due
//   before every tier node. Deadlines of "never" stay in a list of their own.
// * Buckets come near a window before their first node can be due, so they
//   move in shares: the buckets to redistribute are set aside whole
//   ("stale", a swap of buffers that touches no node), and each advance()
//   moves a share of them in proportion to the time gone, done half a
//   window before the first of them can be due (an idle owner wakes for
//   it). Moving them all at once held the owner's lock for 5-12 ms when a
//   bucket spanning seconds of a million idle timeouts came near. Until
//   they are moved, the heap's front is the first node only while it is
//   due before every stale node.
//   The window is wide because every node moves through it: with 67 ms,
//   timers spread over a second moved in batches of thousands under the lock
//   and their p99 lateness grew sevenfold.
#pragma once

#include <chronopool/detail/mapped_buffer.hpp>
#include <chronopool/detail/saturating_time.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

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

class deadline_index {
 public:
  /// A far-tier bucket's (or the "never" list's) buffer: large ones are
  /// page mappings, out of malloc's way, that grow without a copy (see
  /// mapped_buffer).
  using node_buffer = mapped_buffer<index_node*>;

  /// A heap slot: the node's key, copied in when it is inserted (an indexed
  /// node's deadline and sequence do not change), and the node.
  struct entry {
    time_point::rep deadline;
    std::uint64_t sequence;
    index_node* node;

    static entry of(index_node* n) noexcept {
      return {n->deadline().time_since_epoch().count(), n->sequence(), n};
    }
    friend bool operator<(const entry& a, const entry& b) noexcept {
      return a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence);
    }
  };

  /// heap_index values with this bit are never set by an index: its owner
  /// may use them for slots of its own (a queue's ready lane).
  static constexpr std::size_t owner_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 2);

  /// The default near window: 2^30 ns, about 1.07 s.
  static constexpr unsigned default_near_window_log2 = 30;

  /// @p near_window_log2 (1 to 62) sets the near window to 2^near_window_log2
  /// ns; tests use small windows to move nodes between tier and heap often.
  explicit deadline_index(unsigned near_window_log2 = default_near_window_log2);
  deadline_index(const deadline_index&) = delete;
  deadline_index& operator=(const deadline_index&) = delete;
  /// Forgets its nodes (their heap_index is left as it was): the owner
  /// decides what happens to them.
  ~deadline_index() = default;

  std::size_t size() const noexcept { return heap_.size() + tier_count_ + stale_count_ + never_.size(); }
  bool empty() const noexcept { return size() == 0; }
  /// Diagnostics: the bytes its buffers hold. Erasing nodes gives most of a
  /// tier bucket's or the "never" list's buffer back once it is less than a
  /// 64th full (not the heap's: it empties as its nodes fire), through the
  /// two steps below.
  std::size_t reserved_bytes() const noexcept;

  // ---- giving a sparse buffer back, in two steps --------------------------
  // erase() never allocates or frees: a buffer it leaves sparse is only
  // marked. Its owner asks for the next one under its lock, allocates the
  // smaller buffer with the lock released, and hands it in under the lock
  // again; the old buffer comes back out, to be freed once unlocked. A
  // million far timers cancelled at once held the owner's lock 6-10 ms in
  // that allocation (glibc consolidating the freed waits) and the free.

  /// A sparse buffer to shrink, and the capacity it is to get.
  struct shrink_request {
    enum class where : std::uint8_t { tier, stale, never } in;
    std::uint8_t bucket;
    std::size_t capacity;
  };
  /// Some buffer was left sparse by erase() (a cheap test under the lock).
  bool wants_shrink() const noexcept { return shrink_tier_ != 0 || shrink_stale_ != 0 || shrink_never_; }
  /// The next marked buffer that is still sparse; marks of buffers that
  /// filled up again meanwhile are dropped on the way.
  std::optional<shrink_request> next_shrink() noexcept;
  /// Moves the buffer's nodes into @p smaller (reserved to the request's
  /// capacity, empty) when it is still sparse and they fit, and leaves the
  /// old buffer in @p smaller; otherwise changes nothing. Either way the
  /// mark is cleared. The order, and so every node's slot, stays.
  void shrink(const shrink_request& r, node_buffer& smaller) noexcept;
  /// Both steps with no lock released in between (an owner without one;
  /// tests). Best effort: a buffer that cannot be allocated stays as it is.
  void shrink_now() noexcept;

  /// Inserts @p n by its key. Strong guarantee: when an allocation fails,
  /// nothing changed.
  void insert(index_node* n);
  /// Takes @p n out; false when it is not in this index. O(log n) in the
  /// heap, O(1) in the tier and the "never" list.
  bool erase(index_node& n) noexcept;

  /// Moves the reference time along with the clock at @p now: buckets coming
  /// within a window of it are set aside to move into the heap, and a slice
  /// of those set aside earlier moves (all of them once they are near).
  void advance(time_point now) noexcept;
  /// The heap's first entry, when it is the index's first node; null when
  /// the heap is empty (the tier may still hold nodes, all due later than
  /// any heap node) or a node still to move from the tier may come first
  /// (then none is due before the time advance() moves them all).
  const entry* heap_front() const noexcept {
    if (heap_.empty() || (stale_count_ != 0 && key_of(heap_.front().deadline) >= stale_floor_)) return nullptr;
    return &heap_.front();
  }
  /// Removes the first node (heap_front() must not be null).
  index_node* pop_heap_front() noexcept { return remove_at(0); }
  /// advance(@p now), then the first node if it is due at @p now, removed; else null.
  index_node* pop_due(time_point now) noexcept;
  /// Removes the first node, due or not, wherever it waits; null when empty
  /// (or when moving the tier ran out of memory).
  index_node* pop_first() noexcept;
  /// When the tier has nodes and the heap none, brings the earliest into the
  /// heap, whatever the time, so that heap_front() is the first node (unless
  /// only "never" nodes are left, or memory ran out).
  void pull_earliest() noexcept;

  /// The first deadline, exactly (scans a tier bucket when the heap is
  /// empty); time_point::max() when only "never" nodes are left; none when empty.
  std::optional<time_point> first_deadline() const noexcept;
  /// When the owner must look again: the heap's first deadline, or when the
  /// heap is empty a window before the earliest tier bucket's lower bound (at
  /// most the earliest tier deadline), or when earlier the time to move the
  /// next slice of set-aside nodes; none when only "never" nodes (or none)
  /// are left.
  std::optional<time_point> wake_time() const noexcept;

  /// Calls @p f on every node, in no particular order. @p f must not change the index.
  template <class F>
  void for_each(F&& f) const {
    for (const entry& e : heap_) f(*e.node);
    for (const auto* array : {&tier_, &stale_})
      for (const auto& bucket : *array)
        for (index_node* n : bucket) f(*n);
    for (index_node* n : never_) f(*n);
  }
  /// Removes every node for which @p pred is true, appending it to @p out;
  /// returns how many. Strong guarantee on allocation failure.
  template <class Pred>
  std::size_t extract_if(Pred&& pred, std::vector<index_node*>& out);
  /// Removes every node, appending them to @p out (reserve first: this does
  /// not throw when @p out has room for size() more).
  void extract_all(std::vector<index_node*>& out);
  /// Removes every node, calling @p f on each (in no particular order)
  /// after taking it out. @p f must not throw or touch the index.
  template <class F>
  void clear(F&& f) noexcept {
    auto take = [&](index_node* n) {
      n->heap_index = index_node::not_queued;
      f(*n);
    };
    for (const entry& e : heap_) take(e.node);
    heap_.clear();
    for (auto* array : {&tier_, &stale_}) {
      for (auto& bucket : *array) {
        for (index_node* n : bucket) take(n);
        bucket.clear();
      }
    }
    tier_mask_ = stale_mask_ = 0;
    tier_count_ = stale_count_ = 0;
    for (index_node* n : never_) take(n);
    never_.clear();
  }

  /// Testing aid: the heap property, every node's heap_index, every tier
  /// node's bucket. False on the first violation.
  bool check_invariants() const noexcept;
  /// Testing aid: nodes set aside and not moved yet.
  std::size_t still_to_move() const noexcept { return stale_count_; }

 private:
  static constexpr std::size_t arity = 4;

  // heap_index of a node in the far tier: this tag, its bucket shifted by
  // bucket_shift, and its position in the bucket (a set-aside bucket's nodes
  // keep theirs: erase() looks in both); of a node due "never": never_tag
  // and its position in never_.
  static constexpr std::size_t tier_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 3);
  static constexpr std::size_t never_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 4);
  static constexpr unsigned bucket_shift = 48;
  static constexpr std::size_t position_mask = (std::size_t{1} << bucket_shift) - 1;
  static constexpr std::size_t buckets = 64;
  // Set-aside nodes move in shares of what is left, at most every 1/1024
  // window (a busy owner: ~1 ms at the default window) and at least every
  // 1/32 (an idle one wakes for it), done half a window before the first of
  // them can be due. Up to whole_move of them move at once (~0.1 ms).
  static constexpr unsigned min_turn_log2 = 10;
  static constexpr unsigned idle_turn_log2 = 5;
  static constexpr std::size_t whole_move = 4096;
  using bucket_array = node_buffer[buckets];

  /// Deadlines as unsigned keys in the same order (the sign bit flipped), so
  /// that bucket arithmetic works on the whole clock range.
  using key = std::uint64_t;
  static constexpr key key_bias = key{1} << 63;
  static key key_of(time_point::rep d) noexcept { return static_cast<key>(d) ^ key_bias; }
  static key key_of(time_point t) noexcept { return key_of(t.time_since_epoch().count()); }
  static time_point time_of(key k) noexcept { return time_point(duration(static_cast<time_point::rep>(k ^ key_bias))); }

  void place(std::size_t i, const entry& e) noexcept {
    heap_[i] = e;
    e.node->heap_index = i;
  }
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;
  void push_entry(index_node* n);
  index_node* remove_at(std::size_t i) noexcept;
  void rebuild_heap() noexcept;

  void tier_push(index_node* n, key k);
  /// Takes the node at @p pos out of bucket @p j of @p array (tier_ or stale_).
  index_node* bucket_erase(bucket_array& array, std::uint64_t& mask, std::size_t& count, std::uint64_t& shrink_marks,
                           std::size_t j, std::size_t pos) noexcept;
  node_buffer& buffer_of(const shrink_request& r) noexcept;
  index_node* never_erase(std::size_t pos) noexcept;
  /// Moves the reference time to @p to (at least near_limit_): the buckets it
  /// affects are set aside, to go to the heap or to lower buckets; at once
  /// with @p at_once or when they are few, else in shares from @p now on.
  /// Gives up, changing nothing, when the nodes set aside before cannot all
  /// move (memory ran out).
  void rebase(key to, key now, bool at_once) noexcept;
  /// Moves up to @p limit set-aside nodes to the heap or their bucket;
  /// stops early when memory runs out (the rest stay set aside).
  void move_stale(std::size_t limit) noexcept;
  /// All of them: true when none is left.
  bool move_all_stale() noexcept {
    move_stale(stale_count_);
    return stale_count_ == 0;
  }
  void set_base(key b) noexcept;
  /// One near window after @p now (saturating): where the reference time
  /// goes, so that the heap always reaches at least a window ahead.
  key lead(key now) const noexcept;
  /// When an idle owner wakes to move the next share after one moved at
  /// @p last (saturating).
  key slice_after(key last) const noexcept;
  /// advance()'s share of the set-aside nodes at @p now.
  void move_stale_share(key now) noexcept;
  /// The lower bound of bucket @p j's deadlines.
  key bucket_floor(unsigned j) const noexcept;
  /// The smallest key in @p bucket (a scan).
  static key bucket_min(const node_buffer& bucket) noexcept;
  mapped_buffer<entry> heap_;  // a mapping too: a million entries grow in place
  const unsigned near_bits_;
  key base_ = 0;        // the reference time
  key near_limit_ = 0;  // the end of the near window: heap keys are below, tier keys not
  bucket_array tier_;
  std::uint64_t tier_mask_ = 0;  // bit j set when tier_[j] is not empty
  std::size_t tier_count_ = 0;
  // Buckets set aside by the last rebase, still to move; relative to the
  // reference time before it. When one empties its buffer stays, for the
  // next rebase to swap into the tier.
  bucket_array stale_;
  std::uint64_t stale_mask_ = 0;
  std::size_t stale_count_ = 0;
  key stale_floor_ = 0;  // the near limit before that rebase: no set-aside key is below
  key last_slice_ = 0;   // the clock at the last share moved (or the rebase)
  node_buffer never_;
  // Buffers erase() left sparse, for the owner to shrink (bit j: bucket j).
  std::uint64_t shrink_tier_ = 0;
  std::uint64_t shrink_stale_ = 0;
  bool shrink_never_ = false;
};

/// The two steps for an owner that guards @p index with @p m, called with
/// @p m unlocked: for each buffer left sparse, the request and the swap
/// under the lock, the allocation and the old buffer's release outside it.
/// Ends once no request is left (each swap, done or refused, clears its
/// mark). Best effort: when an allocation fails the mark stays, for the
/// next call.
template <class Mutex>
void shrink_index_buffers(deadline_index& index, Mutex& m) noexcept {
  for (;;) {
    deadline_index::node_buffer buffer;  // the smaller one, then the old one: freed unlocked
    std::optional<deadline_index::shrink_request> request;
    {
      const std::lock_guard lock(m);
      request = index.next_shrink();
    }
    if (!request) return;
    try {
      buffer.reserve(request->capacity);
    } catch (...) {
      return;
    }
    const std::lock_guard lock(m);
    index.shrink(*request, buffer);
  }
}

template <class Pred>
std::size_t deadline_index::extract_if(Pred&& pred, std::vector<index_node*>& out) {
  // Room for every node first, so that nothing can fail once nodes start
  // moving (and @p pred, which may read state other threads change, is asked
  // once per node).
  out.reserve(out.size() + size());
  const std::size_t before = out.size();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    if (pred(*heap_[i].node)) {
      heap_[i].node->heap_index = index_node::not_queued;
      out.push_back(heap_[i].node);
    } else {
      heap_[kept++] = heap_[i];
    }
  }
  const bool heap_changed = kept != heap_.size();
  heap_.truncate(kept);
  // The tier and the never list: keep the rest in place, renumbered.
  auto filter = [&](node_buffer& v, auto index_of) {
    std::size_t out_pos = 0;
    for (index_node* node : v) {
      if (pred(*node)) {
        node->heap_index = index_node::not_queued;
        out.push_back(node);
      } else {
        node->heap_index = index_of(out_pos);
        v[out_pos++] = node;
      }
    }
    const std::size_t dropped = v.size() - out_pos;
    v.truncate(out_pos);
    return dropped;
  };
  auto filter_buckets = [&](bucket_array& array, std::uint64_t& mask, std::size_t& count) {
    for (std::size_t j = 0; j < buckets; ++j) {
      if (array[j].empty()) continue;
      count -= filter(array[j], [j](std::size_t pos) { return tier_tag | (j << bucket_shift) | pos; });
      if (array[j].empty()) mask &= ~(std::uint64_t{1} << j);
    }
  };
  filter_buckets(tier_, tier_mask_, tier_count_);
  filter_buckets(stale_, stale_mask_, stale_count_);
  filter(never_, [](std::size_t pos) { return never_tag | pos; });
  if (heap_changed) rebuild_heap();
  return out.size() - before;
}

}  // namespace chronopool::detail

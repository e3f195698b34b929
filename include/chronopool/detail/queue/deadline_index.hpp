// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The ordered index under both of chronopool's queues (a pool's delayed
// work queue, a timer service's waits): nodes by (deadline, sequence), in
// levels each due before the next: the near front (a sorted run and a 4-ary
// heap with keys inline), a wheel of slots for the rest of the near window,
// a far tier of 64 buckets, and a list for "never". Each node records its
// slot, so erase() never scans. Not thread-safe: its owner locks.
#pragma once

#include <chronopool/detail/queue/index_node.hpp>
#include <chronopool/detail/queue/mapped_buffer.hpp>
#include <chronopool/detail/queue/wheel_slot_pool.hpp>
#include <chronopool/detail/time/saturating_time.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace chronopool::detail {

class deadline_index {
 public:
  /// A far-tier bucket's (or the "never" list's) buffer: large ones are
  /// page mappings, out of malloc's way, that grow without a copy (see
  /// mapped_buffer).
  using node_buffer = mapped_buffer<index_node*>;
  /// A heap, run or wheel slot (see index_entry).
  using entry = index_entry;

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

  std::size_t size() const noexcept {
    return heap_.size() + run_count_ + wheel_count_ + tier_count_ + stale_count_ + never_.size();
  }
  bool empty() const noexcept { return size() == 0; }
  /// Diagnostics: the bytes its buffers hold. Erasing nodes gives most of a
  /// tier bucket's or the "never" list's buffer back once it is less than a
  /// 64th full (not the heap's: it empties as its nodes fire), through the
  /// two steps below. The wheel's slots keep their entries in blocks the
  /// index recycles (slot_pool): those stay at their peak.
  std::size_t reserved_bytes() const noexcept;

  // ---- giving a sparse buffer back, in two steps --------------------------
  // erase() never allocates or frees: a buffer it leaves sparse is only
  // marked. Its owner asks for the next one under its lock, allocates the
  // smaller buffer with the lock released, and hands it in under the lock
  // again; the old buffer comes back out, to be freed once unlocked: the
  // owner's lock is never held across an allocation or a free.

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
  /// heap, O(1) in the run, the wheel, the tier and the "never" list.
  bool erase(index_node& n) noexcept;
  /// Puts @p to where @p from is, with its key (copied into @p to first by
  /// the caller) and its slot: a node that moves in memory (a timer object
  /// holding its own wait, moved by its owner) keeps its place. False, and
  /// nothing changed, when @p from is not in this index. O(1).
  bool relocate(index_node& from, index_node& to) noexcept;

  /// Moves the reference time along with the clock at @p now: wheel slots
  /// coming within a slot of it move onto the run (the first one at any
  /// distance when the near front is empty), buckets coming within a window of it
  /// are set aside to move into the wheel, and a slice of those set aside
  /// earlier moves (all of them once they are near).
  void advance(time_point now) noexcept;
  /// The near front's first entry (the heap's or the run's), when it is the
  /// index's first node; null when the near front is empty (the wheel and
  /// the tier may still hold nodes, all due later) or a node still to move
  /// from the tier may come first (then none is due before the time
  /// advance() moves them all).
  const entry* heap_front() const noexcept {
    const entry* f = near_front();
    if (f == nullptr || (stale_count_ != 0 && key_of(f->deadline) >= stale_floor_)) return nullptr;
    return f;
  }
  /// Removes the first node (heap_front() must not be null).
  index_node* pop_heap_front() noexcept { return pop_near_front(); }
  /// advance(@p now), then the first node if it is due at @p now, removed; else null.
  index_node* pop_due(time_point now) noexcept;
  /// Removes the first node, due or not, wherever it waits; null when empty
  /// (or when moving the tier ran out of memory).
  index_node* pop_first() noexcept;
  /// When the near front is empty and the wheel or the tier has nodes,
  /// brings the earliest to it, whatever the time, so that heap_front() is
  /// the first node (unless only "never" nodes are left, or memory ran out).
  void pull_earliest() noexcept;

  /// The first deadline, exactly (scans a wheel slot or a tier bucket when
  /// the near front is empty); time_point::max() when only "never" nodes are left;
  /// none when empty.
  std::optional<time_point> first_deadline() const noexcept;
  /// When the owner must look again: the near front's first deadline, or
  /// when it is empty the wheel's (earlier when that node was erased); or
  /// when earlier a window before the earliest tier bucket's lower bound (at
  /// most the earliest tier deadline), or the time to move the next slice of
  /// set-aside nodes; none when only "never" nodes (or none) are left.
  std::optional<time_point> wake_time() const noexcept { return wake_time(duration::zero()); }
  /// wake_time(), except that a wake for the near front's first deadline
  /// moves on to the latest near deadline at most @p slack after it (never
  /// past any other reason to look again): one wake-up then serves every
  /// node due in between, none early and none more than @p slack late.
  /// Looks at a bounded number of entries: with more near nodes in the
  /// slack than that, the wake covers fewer of them, never a later one.
  std::optional<time_point> wake_time(duration slack) const noexcept;

  /// Calls @p f on every node, in no particular order. @p f must not change the index.
  template <class F>
  void for_each(F&& f) const {
    for (const entry& e : heap_) f(*e.node);
    for (std::size_t p = run_pos_; p < run_.size(); ++p)
      if (run_[p].node != nullptr) f(*run_[p].node);
    for (std::size_t s = 0; s < wheel_slots; ++s)
      for (const entry& e : wheel_[s]) f(*e.node);
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
    for (std::size_t p = run_pos_; p < run_.size(); ++p)
      if (run_[p].node != nullptr) take(run_[p].node);
    reset_run();
    for (std::size_t s = 0; s < wheel_slots; ++s) {
      for (const entry& e : wheel_[s]) take(e.node);
      wheel_[s].clear();
    }
    for (std::uint64_t& w : wheel_mask_) w = 0;
    wheel_count_ = 0;
    wheel_floor_ = ~key{0};
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

  /// Testing aid: the heap property, every node's heap_index, every wheel
  /// node's slot, every tier node's bucket. False on the first violation.
  bool check_invariants() const noexcept;
  /// Testing aid: nodes set aside and not moved yet.
  std::size_t still_to_move() const noexcept { return stale_count_; }
  /// Testing aid: nodes in the heap and the run (the rest wait in the
  /// wheel or further).
  std::size_t heap_size() const noexcept { return heap_.size() + run_count_; }
  /// Testing aid: nodes in the wheel.
  std::size_t wheel_size() const noexcept { return wheel_count_; }
  /// Testing aid: gives the run's entries ids from @p origin on, as if that
  /// many nodes had passed through a run that never emptied.
  void testing_set_run_origin(std::size_t origin) noexcept { renumber_run(origin); }

 private:
  static constexpr std::size_t arity = 4;
  // How many places ahead of the run's front a pop prefetches a node.
  static constexpr std::size_t run_lookahead = 4;

  // heap_index of a node in the far tier: this tag, its bucket shifted by
  // bucket_shift, and its position in the bucket (a set-aside bucket's nodes
  // keep theirs: erase() looks in both); of a node in the wheel: wheel_tag,
  // its slot shifted the same way and its position in the slot; of a node
  // due "never": never_tag and its position in never_.
  static constexpr std::size_t tier_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 3);
  static constexpr std::size_t never_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 4);
  static constexpr std::size_t wheel_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 5);
  // heap_index of a node in the run: run_tag and its run id (its position
  // plus run_origin_), below 2^58. Checked after the tags above: a wheel
  // slot's bits reach this one.
  static constexpr std::size_t run_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 6);
  // The ids start over from 0 when the run is compacted with its origin
  // past this: a run that never empties (a busy server's timeouts) would
  // otherwise reach run_tag after 2^58 nodes (centuries at ten million a
  // second), and its nodes' ids would read as wheel slots.
  static constexpr std::size_t run_renumber_at = run_tag / 2;
  static constexpr unsigned bucket_shift = 48;
  static constexpr std::size_t position_mask = (std::size_t{1} << bucket_shift) - 1;
  static constexpr std::size_t buckets = 64;
  // Set-aside nodes move in shares of what is left, at most every 1/1024
  // window (a busy owner: ~1 ms at the default window) and at least every
  // 1/32 (an idle one wakes for it), done half a window before the first of
  // them can be due. An idle owner wakes sooner when a 1/32 window's share
  // would be more than turn_goal nodes: each turn holds its owner's lock,
  // and a share of tens of thousands holds it for milliseconds while other
  // work may come due. Up to whole_move of them move at once.
  static constexpr unsigned min_turn_log2 = 10;
  static constexpr unsigned idle_turn_log2 = 5;
  static constexpr std::size_t turn_goal = 1024;
  static constexpr std::size_t whole_move = 4096;
  using bucket_array = node_buffer[buckets];

  // The wheel: 2^wheel_log2 slots, 2^(near_bits - 10) ns wide each (1 ns
  // for windows of 2^10 ns and less), so the ring spans two windows: all
  // the wheel can hold (keys from heap_limit_ up to the end of a near window
  // that starts up to a window after the clock).
  static constexpr unsigned wheel_log2 = 11;
  static constexpr std::size_t wheel_slots = std::size_t{1} << wheel_log2;

  using slot_buffer = wheel_slot;
  using slot_pool = wheel_slot_pool;
  /// Appends @p e to slot @p s, growing it from the pool. Strong guarantee.
  void slot_push(slot_buffer& slot, const entry& e);
  /// Gives slot @p s's block back (the slot is empty).
  void slot_release(slot_buffer& slot) noexcept;
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

  /// The latest key at or before @p bound among @p last and the near
  /// front's (heap and run) first coalesce_scan_limit entries each.
  key last_near_key(key bound, key last) const noexcept;
  static constexpr std::size_t coalesce_scan_limit = 64;
  static constexpr std::size_t max_coalesce_slots = 4;
  /// The latest key at or before @p bound among @p last and the first
  /// coalesce_scan_limit entries of the first occupied wheel slot and the
  /// next ones up to @p bound's (at most max_coalesce_slots). The wheel must
  /// not be empty.
  key last_wheel_key(key bound, key last) const noexcept;

  /// The first of the heap's front and the run's; null when both are empty.
  const entry* near_front() const noexcept {
    const entry* r = run_pos_ < run_.size() ? &run_[run_pos_] : nullptr;
    if (heap_.empty()) return r;
    if (r == nullptr || heap_.front() < *r) return &heap_.front();
    return r;
  }
  bool near_empty() const noexcept { return heap_.empty() && run_count_ == 0; }
  /// Removes near_front()'s node.
  index_node* pop_near_front() noexcept;
  /// Takes the run's node at position @p p out (a tombstone unless it is the front).
  index_node* run_erase(std::size_t p) noexcept;
  /// Past the tombstones at the run's front; an empty run starts over.
  void settle_run() noexcept;
  void reset_run() noexcept {
    run_.clear();
    run_pos_ = 0;
    run_origin_ = 0;
    run_count_ = 0;
  }
  /// The near front emptied: the wheel's first slot comes in when it is the
  /// next one, so that a loop popping due nodes finds them at the front.
  void refill_near() noexcept {
    if (near_empty() && wheel_count_ != 0) refill_near_slot();
  }
  void refill_near_slot() noexcept;
  /// After slots left the wheel: wheel_floor_ becomes its first key again
  /// (when the one it held has left), so that the wake time is exact.
  void settle_wheel_floor() noexcept;
  /// Gives the run's live entries ids from @p origin on (their heap_index).
  void renumber_run(std::size_t origin) noexcept;
  /// Appends wheel slot @p s, sorted, to the run. False when memory ran out.
  bool run_append_slot(std::size_t s) noexcept;

  /// Puts @p n (key @p k, below near_limit_) in the heap, the run or the wheel.
  void near_push(index_node* n, key k);
  void wheel_push(index_node* n, key k);
  index_node* wheel_erase(std::size_t s, std::size_t pos) noexcept;
  std::size_t slot_of(key k) const noexcept { return static_cast<std::size_t>(k >> slot_bits_) & (wheel_slots - 1); }
  /// How many slots after heap_limit_'s the first occupied one is; none when the wheel is empty.
  std::optional<std::size_t> first_occupied() const noexcept;
  /// Moves every wheel slot whose keys start at or before @p through onto
  /// the run, and heap_limit_ past @p through (saturating). False when
  /// memory ran out (the slot that did not fit stays, and the limit).
  bool wheel_take_through(key through) noexcept;
  /// heap_limit_ for an empty wheel at @p now: as advance(now) leaves it.
  key first_heap_limit(key now) const noexcept;
  /// Moves the first occupied slot onto the run, however far it is.
  bool wheel_take_first() noexcept;
  /// Makes room for a near window ending at @p limit: the ring spans two
  /// windows from heap_limit_. False when memory ran out.
  bool wheel_cover(key limit) noexcept;
  /// The smallest key in wheel slot @p s (a scan of its entries).
  key slot_min(std::size_t s) const noexcept;
  /// The smallest key in the wheel (not empty): the first occupied slot's,
  /// since slots follow the ring from heap_limit_'s.
  key first_wheel_key() const noexcept;

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
  /// The end of the near window that holds @p b (the key range's end in its last window).
  key window_end(key b) const noexcept;
  /// One near window after @p now (saturating): where the reference time
  /// goes, so that the heap always reaches at least a window ahead.
  key lead(key now) const noexcept;
  /// When an idle owner wakes to move the next share after one moved at
  /// @p last (saturating).
  key slice_after(key last) const noexcept;
  /// When every set-aside node must have moved: half a window before the
  /// first of them can be due.
  key stale_done_by() const noexcept;
  /// advance()'s share of the set-aside nodes at @p now.
  void move_stale_share(key now) noexcept;
  /// The lower bound of bucket @p j's deadlines.
  key bucket_floor(unsigned j) const noexcept;
  /// The smallest key in @p bucket (a scan).
  static key bucket_min(const node_buffer& bucket) noexcept;
  mapped_buffer<entry> heap_;  // a mapping too: a million entries grow in place
  const unsigned near_bits_;
  const unsigned slot_bits_;  // a wheel slot spans 2^slot_bits_ ns
  // Heap and run keys are below it, wheel keys at or above it (and below
  // near_limit_). A slot boundary, but at the end of the key range.
  key heap_limit_ = 0;
  // The run: wheel slots that came near, each sorted as it arrives (every
  // one after the last), taken from the front; an erased entry stays as a
  // tombstone (a null node) until the front passes it, so that no other
  // node moves. Nodes inserted below heap_limit_ after their slot came go
  // to the heap instead (or onto the run's end, when they come last); the
  // near front is the first of the two fronts. A node in the run is
  // written once, when it arrives; a heap pop writes the slot of every
  // entry it moves into that entry's node.
  mapped_buffer<entry> run_;
  std::size_t run_pos_ = 0;     // the front: a live entry, or the end
  std::size_t run_origin_ = 0;  // the id of run_[0]: ids stay as the run is compacted
  std::size_t run_count_ = 0;   // live entries
  slot_pool slot_pool_;  // declared before wheel_: the slots' blocks are its
  std::unique_ptr<slot_buffer[]> wheel_;
  std::uint64_t wheel_mask_[wheel_slots / 64] = {};  // bit s set when wheel_[s] is not empty
  std::size_t wheel_count_ = 0;
  key wheel_floor_ = ~key{0};  // no wheel key is below it (the first one's, unless erased since)
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
  for (std::size_t p = run_pos_; p < run_.size(); ++p) {
    index_node* const node = run_[p].node;
    if (node == nullptr || !pred(*node)) continue;
    node->heap_index = index_node::not_queued;
    out.push_back(node);
    run_[p].node = nullptr;
    --run_count_;
  }
  settle_run();
  for (std::size_t s = 0; s < wheel_slots; ++s) {
    auto& slot = wheel_[s];
    std::size_t out_pos = 0;
    for (const entry& e : slot) {
      if (pred(*e.node)) {
        e.node->heap_index = index_node::not_queued;
        out.push_back(e.node);
      } else {
        e.node->heap_index = wheel_tag | (s << bucket_shift) | out_pos;
        slot[out_pos++] = e;
      }
    }
    wheel_count_ -= slot.size() - out_pos;
    if (wheel_count_ == 0) wheel_floor_ = ~key{0};
    slot.truncate(out_pos);
    if (slot.empty()) wheel_mask_[s / 64] &= ~(std::uint64_t{1} << (s % 64));
  }
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
  refill_near();
  return out.size() - before;
}

}  // namespace chronopool::detail

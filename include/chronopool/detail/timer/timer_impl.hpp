// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A timer object's state (timer_impl, the I/O object's implementation_type)
// and the node it shares with block waits in a shard's index and inbox
// (wait_node). A timer's first wait, when its handler qualifies, waits in
// the timer itself (its inline wait), so a pending timer costs no allocation.
#pragma once

#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/timer/inline_wait_ops.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace chronopool::detail {

class timer_shard;
class wait_op_base;

/// What the index and a shard's inbox hold of a wait: a wait in a block of
/// its own (wait_op_base), or a timer's inline wait, the timer object itself
/// (timer_impl). The word after the index node tells them apart: a block
/// keeps its timer link there (a wait's or a timer's address, the latter
/// tagged with bit 0), a timer its inline wait's operations, tagged with
/// bit 1, which no such address has.
class wait_node : public index_node {
 public:
  static constexpr std::uintptr_t inline_tag = 2;

  bool is_inline() const noexcept { return (word_.load(std::memory_order_relaxed) & inline_tag) != 0; }

  /// The next in the shard's inbox, newest first. Kept in the word of the
  /// sequence, which only the index reads.
  wait_node* inbox_link() const noexcept { return static_cast<wait_node*>(spare_link()); }
  void set_inbox_link(wait_node* n) noexcept { set_spare_link(n); }
  struct inbox_link_of {
    static wait_node* get(const wait_node& n) noexcept { return n.inbox_link(); }
    static void set(wait_node& n, wait_node* to) noexcept { n.set_inbox_link(to); }
  };

 protected:
  explicit wait_node(std::uintptr_t word) noexcept : word_(word) {}
  ~wait_node() = default;

  /// Atomic for a timer (its thread reads it without the lock to see
  /// whether the timer is idle); relaxed, plain moves, for a block.
  std::atomic<std::uintptr_t> word_;
};

/// One timer object's state (the I/O object's implementation_type): its
/// home shard, its expiry, its inline wait and its other pending waits,
/// oldest first. A timer moves to another shard only while it has no
/// pending wait, so whoever locks a shard checks that it is still home.
///
/// The inline wait: a timer's first wait, when its handler qualifies (see
/// inline_wait_ops), lives in the timer itself, not in a block: the index
/// node the timer derives from (its deadline word is the timer's expiry,
/// which a new expiry changes only after cancelling the wait), the number
/// of its operations in the word after it, and the handler in two words.
/// A pending timer then costs no allocation and no memory beyond the
/// object. It only waits: when it leaves the index (fired, aborted,
/// dropped) it moves into a block that takes its place at the front of the
/// timer's list, under the same lock, so that no delivery ever refers into
/// a timer object that its owner may destroy or move once the wait has left.
///
/// The word after the index node holds everything about the timer that
/// other threads change without a lock, so that the object is 64 bytes
/// with two words for the handler:
///
///   bits 48-63  the inline wait's operations (register_inline_ops), 0 while it is free
///   bits  6-47  the home shard's address (a shard is 64-byte aligned and
///               below 2^48: its constructor checks)
///   bits  3-4   parked_as
///   bit   2     (timer_object_impl's tag for a boxed timer's unused state)
///   bit   1     wait_node::inline_tag, always: the node is a timer
///   bit   0     start_pending
struct timer_impl : wait_node {
  timer_impl() noexcept : wait_node(inline_tag) {}
  timer_impl(const timer_impl&) = delete;
  timer_impl& operator=(const timer_impl&) = delete;

  /// Set while a wait started without the lock (see timer_shard) is not
  /// linked to the timer yet: the home may not change meanwhile, and
  /// another such start of the same timer takes the lock instead.
  static constexpr std::uintptr_t start_pending = 1;
  static constexpr int ops_shift = 48;
  static constexpr std::uintptr_t ops_mask = std::uintptr_t{0xffff} << ops_shift;
  static constexpr std::uintptr_t shard_mask = ((std::uintptr_t{1} << ops_shift) - 1) & ~std::uintptr_t{63};
  static constexpr int parked_shift = 3;
  static constexpr std::uintptr_t parked_mask = std::uintptr_t{3} << parked_shift;
  /// Everything the inline wait holds in the word: its operations and
  /// whether it is parked. Free when both are clear.
  static constexpr std::uintptr_t inline_wait_mask = ops_mask | parked_mask;

  static std::uintptr_t word_of(const timer_shard* s) noexcept { return reinterpret_cast<std::uintptr_t>(s); }
  static timer_shard* shard_of(std::uintptr_t w) noexcept { return reinterpret_cast<timer_shard*>(w & shard_mask); }
  timer_shard* home(std::memory_order order = std::memory_order_acquire) const noexcept {
    return shard_of(word_.load(order));
  }
  /// The whole word, for start_pending and the inline wait at once.
  std::uintptr_t state(std::memory_order order) const noexcept { return word_.load(order); }
  /// Makes @p s the home of a timer no other thread sees yet, with nothing
  /// pending (its construction, a move's target, a reset).
  void set_home(const timer_shard* s) noexcept { word_.store(word_of(s) | inline_tag, std::memory_order_relaxed); }
  /// Claims the start of an unlocked wait (start_pending) while the home is
  /// @p here and no other such start is pending. Sequentially consistent:
  /// see timer_shard::try_start_unlocked.
  bool try_claim_start(const timer_shard* here) noexcept {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    do {
      if (shard_of(w) != here || (w & start_pending) != 0) return false;
    } while (!word_.compare_exchange_weak(w, w | start_pending, std::memory_order_seq_cst, std::memory_order_relaxed));
    return true;
  }
  /// Ends an unlocked start's claim. Release: whoever sees start_pending
  /// clear (cancel()'s idle check, a new expiry) sees the wait linked, or
  /// the start given up.
  void release_start_claim() noexcept { word_.fetch_and(~start_pending, std::memory_order_release); }
  /// Moves an idle timer (nothing claimed, pending or parked) from @p from
  /// to @p to; false when it is not idle or not at @p from.
  bool try_move_home(const timer_shard* from, const timer_shard* to) noexcept {
    std::uintptr_t expected = word_of(from) | inline_tag;
    return word_.compare_exchange_strong(expected, word_of(to) | inline_tag, std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
  }

  /// The expiry: written under the home shard's lock (or by the
  /// constructor, before anyone else can see the timer), read without it.
  /// It is the inline wait's deadline: a new one is stored only once the
  /// inline wait is out of the index (see timer_shard::cancel).
  time_point expiry(std::memory_order order = std::memory_order_relaxed) const noexcept {
    return load_deadline(order);
  }
  void set_expiry(time_point t, std::memory_order order = std::memory_order_relaxed) noexcept {
    store_deadline(t, order);
  }

  /// The inline wait's operations; null while it is free.
  const inline_wait_ops* inline_ops(std::memory_order order = std::memory_order_relaxed) const noexcept {
    return ops_of(word_.load(order));
  }
  static const inline_wait_ops* ops_of(std::uintptr_t w) noexcept {
    const auto id = static_cast<std::uint16_t>(w >> ops_shift);
    return id != 0 ? inline_ops_by_id(id) : nullptr;
  }

  /// An inline wait out of the index that could not leave the timer when it
  /// should have (out of memory): it waits in its shard's parked list
  /// (linked through the sequence word) for a retry, with what became of it.
  enum class parked_as : std::uintptr_t { none = 0, fired = 1, aborted = 2, dropped = 3 };
  parked_as parked() const noexcept {
    return static_cast<parked_as>((word_.load(std::memory_order_relaxed) & parked_mask) >> parked_shift);
  }
  /// Under the home's lock; the timer's thread may claim a start meanwhile.
  void set_parked(parked_as as) noexcept {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    while (!word_.compare_exchange_weak(w, (w & ~parked_mask) | (static_cast<std::uintptr_t>(as) << parked_shift),
                                        std::memory_order_relaxed, std::memory_order_relaxed)) {
    }
  }
  timer_impl* next_parked() const noexcept { return static_cast<timer_impl*>(spare_link()); }
  void set_next_parked(timer_impl* t) noexcept { set_spare_link(t); }
  /// Takes the free inline wait for a handler of the operations numbered
  /// @p ops_id (whose handler the caller then constructs in
  /// inline_storage()); false when it is in use, or a start is pending.
  bool try_claim_inline(std::uint16_t ops_id) noexcept {
    std::uintptr_t w = word_.load(std::memory_order_relaxed);
    do {
      if ((w & (inline_wait_mask | start_pending)) != 0) return false;
    } while (!word_.compare_exchange_weak(w, w | (std::uintptr_t{ops_id} << ops_shift), std::memory_order_acquire,
                                          std::memory_order_relaxed));
    return true;
  }
  /// Frees the inline wait (its handler moved out or destroyed). Release:
  /// the timer's thread that reads it free (acquire) sees what was done
  /// before, the block that took its place among them.
  void free_inline() noexcept { word_.fetch_and(~inline_wait_mask, std::memory_order_release); }
  /// Takes over @p from's inline wait word (move_timer, into a timer no
  /// other thread sees yet; the handler is relocated by the caller).
  void take_inline_word(timer_impl& from) noexcept {
    const std::uintptr_t moved = from.word_.fetch_and(~inline_wait_mask, std::memory_order_relaxed) & inline_wait_mask;
    word_.store(word_.load(std::memory_order_relaxed) | moved, std::memory_order_relaxed);
  }
  void* inline_storage() noexcept { return inline_handler; }
  /// Sets the whole word, for a timer object that keeps its state elsewhere
  /// (timer_object_impl's box; read back with state()).
  void set_raw_word(std::uintptr_t w) noexcept { word_.store(w, std::memory_order_relaxed); }

  static constexpr std::size_t inline_words = 2;

  /// The pending waits in blocks, oldest first (linked by
  /// wait_op_base::next), all after the inline wait when it is in use.
  /// Guarded by the home shard's lock: other threads unlink waits as they
  /// are delivered or cancelled through their slots. `first` is atomic for
  /// one lock-free check by the thread using the timer: whoever unlinks the
  /// last wait stores null with release, so once that thread reads null
  /// (acquire) and the inline wait free, no other thread refers to the
  /// timer until a wait starts, and cancel() of an idle timer (and so a
  /// destructor) needs no lock.
  std::atomic<wait_op_base*> first{nullptr};
  wait_op_base* last = nullptr;

 private:
  alignas(void*) unsigned char inline_handler[inline_words * sizeof(void*)];
};

static_assert(sizeof(void*) != 8 || sizeof(timer_impl) == 64, "a timer's state is one cache line");

}  // namespace chronopool::detail

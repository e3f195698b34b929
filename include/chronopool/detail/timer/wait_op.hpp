// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pending async_wait, ordered in a timer shard's deadline index by
// (deadline, sequence): a block of its own holding the handler (wait_op), or,
// for a timer's first wait with a handler of two words or less, the timer
// object itself (timer_impl's inline wait, which moves into a block or an
// abort chunk's record as it leaves the index). The life below is a
// block's; an inline wait's differs only in where its handler goes when it
// leaves the index.
//
// A wait's life, every step under its shard's lock until it leaves the shard
// (but the first, when it starts without the lock: see timer_shard):
//
//   unlocked (in the shard's inbox) ──drained──┐
//                                              ▼
//   queued ──due──▶ fired ──claimed by its delivery──▶ finished: handler(success)
//      │              │ cancel (until claimed)
//      └───cancel─────┴──▶ aborted ──delivered──────▶ finished: handler(operation_aborted)
//
// Delivery happens on a thread of the service's context (or is handed to the
// handler's executor). A fired wait stays linked to its timer until the
// delivery that holds it claims it, so cancel() can still abort it.
//
// Two kinds, chosen when the wait starts:
// - A *direct* wait (the usual one) completes where its context's own threads
//   run: its handler's executor is the context's plain executor (an
//   io_context's or a scheduled_thread_pool's). It stores no executor and
//   holds no work of its own (its shard holds the context's work while it has
//   any wait), and it is completed by calling its handler directly on a
//   context thread: inline when the deadline fires there, or from one
//   batched function posted for many cancelled waits.
// - A *routed* wait (a strand as the I/O executor, a handler bound to another
//   executor) keeps tracked copies of its executors, as Asio's operations do,
//   and its completion goes through them.
//
// Memory: the handler's associated allocator (the default one becomes the
// per-thread recycling allocator). The completion frees the wait before it
// calls the handler, so a handler that starts the next wait reuses the block.
// A cancellation slot's handler shares the wait (a second reference): it may
// be emitted after the wait completed, and then finds a state that is not
// `queued` and does nothing, without touching the shard.
#pragma once

#include <chronopool/detail/timer/complete_on.hpp>
#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/support/recycling_allocator.hpp>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class timer_shard;
class wait_op_base;
struct timer_impl;

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

/// How a timer's inline wait handles its handler, which is at most two
/// words, moves without throwing, has the default allocator, no
/// cancellation slot, and completes on the context's own executor (see
/// timer_impl). One table per handler type, known to the timer by its
/// number (register_inline_ops).
struct inline_wait_ops {
  /// Moves the handler out of @p t into a new block wait (constructed,
  /// `starting`, linked nowhere); null when no block can be had, the
  /// handler left where it was.
  wait_op_base* (*evacuate)(timer_impl& t) noexcept;
  /// Move-constructs the handler at @p to from @p from and destroys it there.
  void (*relocate)(void* to, void* from) noexcept;
  /// Moves the handler out of @p storage and calls it with @p ec.
  void (*complete)(void* storage, const boost::system::error_code& ec);
  /// Destroys the handler uncalled.
  void (*destroy)(void* storage) noexcept;
  /// The handler's size in words (1 or 2): an abort chunk's record stride.
  std::size_t words;
};

/// The number of @p ops in the process's table of inline operations (from
/// 1); 0 once the table is full (65,535 handler types), and then a handler
/// of that type waits in a block. Thread-safe; each table is numbered once.
std::uint16_t register_inline_ops(const inline_wait_ops* ops) noexcept;
/// That table (src/inline_wait_ops.cpp). An entry is written once, before
/// its number is handed out; whoever reads a number from a timer learnt it
/// after that write.
extern std::atomic<const inline_wait_ops*> inline_ops_table[std::size_t{1} << 16];
/// The operations numbered @p id (not 0).
inline const inline_wait_ops* inline_ops_by_id(std::uint16_t id) noexcept {
  return inline_ops_table[id].load(std::memory_order_acquire);
}

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

/// `unlocked`: started without the shard's lock, on its way into (or in) the
/// shard's inbox; a drain makes it `queued`.
enum class wait_state : std::uint8_t { starting, unlocked, queued, fired, aborted, finished };

class wait_op_base : public wait_node {
 public:
  enum class action : std::uint8_t {
    complete,  ///< on a thread of the service's context: call the handler, or hand it on
    discard,   ///< destroy the handler without calling it (its context is going)
    release,   ///< drop a reference; the last one frees the wait
  };
  using fn_type = void (*)(wait_op_base*, action);

  /// Delivers the outcome (success, or operation_aborted when aborted is set).
  /// The wait is freed (or its reference dropped) before the handler runs.
  /// Throws what the handler throws.
  void complete() { fn_(this, action::complete); }
  /// Destroys the handler uncalled and lets go of the wait.
  void discard() noexcept { fn_(this, action::discard); }
  /// Drops one reference; the last frees the wait. Unshared (no
  /// cancellation slot), the count stays 1 and no atomic write is needed;
  /// shared, whoever reads 1 after the other's decrement frees it.
  void release() noexcept {
    if (refs_.load(std::memory_order_acquire) == 1 || refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      fn_(this, action::release);
  }

  // ---- links. A wait is 56 bytes with an 8-byte handler, so that it takes
  // a 64-byte block from malloc (a 72-byte one took 80): no word of it is
  // kept for a state in which it is not used.

  /// After its timer's next pending wait, or after its timer's last wait,
  /// the timer itself, tagged: the wait's timer is found by walking to the
  /// end of its timer's list (one step with one wait pending). While the
  /// wait is in the shard's inbox, just the tagged timer it is to join.
  /// Zero for a standalone wait (async_sleep) and once unlinked.
  wait_op_base* next_wait() const noexcept {
    const std::uintptr_t w = next();
    return (w & timer_tag) != 0 ? nullptr : reinterpret_cast<wait_op_base*>(w);
  }
  /// The timer waited on while linked to it (or about to be, in the inbox).
  timer_impl* timer() const noexcept {
    const wait_op_base* p = this;
    std::uintptr_t w = p->next();
    while (w != 0 && (w & timer_tag) == 0) {
      p = reinterpret_cast<const wait_op_base*>(w);
      w = p->next();
    }
    return reinterpret_cast<timer_impl*>(w & ~timer_tag);
  }
  void set_next_wait(wait_op_base* n) noexcept { set_next(reinterpret_cast<std::uintptr_t>(n)); }
  /// Unlinks @p removed, the wait after this one.
  void skip(const wait_op_base& removed) noexcept { set_next(removed.next()); }
  /// Makes this the last wait of @p t (or, in the inbox, marks its timer).
  void set_last_of(timer_impl* t) noexcept { set_next(reinterpret_cast<std::uintptr_t>(t) | timer_tag); }
  /// Out of any timer's list: a standalone wait, or unlinked for good.
  void clear_timer() noexcept { set_next(0); }
  /// Linked to a timer (or, in the inbox, about to be).
  bool linked() const noexcept { return next() != 0; }

  /// A fired wait's timer, found once where it fires so that the delivery's
  /// claim need not walk the timer's list to its end: with K waits of one
  /// timer firing together, K walks of up to K steps each made firing them
  /// quadratic. Kept in the word of the index slot, which a wait out of the
  /// index does not use (an erase() given it finds no such slot and refuses).
  /// Valid while the wait is fired and linked: move_timer re-points it.
  /// Atomic (relaxed) while the wait is fired: a delivery peeks at it
  /// without the lock to prefetch the timer, while move_timer may re-point it.
  void set_fired_timer(timer_impl* t) noexcept {
    std::atomic_ref(heap_index).store(reinterpret_cast<std::size_t>(t), std::memory_order_relaxed);
  }
  /// The timer set_fired_timer() recorded, left recorded. Without the lock
  /// (a hint to prefetch, never dereferenced) it may be out of date.
  const timer_impl* peek_fired_timer() const noexcept {
    return reinterpret_cast<const timer_impl*>(
        std::atomic_ref(const_cast<std::size_t&>(heap_index)).load(std::memory_order_relaxed));
  }
  /// The timer set_fired_timer() recorded; the slot's word is "not queued" again.
  timer_impl* take_fired_timer() noexcept {
    return reinterpret_cast<timer_impl*>(
        std::atomic_ref(heap_index).exchange(index_node::not_queued, std::memory_order_relaxed));
  }

  /// The next in the list it is in: the shard's inbox before it is
  /// indexed, or a delivery list (the abort batch, a chunk of fired waits)
  /// once it has left the index. Kept in the word of the sequence, which
  /// only the index reads.
  wait_op_base* link() const noexcept { return static_cast<wait_op_base*>(inbox_link()); }
  void set_link(wait_op_base* n) noexcept { set_spare_link(n); }
  struct list_link {
    static wait_op_base* get(const wait_op_base& n) noexcept { return n.link(); }
    static void set(wait_op_base& n, wait_op_base* to) noexcept { n.set_link(to); }
  };

 private:
  static constexpr std::uintptr_t timer_tag = 1;
  static_assert(alignof(timer_impl) > inline_tag);

  std::uintptr_t next() const noexcept { return word_.load(std::memory_order_relaxed); }
  void set_next(std::uintptr_t w) noexcept { word_.store(w, std::memory_order_relaxed); }

  fn_type fn_;

 public:
  /// A chunk of cancelled inline waits (inline_abort_chunk), not one wait.
  bool is_chunk() const noexcept { return chunk_; }

  /// Changed under the shard's lock; a cancellation slot's handler reads it
  /// without the lock to see whether the shard may still be touched.
  std::atomic<wait_state> state{wait_state::starting};
  /// The outcome: set when the wait is cancelled.
  bool aborted = false;
  /// Set by a cancellation slot emitted before the wait was queued (while
  /// it was starting): start() aborts it at once. Sequentially consistent
  /// with `state`: each side stores its own flag, then reads the other's.
  std::atomic<bool> cancel_requested{false};

  /// Moves a starting wait to @p s (unlocked or queued) and says whether a
  /// cancellation slot asked for it meanwhile. Only a wait with a slot needs
  /// the sequentially consistent pair above; without one (most waits)
  /// nothing can ask, and nothing reads the state without the shard's lock
  /// or the inbox's hand-over, so the store is plain: two fewer fences per
  /// start.
  bool enter(wait_state s) noexcept {
    if (!has_slot_) {
      state.store(s, std::memory_order_relaxed);
      return false;
    }
    state.store(s);
    return cancel_requested.load();
  }

 protected:
  explicit wait_op_base(fn_type fn) noexcept : wait_node(0), fn_(fn) {}
  ~wait_op_base() = default;

  void mark_chunk() noexcept { chunk_ = true; }

  /// A cancellation slot's handler holds a second reference.
  void share() noexcept {
    refs_.store(2, std::memory_order_relaxed);
    has_slot_ = true;
  }

 private:
  std::atomic<std::uint8_t> refs_{1};
  bool has_slot_ = false;  // set before the wait starts, never changed after
  bool chunk_ = false;
};

// A block's word after the index node never has wait_node::inline_tag.
static_assert(alignof(wait_op_base) > wait_node::inline_tag);

/// The per-operation cancellation handler a wait installs in its handler's
/// slot (terminal, partial and total cancellation all cancel the wait).
struct wait_cancellation {
  wait_cancellation(timer_shard* s, wait_op_base* o) noexcept : shard(s), op(o) {}
  wait_cancellation(const wait_cancellation&) = delete;
  wait_cancellation& operator=(const wait_cancellation&) = delete;
  ~wait_cancellation() { op->release(); }
  void operator()(boost::asio::cancellation_type_t type);

  /// The shard the wait starts in; changed (before it is queued) when its
  /// timer moved to another shard while the wait was starting.
  std::atomic<timer_shard*> shard;
  wait_op_base* op;
};

/// Where a wait's handler must run, decided once when it starts.
template <class Handler, class IoExecutor>
bool completes_directly(const Handler& h, const IoExecutor& io_ex, const boost::asio::execution_context& ctx) {
  if (plain_context_of(io_ex) != &ctx) return false;
  using handler_executor = boost::asio::associated_executor_t<Handler, IoExecutor>;
  if constexpr (std::is_same_v<handler_executor, IoExecutor>) {
    return boost::asio::get_associated_executor(h, io_ex) == io_ex;
  } else {
    return false;
  }
}

template <class Handler, class IoExecutor, bool Routed>
class wait_op final : public wait_op_base {
 public:
  using handler_allocator = boost::asio::associated_allocator_t<Handler>;
  using self_allocator = operation_allocator_t<handler_allocator, wait_op>;

  // A template over the handler's value category: a handler passed as an
  // lvalue (a named lambda given to async_wait) is copied, as Asio does.
  template <class H>
  wait_op(H&& h, const IoExecutor& io_ex, const self_allocator& a)
      : wait_op_base(&do_action), allocator_(a), handler_(std::forward<H>(h)) {
    if constexpr (Routed) {
      try {
        // Outstanding work on the I/O executor keeps io_context::run() from
        // returning while the wait is pending, and on the handler's executor
        // keeps the place it completes to alive (as Asio's handler_work does).
        routes_.emplace(io_ex, handler_);
      } catch (...) {
        handler_.~Handler();
        throw;
      }
    }
  }
  /// A direct wait taking over a handler (a timer's inline wait leaving the timer).
  template <class H>
    requires(!Routed)
  wait_op(H&& h, const self_allocator& a) : wait_op_base(&do_action), allocator_(a), handler_(std::forward<H>(h)) {}
  ~wait_op() {}  // the handler (a union member) is destroyed where it is delivered or discarded

  /// Installs the cancellation handler when the handler has a connected slot
  /// (null when it has none). Called before the wait is queued; throws when
  /// the slot cannot allocate.
  wait_cancellation* connect_cancellation(timer_shard* shard) {
    auto slot = boost::asio::get_associated_cancellation_slot(handler_);
    if (!slot.is_connected()) return nullptr;
    share();
    try {
      return &slot.template emplace<wait_cancellation>(shard, this);
    } catch (...) {
      release();  // the slot's reference, never taken
      throw;
    }
  }

  /// The initiating call failed after the slot was connected: disconnect it
  /// (we are on the initiating thread, where the slot's signal is known to
  /// be alive), then drop the wait uncalled.
  void abandon() noexcept {
    if (auto slot = boost::asio::get_associated_cancellation_slot(handler_); slot.is_connected()) slot.clear();
    discard();
  }

 private:
  static void do_action(wait_op_base* base, action a) {
    auto* self = static_cast<wait_op*>(base);
    switch (a) {
      case action::complete: return self->deliver();
      case action::discard: {
        self->handler_.~Handler();
        if constexpr (Routed) self->routes_.reset();
        return self->release();
      }
      case action::release: {
        self_allocator alloc(self->allocator_);
        std::allocator_traits<self_allocator>::destroy(alloc, self);
        std::allocator_traits<self_allocator>::deallocate(alloc, self, 1);
        return;
      }
    }
  }

  // The completion as a function for an executor: the handler, its outcome,
  // and its allocator by name (not through bind_allocator: Asio's post()
  // sends any handler whose associated_executor is specialised, as a
  // binder's is, through an extra work_dispatcher hop).
  struct call {
    using allocator_type = handler_allocator;
    allocator_type get_allocator() const noexcept { return allocator; }
    Handler handler;
    boost::system::error_code ec;
    allocator_type allocator;
    void operator()() { std::move(handler)(ec); }
  };

  void deliver() {
    const boost::system::error_code ec =
        aborted ? boost::system::error_code(boost::asio::error::operation_aborted) : boost::system::error_code();
    auto alloc = boost::asio::get_associated_allocator(handler_);
    Handler h(std::move(handler_));
    handler_.~Handler();
    if constexpr (!Routed) {
      release();  // freed before the upcall, so the handler may reuse the block
      std::move(h)(ec);
    } else {
      auto io_work = std::move(routes_->io_work);
      auto handler_work = std::move(routes_->handler_work);
      routes_.reset();
      release();
      // As Asio's own operations do, completion passes through the I/O
      // executor and is then dispatched to the handler's executor. We are on
      // a thread of the context (never inside the call that started or
      // cancelled the wait), so dispatch may run it right here.
      if (!handler_work) {
        complete_on(io_work, call{std::move(h), ec, alloc}, true);
      } else {
        complete_on(io_work, boost::asio::bind_executor(std::move(*handler_work), call{std::move(h), ec, alloc}),
                    true);
      }
    }
  }

  using io_work_type = tracked_executor_t<IoExecutor>;
  using handler_executor_type = boost::asio::associated_executor_t<Handler, IoExecutor>;
  using handler_work_type = tracked_executor_t<handler_executor_type>;

  struct routes {
    routes(const IoExecutor& io_ex, const Handler& h)
        : io_work(boost::asio::prefer(io_ex, boost::asio::execution::outstanding_work.tracked)) {
      // The handler's own executor, unless it is the I/O one: a second
      // tracked copy would only count the same work twice.
      auto handler_ex = boost::asio::get_associated_executor(h, io_ex);
      if constexpr (std::is_same_v<handler_executor_type, IoExecutor>) {
        if (handler_ex == io_ex) return;
      }
      handler_work.emplace(boost::asio::prefer(std::move(handler_ex), boost::asio::execution::outstanding_work.tracked));
    }
    io_work_type io_work;
    std::optional<handler_work_type> handler_work;  // empty when it is the I/O executor
  };
  struct no_routes {};

  [[no_unique_address]] self_allocator allocator_;
  union {
    Handler handler_;  // alive from construction until delivered or discarded
  };
  [[no_unique_address]] std::conditional_t<Routed, std::optional<routes>, no_routes> routes_;
};

/// Allocates a wait for @p h with the handler's associated allocator.
template <bool Routed, class Handler, class IoExecutor>
auto* make_wait_op(Handler&& h, const IoExecutor& io_ex) {
  using op = wait_op<std::decay_t<Handler>, IoExecutor, Routed>;
  using alloc_type = typename op::self_allocator;
  alloc_type a = [&] {
    if constexpr (std::is_same_v<alloc_type, recycling_allocator<op>>) {
      return alloc_type();
    } else {
      return alloc_type(boost::asio::get_associated_allocator(h));
    }
  }();
  op* p = std::allocator_traits<alloc_type>::allocate(a, 1);
  try {
    std::allocator_traits<alloc_type>::construct(a, p, std::forward<Handler>(h), io_ex, a);
  } catch (...) {
    std::allocator_traits<alloc_type>::deallocate(a, p, 1);
    throw;
  }
  return p;
}

/// Whether a handler of type @p Handler, given as @p Arg, may wait inline in
/// its timer (see timer_impl): two words at most, that move without throwing, with
/// the default allocator (its block, when it leaves the timer, comes from
/// the recycling allocator as a block wait's does). Its executor and its
/// cancellation slot are checked when it starts.
template <class Handler, class Arg>
inline constexpr bool inline_capable =
    sizeof(Handler) <= timer_impl::inline_words * sizeof(void*) && alignof(Handler) <= alignof(void*) &&
    std::is_nothrow_constructible_v<Handler, Arg> && std::is_nothrow_move_constructible_v<Handler> &&
    std::is_nothrow_destructible_v<Handler> &&
    std::is_same_v<boost::asio::associated_allocator_t<Handler>, std::allocator<void>>;

/// The inline_wait_ops of @p Handler; @p IoExecutor names the block type it
/// moves into (a direct wait: the executor is not stored).
template <class Handler, class IoExecutor>
struct inline_wait_ops_for {
  using block = wait_op<Handler, IoExecutor, false>;
  using block_allocator = typename block::self_allocator;

  static Handler& at(void* p) noexcept { return *std::launder(static_cast<Handler*>(p)); }

  static wait_op_base* evacuate(timer_impl& t) noexcept {
    block_allocator a = [] {
      if constexpr (std::is_same_v<block_allocator, recycling_allocator<block>>) {
        return block_allocator();
      } else {
        return block_allocator(std::allocator<void>());
      }
    }();
    block* p = nullptr;
    try {
      p = std::allocator_traits<block_allocator>::allocate(a, 1);
    } catch (...) {
      return nullptr;
    }
    Handler& h = at(t.inline_storage());
    std::allocator_traits<block_allocator>::construct(a, p, std::move(h), a);  // a move: cannot throw
    h.~Handler();
    return p;
  }
  static void relocate(void* to, void* from) noexcept {
    Handler& h = at(from);
    ::new (to) Handler(std::move(h));
    h.~Handler();
  }
  static void complete(void* storage, const boost::system::error_code& ec) {
    Handler& stored = at(storage);
    Handler h(std::move(stored));
    stored.~Handler();
    std::move(h)(ec);
  }
  static void destroy(void* storage) noexcept { at(storage).~Handler(); }

  static constexpr inline_wait_ops table{&evacuate, &relocate, &complete, &destroy,
                                         (sizeof(Handler) + sizeof(void*) - 1) / sizeof(void*)};
  /// The table's number, given at the first use; 0 when none is left.
  static std::uint16_t id() noexcept {
    static const std::uint16_t number = register_inline_ops(&table);
    return number;
  }
};

}  // namespace chronopool::detail

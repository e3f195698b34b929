// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pending async_wait in a block of its own (wait_op), holding its handler
// and ordered in a timer shard's deadline index by (deadline, sequence); a
// timer's first wait may instead wait inline in the timer (timer_impl.hpp)
// and moves into such a block as it leaves the index. Direct or routed
// (see wait_op), allocated with the handler's associated allocator, and
// freed before its handler is called, so a handler that starts the next
// wait reuses the block.
#pragma once

#include <chronopool/detail/timer/complete_on.hpp>
#include <chronopool/detail/timer/timer_impl.hpp>
#include <chronopool/detail/support/recycling_allocator.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class timer_shard;

/// A wait's life, every step under its shard's lock until it leaves the
/// shard (but the first, when it starts without the lock: see timer_shard):
///
///     unlocked (in the shard's inbox) --drained--+
///                                                v
///     queued --due--> fired --claimed by its delivery--> finished: handler(success)
///       |               | cancel (until claimed)
///       +----cancel-----+--> aborted --delivered-------> finished: handler(operation_aborted)
///
/// `unlocked`: started without the shard's lock, on its way into (or in) the
/// shard's inbox; a drain makes it `queued`. Delivery happens on a thread of
/// the service's context (or is handed to the handler's executor). A fired
/// wait stays linked to its timer until the delivery that holds it claims
/// it, so cancel() can still abort it. An inline wait's life is the same
/// but for where its handler goes when it leaves the index.
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

  // ---- links. A wait is 56 bytes with an 8-byte handler, so that it fits
  // a 64-byte block from malloc: no word of it is kept for a state in which
  // it is not used.

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
  /// claim need not walk the timer's list to its end (K waits of one timer
  /// firing together would take K walks of up to K steps). Kept in the word of the index slot, which a wait out of the
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
  void operator()(asio_ns::cancellation_type_t type);

  /// The shard the wait starts in; changed (before it is queued) when its
  /// timer moved to another shard while the wait was starting.
  std::atomic<timer_shard*> shard;
  wait_op_base* op;
};

/// Where a wait's handler must run, decided once when it starts.
template <class Handler, class IoExecutor>
bool completes_directly(const Handler& h, const IoExecutor& io_ex, const asio_ns::execution_context& ctx) {
  if (plain_context_of(io_ex) != &ctx) return false;
  using handler_executor = asio_ns::associated_executor_t<Handler, IoExecutor>;
  if constexpr (std::is_same_v<handler_executor, IoExecutor>) {
    return asio_ns::get_associated_executor(h, io_ex) == io_ex;
  } else {
    return false;
  }
}

/// A wait in a block, of one of two kinds chosen when it starts:
/// - direct (!Routed, the usual one): its handler's executor is the
///   context's plain executor (an io_context's or a scheduled_thread_pool's).
///   It stores no executor and holds no work of its own (its shard holds the
///   context's work while it has any wait); its handler is called directly
///   on a context thread, where the deadline fires or from one batched
///   function posted for many cancelled waits.
/// - routed (a strand as the I/O executor, a handler bound to another
///   executor): it keeps tracked copies of its executors, as Asio's
///   operations do, and its completion goes through them.
///
/// A cancellation slot's handler shares the wait (a second reference): it
/// may be emitted after the wait completed, and then finds a state that is
/// not `queued` and does nothing, without touching the shard.
template <class Handler, class IoExecutor, bool Routed>
class wait_op final : public wait_op_base {
 public:
  using handler_allocator = asio_ns::associated_allocator_t<Handler>;
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
    auto slot = asio_ns::get_associated_cancellation_slot(handler_);
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
    if (auto slot = asio_ns::get_associated_cancellation_slot(handler_); slot.is_connected()) slot.clear();
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
    sys_ns::error_code ec;
    allocator_type allocator;
    void operator()() { std::move(handler)(ec); }
  };

  void deliver() {
    const sys_ns::error_code ec =
        aborted ? sys_ns::error_code(asio_ns::error::operation_aborted) : sys_ns::error_code();
    auto alloc = asio_ns::get_associated_allocator(handler_);
    Handler h(std::move(handler_));
    handler_.~Handler();
    if constexpr (!Routed) {
      release();  // freed before the upcall, so the handler may reuse the block
      std::move(h)(ec);
    } else {
      auto tracked_io_ex = std::move(routes_->tracked_io_ex);
      auto tracked_handler_ex = std::move(routes_->tracked_handler_ex);
      routes_.reset();
      release();
      // As Asio's own operations do, completion passes through the I/O
      // executor and is then dispatched to the handler's executor. We are on
      // a thread of the context (never inside the call that started or
      // cancelled the wait), so dispatch may run it right here.
      if (!tracked_handler_ex) {
        complete_on(tracked_io_ex, call{std::move(h), ec, alloc}, true);
      } else {
        complete_on(tracked_io_ex,
                    asio_ns::bind_executor(std::move(*tracked_handler_ex), call{std::move(h), ec, alloc}), true);
      }
    }
  }

  using tracked_io_executor = tracked_executor_t<IoExecutor>;
  using handler_executor_type = asio_ns::associated_executor_t<Handler, IoExecutor>;
  using tracked_handler_executor = tracked_executor_t<handler_executor_type>;

  /// The executors a routed wait completes through, each holding outstanding
  /// work (the counterpart of Asio's handler_work).
  struct routes {
    routes(const IoExecutor& io_ex, const Handler& h)
        : tracked_io_ex(asio_ns::prefer(io_ex, asio_ns::execution::outstanding_work.tracked)) {
      // The handler's own executor, unless it is the I/O one: a second
      // tracked copy would only count the same work twice.
      auto handler_ex = asio_ns::get_associated_executor(h, io_ex);
      if constexpr (std::is_same_v<handler_executor_type, IoExecutor>) {
        if (handler_ex == io_ex) return;
      }
      tracked_handler_ex.emplace(
          asio_ns::prefer(std::move(handler_ex), asio_ns::execution::outstanding_work.tracked));
    }
    tracked_io_executor tracked_io_ex;
    std::optional<tracked_handler_executor> tracked_handler_ex;  // empty when it is the I/O executor
  };
  struct no_routes {};

  [[no_unique_address]] self_allocator allocator_;
  union {
    Handler handler_;  // alive from construction until delivered or discarded
  };
  [[no_unique_address]] std::conditional_t<Routed, std::optional<routes>, no_routes> routes_;
};

/// Allocates a wait for @p h with the handler's associated allocator (the
/// default one becomes the per-thread recycling allocator).
template <bool Routed, class Handler, class IoExecutor>
auto* make_wait_op(Handler&& h, const IoExecutor& io_ex) {
  using op = wait_op<std::decay_t<Handler>, IoExecutor, Routed>;
  using alloc_type = typename op::self_allocator;
  alloc_type a = [&] {
    if constexpr (std::is_same_v<alloc_type, recycling_allocator<op>>) {
      return alloc_type();
    } else {
      return alloc_type(asio_ns::get_associated_allocator(h));
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

}  // namespace chronopool::detail

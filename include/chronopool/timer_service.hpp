// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::timer_service — the Asio service behind chronopool's timers.
#pragma once

#include <chronopool/detail/timer/native_poller.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>
#include <chronopool/detail/timer/wait_op.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace chronopool {

class scheduled_thread_pool;

/// One per execution context: keeps that context's timer waits in deadline
/// indexes and completes them when due.
///
/// The waits are spread over shards, one lock each (as many as the machine
/// has cores, at most 16): a thread uses the shard it was given the first
/// time it used the service, and a timer lives in the shard of the thread
/// that last started a wait on it while it had none pending. Threads that
/// each run their own timers (a server's io threads, each with its
/// connections' timeouts) then do not contend for one lock. Waits with equal
/// deadlines complete in the order they were started within a shard.
///
/// Which threads run what:
/// - On any context but a pool (an io_context): the waits are driven on that
///   context's own threads: one native Asio timer per shard is armed at its
///   earliest deadline and re-armed only when that moves earlier (a deadline
///   nearer than arming costs, or than set_poll_window, is polled for
///   instead, by one function on the context that serves every shard while
///   any of them has a deadline that near); when it fires, the due
///   waits are completed right there (a handler whose executor is that
///   context is called directly, with no hop); a burst of more than 16 is
///   shared with the context's other threads in chunks posted in order.
/// - On a scheduled_thread_pool: a small internal task in the pool's queue,
///   due at the earliest deadline, wakes a worker, which completes the due
///   waits.
/// - After use_pool(ctx, pool): the same internal task in that pool's queue,
///   so the long waits are kept on the pool's threads; it runs a hand-off
///   before the deadline (how long a function posted to @p ctx takes to
///   start there, as measured, at most 100 us) and posts a function that
///   waits out the rest on @p ctx, going back behind its other work, then
///   completes the due waits on @p ctx's thread, as its own wake-up would.
///   While it waits, @p ctx always has a handler ready (io_context::poll()
///   runs until that deadline).
///
/// Cancelled waits complete with operation_aborted through one function
/// posted to the context per batch of cancellations, never inside the call
/// that cancelled them. When the context is destroyed, pending waits are
/// destroyed without their handlers being called (Asio's rule).
class timer_service : public boost::asio::execution_context::service {
 public:
  using key_type = timer_service;                ///< Asio's service key: the service itself
  static boost::asio::execution_context::id id;  ///< Asio's service id


  /// A timer's state: its expiry and its pending waits, kept in the I/O
  /// object itself (no allocation per timer).
  using implementation_type = detail::timer_impl;

  /// Made by boost::asio::use_service<timer_service>(ctx), once per context.
  explicit timer_service(boost::asio::execution_context& ctx);
  /// Destroys the waits still pending without calling their handlers.
  ~timer_service() override;

  /// Routes this context's waits to @p pool. Only before the first timer of
  /// the context exists; later calls throw std::logic_error.
  void use_pool(scheduled_thread_pool& pool);
  /// True when waits are driven by a scheduled_thread_pool's threads.
  bool driven_by_pool() const noexcept;
  /// Precision for a context not driven by a pool: the native timer wakes a
  /// thread @p window before each deadline, and the rest is waited for by
  /// polling the clock from a function on the context's queue (other
  /// handlers run in between), so the kernel's wake-up latency is spent
  /// before the deadline. Costs up to @p window of a thread's time per
  /// wake-up. Without it (0, the default) only deadlines nearer than what
  /// arming the native timer measurably costs are polled for (the kernel
  /// reprograms its timer: ~10 us in some VMs, far less on bare metal).
  /// While a deadline is polled for, the context always has a handler
  /// ready, so io_context::poll() runs until that deadline (at most the
  /// window). Applies to waits armed after the call. @p window must be in
  /// [0, 1 ms] (std::invalid_argument).
  void set_poll_window(std::chrono::nanoseconds window);
  /// Waits started and not yet handed to their handlers, across all timers
  /// of the context.
  std::size_t pending_waits() const;
  /// Diagnostics: how many waits started without their shard's lock (a wait
  /// due at or after the time its shard is already armed for is queued
  /// lock-free and taken into the shard by whoever locks it next), counted
  /// as they are taken in.
  std::uint64_t unlocked_starts() const;
  /// The context when it is an io_context (else null), known from its first
  /// timer on the io_context's own executor: such a timer does not store
  /// its executor (see detail::timer_object_impl).
  boost::asio::io_context* own_io_context() const noexcept { return own_io_context_.load(std::memory_order_acquire); }
  /// Records that the context is @p io (from a timer on its own executor).
  void set_own_io_context(boost::asio::io_context& io) noexcept {
    own_io_context_.store(&io, std::memory_order_release);
  }
  /// The context when it is a scheduled_thread_pool (else null), likewise.
  scheduled_thread_pool* own_pool() const noexcept { return own_pool_; }
  /// Diagnostics: the bytes the shards' deadline indexes hold in buffers.
  /// Cancelling most of many far-future waits gives most of it back.
  std::size_t index_bytes() const;
  /// Diagnostics: how many times a poll for a near deadline was started
  /// (native mode). One poll serves every timer of the context: a deadline
  /// that comes near while it runs does not start another.
  std::uint64_t poll_starts() const noexcept;
  /// Diagnostics: how late the context ran its native timer wake-ups after
  /// their expiry, a moving average (zero until one came). A poll starts for
  /// a deadline nearer than that plus what arming a kernel timer costs, and
  /// goes on for one within twice that.
  std::chrono::nanoseconds native_wakeup_latency() const noexcept;

  // ---- per-object operations (the I/O object forwards to these) -------------
  // basic_scheduled_timer calls these; they are public as Asio's services'
  // are, for I/O objects of one's own.

  /// Initialises a timer's state: no expiry, no wait, in the calling
  /// thread's shard.
  void construct(implementation_type& impl) noexcept {
    impl.set_home(&local_shard());  // and the inline wait free
    impl.set_expiry(detail::time_point());
    impl.first.store(nullptr, std::memory_order_relaxed);
    impl.last = nullptr;
    if (!any_timer_.load(std::memory_order_relaxed)) any_timer_.store(true);
  }
  /// Ends a timer's state: cancels its pending waits (operation_aborted).
  void destroy(implementation_type& impl) {
    detail::timer_shard::cancel(impl, nullptr);  // as Asio's timers: destruction cancels pending waits
  }
  /// Moves @p other's expiry and pending waits into @p impl, which was not
  /// constructed; @p other is left as if newly constructed.
  void move_construct(implementation_type& impl, implementation_type& other) noexcept {
    detail::timer_shard::move_timer(impl, other);
  }
  /// Cancels every pending wait of the timer; returns how many.
  std::size_t cancel(implementation_type& impl) { return detail::timer_shard::cancel(impl, nullptr); }
  /// Cancels the timer's oldest pending wait; returns 0 or 1.
  std::size_t cancel_one(implementation_type& impl) { return detail::timer_shard::cancel_one(impl); }
  /// The timer's expiry; read without a lock, from any thread.
  detail::time_point expiry(const implementation_type& impl) const noexcept {
    return impl.expiry();  // no lock: see detail::timer_impl
  }
  /// The expiry of a timer being constructed: no other thread can see it
  /// yet, so no lock and nothing to cancel.
  void set_initial_expiry(implementation_type& impl, detail::time_point t) noexcept {
    impl.set_expiry(t);
  }
  /// Sets the timer's expiry to @p t and cancels its pending waits; returns
  /// how many were cancelled.
  std::size_t expires_at(implementation_type& impl, detail::time_point t) {
    return detail::timer_shard::cancel(impl, &t);
  }
  /// Blocks until the expiry passes.
  void wait(implementation_type& impl, boost::system::error_code& ec);

  /// Starts a wait on the timer: @p handler completes with
  /// void(boost::system::error_code) at the expiry, or with
  /// operation_aborted when cancelled; @p io_ex is the I/O object's executor.
  /// Strong guarantee: if this throws, the handler is destroyed uncalled.
  template <class Handler, class IoExecutor>
  void async_wait(implementation_type& impl, Handler&& handler, const IoExecutor& io_ex) {
    start_wait(&impl, detail::time_point(), std::forward<Handler>(handler), io_ex);
  }

  /// A wait that belongs to no timer object: completes @p handler at
  /// @p deadline, or with operation_aborted when cancelled through its
  /// cancellation slot. Used by async_sleep.
  template <class Handler, class IoExecutor>
  void async_wait_at(detail::time_point deadline, Handler&& handler, const IoExecutor& io_ex) {
    start_wait(nullptr, deadline, std::forward<Handler>(handler), io_ex);
  }

 private:
  void shutdown() override;

  template <class Handler, class IoExecutor>
  void start_wait(detail::timer_impl* timer, detail::time_point deadline, Handler&& handler,
                  const IoExecutor& io_ex) {
    if (!context_known_.load(std::memory_order_acquire)) learn_executor(detail::context_executor_of(io_ex));
    if (detail::completes_directly(handler, io_ex, context_)) {
      launch<false>(timer, deadline, std::forward<Handler>(handler), io_ex);
    } else {
      launch<true>(timer, deadline, std::forward<Handler>(handler), io_ex);
    }
  }

  /// Allocates the wait, connects its cancellation slot and queues it.
  /// Strong guarantee: if anything throws, the wait is gone again and its
  /// handler destroyed uncalled, so a call that reports failure never completes.
  template <bool Routed, class Handler, class IoExecutor>
  void launch(detail::timer_impl* timer, detail::time_point deadline, Handler&& handler, const IoExecutor& io_ex) {
    // A standalone wait counts as a timer for use_pool(). Stored once: a
    // store on every wait would pull the line (shared with context_known_,
    // which every wait reads) away from the other threads each time.
    if (!any_timer_.load(std::memory_order_relaxed)) any_timer_.store(true, std::memory_order_relaxed);
    detail::timer_shard* shard = &local_shard();
    if (timer != nullptr) shard = &detail::timer_shard::home_for_wait(*timer, *shard);
    if constexpr (!Routed && detail::inline_capable<std::decay_t<Handler>, Handler&&>) {
      if (timer != nullptr && !boost::asio::get_associated_cancellation_slot(handler).is_connected() &&
          launch_inline<IoExecutor>(*timer, shard, std::forward<Handler>(handler))) {
        return;
      }
    }
    auto* op = detail::make_wait_op<Routed>(std::forward<Handler>(handler), io_ex);
    detail::wait_cancellation* cancellation = nullptr;
    try {
      cancellation = op->connect_cancellation(shard);
    } catch (...) {
      op->discard();
      throw;
    }
    if (timer == nullptr) op->set_deadline(deadline);
    for (;;) {
      detail::timer_shard::start_result r{};
      try {
        r = shard->start(*op, timer);
      } catch (...) {
        op->abandon();
        throw;
      }
      if (r == detail::timer_shard::start_result::started) return;
      if (r == detail::timer_shard::start_result::refused) return op->abandon();  // the context is going: as Asio does
      // Another thread moved the idle timer meanwhile: start where it is now.
      shard = &detail::timer_shard::home_for_wait(*timer, *shard);
      if (cancellation) cancellation->shard.store(shard);
    }
  }

  /// launch() in @p timer's inline wait (see detail::timer_impl), when the
  /// timer has no other wait pending and the inline one is free; false,
  /// with @p handler untouched, when it is not.
  template <class IoExecutor, class Handler>
  bool launch_inline(detail::timer_impl& timer, detail::timer_shard* shard, Handler&& handler) {
    using stored = std::decay_t<Handler>;
    using ops = detail::inline_wait_ops_for<stored, IoExecutor>;
    // Not while another wait of the timer is pending, linked or still on its
    // way to the shard's inbox (start_pending): the inline wait must be
    // the timer's oldest, which cancel_one() takes first.
    if (timer.first.load(std::memory_order_relaxed) != nullptr) return false;
    const std::uint16_t ops_id = ops::id();
    if (ops_id == 0 || !timer.try_claim_inline(ops_id)) return false;  // (it checks start_pending)
    ::new (timer.inline_storage()) stored(std::forward<Handler>(handler));  // cannot throw (inline_capable)
    for (;;) {
      detail::timer_shard::start_result r{};
      try {
        r = shard->start(timer, &timer);
      } catch (...) {
        ops::destroy(timer.inline_storage());
        timer.free_inline();
        throw;
      }
      if (r == detail::timer_shard::start_result::started) return true;
      if (r == detail::timer_shard::start_result::refused) {
        // The context is going: dropped uncalled, as Asio does.
        ops::destroy(timer.inline_storage());
        timer.free_inline();
        return true;
      }
      // Another thread moved the timer meanwhile (it was idle before the
      // claim): start where it is now.
      shard = &detail::timer_shard::home_for_wait(timer, *shard);
    }
  }
  /// The calling thread's shard of this service: the shards are handed out
  /// round-robin to the threads in the order they first use the service.
  detail::timer_shard& local_shard() noexcept {
    if (shards_.size() == 1) return *shards_.front();
    // The last few services this thread used, each with its shard: a thread
    // that arms timers of several contexts in turn keeps its shard in each
    // (with one remembered, each switch handed it a new one, which moved its
    // timers to shards not armed for them, under the lock). A service that
    // falls out gets a new, equally valid, shard when it comes back; one
    // destroyed and another made at its address inherits the index, which
    // is as valid (every service has as many shards).
    struct shard_choice {
      const timer_service* service;
      std::size_t index;
    };
    constexpr std::size_t remembered = 4;
    thread_local shard_choice recent[remembered] = {};
    thread_local std::size_t next_replaced = 0;
    for (const shard_choice& c : recent)
      if (c.service == this) return *shards_[c.index];
    shard_choice& c = recent[next_replaced];
    next_replaced = (next_replaced + 1) % remembered;
    c = {this, next_shard_.fetch_add(1, std::memory_order_relaxed) % shards_.size()};
    return *shards_[c.index];
  }

  /// Where the context's completions go and its native wake-up runs: learnt
  /// from the first wait (a pool says so in use_pool() instead).
  void learn_executor(const boost::asio::any_io_executor& ex);

  boost::asio::execution_context& context_;
  std::atomic<boost::asio::io_context*> own_io_context_{nullptr};
  scheduled_thread_pool* own_pool_ = nullptr;  // set by use_pool() when the pool is the context
  detail::native_poller poller_;  // before the shards, which refer to it
  std::vector<std::shared_ptr<detail::timer_shard>> shards_;  // fixed at construction
  std::atomic<std::size_t> next_shard_{0};
  std::atomic<bool> context_known_{false};
  std::atomic<bool> any_timer_{false};
  std::atomic<bool> pool_set_{false};
};

/// timer_service::set_poll_window for @p ctx's chronopool timers.
void set_poll_window(boost::asio::execution_context& ctx, std::chrono::nanoseconds window);

/// Points @p ctx's chronopool timers at @p pool, so their time-keeping runs on
/// the pool's threads. Call before the first timer of @p ctx exists.
void use_pool(boost::asio::execution_context& ctx, scheduled_thread_pool& pool);

}  // namespace chronopool

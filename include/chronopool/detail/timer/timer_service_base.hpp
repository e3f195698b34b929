// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The machinery of chronopool::timer_service: the shards that keep a
// context's waits, the native poll that serves them, the paths that start a
// wait, and the per-object operations the timer objects forward to.
// timer_service derives from it and adds only the user API; the I/O objects
// (basic_scheduled_timer, async_sleep) call this base. The start paths are
// inline templates (impl/timer_service_base.hpp), so a wait's start is
// compiled into the initiating call with no indirection.
#pragma once

#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/timer/native_poller.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>
#include <chronopool/detail/timer/inline_wait_handler.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace chronopool {
class scheduled_thread_pool;
class manual_clock;
}  // namespace chronopool

namespace chronopool::detail {

class pool_core;
class wall_clock_waits;

class timer_service_base : public asio_ns::execution_context::service {
 public:
  /// A timer's state: its expiry and its pending waits, kept in the I/O
  /// object itself (no allocation per timer).
  using implementation_type = timer_impl;

  // ---- per-object operations (the I/O object forwards to these) ----------

  /// Initialises a timer's state: no expiry, no wait, in the calling
  /// thread's shard.
  void construct(implementation_type& impl) noexcept {
    impl.set_home(&local_shard());  // and the inline wait free
    impl.set_expiry(time_point());
    impl.first.store(nullptr, std::memory_order_relaxed);
    impl.last = nullptr;
    note_timer();
  }
  /// A timer of the context (steady or system) was constructed: from here
  /// on use_pool and a manual clock are refused. Stored once.
  void note_timer() noexcept {
    if (!any_timer_.load(std::memory_order_relaxed)) any_timer_.store(true);
  }
  /// Ends a timer's state: cancels its pending waits (operation_aborted), as
  /// destroying an Asio timer does.
  void destroy(implementation_type& impl) { timer_shard::cancel(impl, nullptr); }
  /// Moves @p other's expiry and pending waits into @p impl, which was not
  /// constructed; @p other is left as if newly constructed.
  void move_construct(implementation_type& impl, implementation_type& other) noexcept {
    timer_shard::move_timer(impl, other);
  }
  /// Cancels every pending wait of the timer; returns how many.
  std::size_t cancel(implementation_type& impl) { return timer_shard::cancel(impl, nullptr); }
  /// Cancels the timer's oldest pending wait; returns 0 or 1.
  std::size_t cancel_one(implementation_type& impl) { return timer_shard::cancel_one(impl); }
  /// The timer's expiry; read without a lock, from any thread (see timer_impl).
  time_point expiry(const implementation_type& impl) const noexcept { return impl.expiry(); }
  /// The expiry of a timer being constructed: no other thread can see it
  /// yet, so no lock and nothing to cancel.
  void set_initial_expiry(implementation_type& impl, time_point t) noexcept { impl.set_expiry(t); }
  /// Sets the timer's expiry to @p t and cancels its pending waits; returns
  /// how many were cancelled.
  std::size_t expires_at(implementation_type& impl, time_point t) { return timer_shard::cancel(impl, &t); }
  /// Blocks until the expiry passes.
  void wait(implementation_type& impl, sys_ns::error_code& ec);

  /// Starts a wait on the timer: @p handler completes with
  /// void(sys_ns::error_code) at the expiry, or with
  /// operation_aborted when cancelled; @p io_ex is the I/O object's executor.
  /// Strong guarantee: if this throws, the handler is destroyed uncalled.
  template <class Handler, class IoExecutor>
  void async_wait(implementation_type& impl, Handler&& handler, const IoExecutor& io_ex);
  /// A wait that belongs to no timer object: completes @p handler at
  /// @p deadline, or with operation_aborted when cancelled through its
  /// cancellation slot. Used by async_sleep.
  template <class Handler, class IoExecutor>
  void async_wait_at(time_point deadline, Handler&& handler, const IoExecutor& io_ex);

  // ---- the context, as the timer objects learn it ------------------------

  /// The context when it is an io_context (else null), known from its first
  /// timer on the io_context's own executor: such a timer does not store
  /// its executor (see timer_object_impl).
  asio_ns::io_context* own_io_context() const noexcept { return own_io_context_.load(std::memory_order_acquire); }
  /// Records that the context is @p io (from a timer on its own executor).
  void set_own_io_context(asio_ns::io_context& io) noexcept {
    own_io_context_.store(&io, std::memory_order_release);
  }
  /// The context when it is a scheduled_thread_pool (else null), likewise.
  scheduled_thread_pool* own_pool() const noexcept { return own_pool_; }

  /// The waits of the context's system timers, which follow steps of the
  /// wall clock (see wall_clock_waits). Only system timers use it.
  wall_clock_waits& wall_waits() const noexcept { return *wall_; }

  // ---- time (the seam: see detail/time/manual_time.hpp) -------------------

  /// The context's steady time: steady_clock::now(), or the virtual time of
  /// the manual clock attached to the context. While no manual clock exists
  /// in the process, one relaxed load and a branch never taken.
  time_point now() const noexcept {
    if (!any_manual_clock()) [[likely]]
      return clock::now();
    return manual_or_real_now();
  }
  /// now(), for a caller that found a manual clock in the process.
  time_point manual_or_real_now() const noexcept {
    const manual_time* m = manual_.load(std::memory_order_acquire);
    return m != nullptr ? m->now() : clock::now();
  }
  /// The context's system time: the library's system_now(), or the manual
  /// clock's virtual system time.
  sys_time system_now() const noexcept {
    if (!any_manual_clock()) [[likely]]
      return detail::system_now();
    const manual_time* m = manual_.load(std::memory_order_acquire);
    return m != nullptr ? m->system_now() : detail::system_now();
  }
  /// The steady deadline that stands for the system instant @p instant on
  /// this context's clocks (steady_deadline_for on the real ones).
  time_point steady_deadline_for(sys_time instant) const noexcept {
    const manual_time* m = any_manual_clock() ? manual_.load(std::memory_order_acquire) : nullptr;
    if (m == nullptr) [[likely]]
      return detail::steady_deadline_for(instant);
    return m->steady_deadline_for(instant);
  }
  /// Wall steps seen by this context's system clock: the process's, plus
  /// the manual clock's.
  std::uint64_t clock_steps_seen() const noexcept {
    const manual_time* m = any_manual_clock() ? manual_.load(std::memory_order_acquire) : nullptr;
    return detail::clock_steps_seen() + (m != nullptr ? m->steps() : 0);
  }
  /// Puts the context on a manual clock (made here, owned by the service):
  /// only before its first timer exists, never with use_pool
  /// (std::logic_error); the same clock again when it has one.
  manual_clock& attach_manual_clock(asio_ns::io_context& io);
  /// The attached manual clock, or null.
  manual_clock* attached_manual_clock() const noexcept { return manual_clock_.get(); }
  /// The manual clock's time, or null: the context runs on the real clock.
  const manual_time* manual() const noexcept { return manual_.load(std::memory_order_acquire); }
  /// The context is a scheduled_thread_pool on a manual clock whose time is
  /// @p m (after route_to_pool, before the first timer): the timers read
  /// @p m, and their wake-ups stay the pool's tasks, which the pool runs on
  /// @p m.
  void run_on_pool_time(const manual_time* m);

  // ---- diagnostics (tests and benchmarks) --------------------------------

  /// How many waits started without their shard's lock (a wait due at or
  /// after the time its shard is already armed for is queued lock-free and
  /// taken into the shard by whoever locks it next), counted as they are
  /// taken in.
  std::uint64_t unlocked_starts() const;
  /// The bytes the shards' deadline indexes hold in buffers. Cancelling most
  /// of many far-future waits gives most of it back.
  std::size_t index_bytes() const;
  /// How many times a poll for a near deadline was started (native mode).
  /// One poll serves every timer of the context: a deadline that comes near
  /// while it runs does not start another.
  std::uint64_t poll_starts() const noexcept;
  /// How late the context ran its native timer wake-ups after their expiry,
  /// a moving average (zero until one came). A poll starts for a deadline
  /// nearer than that plus what arming a kernel timer costs, and goes on for
  /// one within twice that.
  std::chrono::nanoseconds native_wakeup_latency() const noexcept;

 protected:
  explicit timer_service_base(asio_ns::execution_context& ctx);
  ~timer_service_base() override;

  // What timer_service's user API does (see there).
  /// Routes the waits to @p pool, whose queue is @p core.
  void route_to_pool(scheduled_thread_pool& pool, std::shared_ptr<pool_core> core);
  bool routed_to_pool() const noexcept { return pool_set_.load(); }
  void set_window(std::chrono::nanoseconds window);
  /// timer_service::set_wakeup_slack.
  void set_slack(std::chrono::nanoseconds slack);
  std::size_t pending() const;
  /// Every shard's figures summed into @p s (see timer_shard::add_stats).
  void add_shard_stats(timer_service_stats& s) const;

 private:
  friend class chronopool::manual_clock;
  /// For the manual clock's driver: the earliest deadline of a pending
  /// wait, none when no wait is pending but "never" ones.
  std::optional<time_point> manual_first_deadline() const;
  /// For the manual clock's driver, after it moved the time: posts the
  /// collect of the waits now due.
  void manual_time_moved();

  void shutdown() override;

  template <class Handler, class IoExecutor>
  void start_wait(timer_impl* timer, time_point deadline, Handler&& handler, const IoExecutor& io_ex);
  /// Allocates the wait, connects its cancellation slot and queues it.
  /// Strong guarantee: if anything throws, the wait is gone again and its
  /// handler destroyed uncalled, so a call that reports failure never completes.
  template <bool Routed, class Handler, class IoExecutor>
  void launch(timer_impl* timer, time_point deadline, Handler&& handler, const IoExecutor& io_ex);
  /// launch() in @p timer's inline wait (see timer_impl), when the timer has
  /// no other wait pending and the inline one is free; false, with
  /// @p handler untouched, when it is not.
  template <class IoExecutor, class Handler>
  bool launch_inline(timer_impl& timer, timer_shard* shard, Handler&& handler);
  /// The calling thread's shard of this service: the shards are handed out
  /// round-robin to the threads in the order they first use the service.
  timer_shard& local_shard() noexcept;

  /// Where the context's completions go and its native wake-up runs: learnt
  /// from the first wait (a pool says so in route_to_pool() instead).
  void learn_executor(const asio_ns::any_io_executor& ex);

  asio_ns::execution_context& context_;
  std::atomic<asio_ns::io_context*> own_io_context_{nullptr};
  scheduled_thread_pool* own_pool_ = nullptr;  // set by route_to_pool() when the pool is the context
  native_poller poller_;                        // before the shards, which refer to it
  std::vector<std::shared_ptr<timer_shard>> shards_;  // fixed at construction
  std::atomic<std::size_t> next_shard_{0};
  std::atomic<bool> context_known_{false};
  std::atomic<bool> any_timer_{false};
  std::atomic<bool> pool_set_{false};
  std::shared_ptr<wall_clock_waits> wall_;  // made with the service; shared with the wall waits' records
  std::atomic<const manual_time*> manual_{nullptr};  // the manual clock's time, or null: the real clock
  std::unique_ptr<manual_clock> manual_clock_;       // set once, before the first timer
};

}  // namespace chronopool::detail

#include <chronopool/detail/timer/impl/timer_service_base.hpp>

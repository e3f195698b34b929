// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::timer_service — the Asio service behind chronopool's timers.
#pragma once

#include <chronopool/detail/timer/timer_service_base.hpp>
#include <chronopool/timer_service_stats.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstddef>

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
///   start there, as last observed, at most 100 us) and posts a function that
///   waits out the rest on @p ctx, going back behind its other work, then
///   completes the due waits on @p ctx's thread, as its own wake-up would.
///   While it waits, @p ctx always has a handler ready (io_context::poll()
///   runs until that deadline).
///
/// Cancelled waits complete with operation_aborted through one function
/// posted to the context per batch of cancellations, never inside the call
/// that cancelled them. When the context is destroyed, pending waits are
/// destroyed without their handlers being called (Asio's rule).
///
/// The timers call the service through its base, detail::timer_service_base,
/// which is not part of the API.
class timer_service : public detail::timer_service_base {
 public:
  /// Asio's service id. The registry finds the service by this id's address
  /// (no key_type, so no type_info compared by name on each lookup).
  static asio_ns::execution_context::id id;

  /// Made by asio_ns::use_service<timer_service>(ctx), once per context.
  explicit timer_service(asio_ns::execution_context& ctx);
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
  /// arming the native timer costs (the kernel reprograms its timer, which
  /// costs more in a virtual machine than on bare metal) are polled for.
  /// While a deadline is polled for, the context always has a handler
  /// ready, so io_context::poll() runs until that deadline (at most the
  /// window). Applies to waits armed after the call. @p window must be in
  /// [0, 1 ms] (std::invalid_argument).
  void set_poll_window(std::chrono::nanoseconds window);
  /// How much later than its deadline a wait may complete so that one
  /// wake-up serves several deadlines: a shard's wake-up is armed for the
  /// latest deadline at most @p slack after its first one, and completes
  /// everything due by then, none early. With a slack, only deadlines
  /// nearer than arming the native timer costs are polled for; the others
  /// are left to the native timer, whose latency the slack allows: less CPU
  /// for sparse deadlines, lateness near Asio's own instead of below it.
  /// Zero (the default): deadlines are waited for exactly (polled for when
  /// near, as above). Linux's default timer slack, 50 us, is a natural
  /// choice. A poll window
  /// asks for exact waits: the slack is not used while one is set. The
  /// timers of a scheduled_thread_pool's own executor follow
  /// scheduled_thread_pool_options::wakeup_slack instead. Applies to waits
  /// armed after the call. @p slack must be in [0, 1 ms]
  /// (std::invalid_argument).
  void set_wakeup_slack(std::chrono::nanoseconds slack);
  /// Waits started and not yet handed to their handlers, across all timers
  /// of the context.
  std::size_t pending_waits() const;
  /// The context's waits: pending, completed and cancelled, and how late
  /// the fired ones completed (see timer_service_stats). Recording costs
  /// the completing thread one histogram increment per wait, under the
  /// shard's lock it already holds, with the clock read it already made.
  timer_service_stats stats() const;
};

/// timer_service::set_poll_window for @p ctx's chronopool timers.
void set_poll_window(asio_ns::execution_context& ctx, std::chrono::nanoseconds window);

/// timer_service::set_wakeup_slack for @p ctx's chronopool timers.
void set_wakeup_slack(asio_ns::execution_context& ctx, std::chrono::nanoseconds slack);

/// Points @p ctx's chronopool timers at @p pool, so their time-keeping runs on
/// the pool's threads. Call before the first timer of @p ctx exists.
void use_pool(asio_ns::execution_context& ctx, scheduled_thread_pool& pool);

namespace detail {

/// Now on @p ex's context: steady_clock::now(), or the context's manual
/// clock. While no manual clock exists in the process, the executor is not
/// looked at (one relaxed load, a branch never taken).
template <class Executor>
time_point context_now(const Executor& ex) {
  if (!any_manual_clock()) [[likely]]
    return clock::now();
  if constexpr (asio_ns::execution::is_executor<Executor>::value) {
    return asio_ns::use_service<timer_service>(asio_ns::query(ex, asio_ns::execution::context))
        .manual_or_real_now();
  } else {
    return asio_ns::use_service<timer_service>(ex.context()).manual_or_real_now();
  }
}

/// The system time on @p ex's context: the library's system_now(), or the
/// virtual system time of the context's manual clock. Like context_now(),
/// the executor is looked at only while a manual clock exists.
template <class Executor>
sys_time context_system_now(const Executor& ex) {
  if (!any_manual_clock()) [[likely]]
    return system_now();
  if constexpr (asio_ns::execution::is_executor<Executor>::value) {
    return asio_ns::use_service<timer_service>(asio_ns::query(ex, asio_ns::execution::context))
        .system_now();
  } else {
    return asio_ns::use_service<timer_service>(ex.context()).system_now();
  }
}

}  // namespace detail

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::basic_scheduled_timer — a drop-in for asio_ns::basic_waitable_timer.
#pragma once

#include <chronopool/detail/timer/timer_object_impl.hpp>
#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/timer_service.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace chronopool {

/// A timer with the members and semantics of asio_ns::basic_waitable_timer,
/// backed by chronopool's timer_service (see there for which threads run what).
///
/// Differences from Asio's timer, all extensions:
/// - cancel(), cancel_one(), expires_at() and expires_after() may be called
///   from any thread while a wait is pending (Asio's timer requires external
///   synchronisation). Concurrent calls are safe; a cancel racing the expiry
///   completes each wait exactly once, with success or operation_aborted.
/// - Durations and time points of any unit are converted with saturation: a
///   duration::max() expiry means "never" and does not overflow.
/// - expires_at() and expires_after() take an optional leeway: expiries in
///   the same leeway-wide slot become one deadline, and so one wake-up.
/// Clock is std::chrono::steady_clock here; std::chrono::system_clock has a
/// specialisation whose waits follow steps of the wall clock (see
/// chronopool::system_timer). No other clock is supported.
///
/// @par Thread Safety
/// Distinct objects: safe. Shared objects: safe for cancel, cancel_one,
/// expiry, expires_at, expires_after and async_wait.
template <class Clock, class WaitTraits = asio_ns::wait_traits<Clock>,
          class Executor = asio_ns::any_io_executor>
class basic_scheduled_timer {
  static_assert(std::is_same_v<Clock, std::chrono::steady_clock>,
                "chronopool timers run on std::chrono::steady_clock or std::chrono::system_clock only");

 public:
  using executor_type = Executor;                      ///< the executor handlers default to
  using clock_type = Clock;                            ///< std::chrono::steady_clock
  using duration = typename clock_type::duration;      ///< clock_type's duration
  using time_point = typename clock_type::time_point;  ///< clock_type's time point
  using traits_type = WaitTraits;                      ///< kept for Asio compatibility; not consulted

  /// Rebinds the timer to another executor type (as Asio's timer does, for
  /// as_tuple, use_awaitable_t::as_default_on and the like).
  template <class Executor1>
  struct rebind_executor {
    /// The timer type with Executor1 as its executor.
    using other = basic_scheduled_timer<Clock, WaitTraits, Executor1>;
  };

  /// A timer on @p ex's context, with no expiry set (a wait completes at
  /// once) and no pending wait.
  explicit basic_scheduled_timer(const executor_type& ex) : object_(ex, service_for(ex)) {}
  /// A timer on @p ctx, using ctx's executor (as the constructor from an executor).
  template <class ExecutionContext>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  explicit basic_scheduled_timer(ExecutionContext& ctx)
      : object_(executor_type(ctx.get_executor()), detail::timer_service_of(ctx)) {}
  // The expiry constructors and setters are templates over the unit, where
  // Asio's take the clock's own types: an implicit conversion to nanoseconds
  // at the call site would overflow for hours::max() before we could
  // saturate it.
  /// A timer on @p ex's context that expires at @p expiry_time (saturating).
  template <class Duration>
  basic_scheduled_timer(const executor_type& ex, const std::chrono::time_point<Clock, Duration>& expiry_time)
      : basic_scheduled_timer(ex) {
    service().set_initial_expiry(impl(), to_time_point(expiry_time));
  }
  /// A timer on @p ctx that expires at @p expiry_time (saturating).
  template <class ExecutionContext, class Duration>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_scheduled_timer(ExecutionContext& ctx, const std::chrono::time_point<Clock, Duration>& expiry_time)
      : basic_scheduled_timer(ctx) {
    service().set_initial_expiry(impl(), to_time_point(expiry_time));
  }
  /// A timer on @p ex's context that expires @p expiry_time from now (saturating).
  template <class Rep, class Period>
  basic_scheduled_timer(const executor_type& ex, const std::chrono::duration<Rep, Period>& expiry_time)
      : basic_scheduled_timer(ex) {
    service().set_initial_expiry(impl(), from_now(expiry_time));
  }
  /// A timer on @p ctx that expires @p expiry_time from now (saturating).
  template <class ExecutionContext, class Rep, class Period>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_scheduled_timer(ExecutionContext& ctx, const std::chrono::duration<Rep, Period>& expiry_time)
      : basic_scheduled_timer(ctx) {
    service().set_initial_expiry(impl(), from_now(expiry_time));
  }

  /// The moved-from timer is left as if newly constructed on its executor.
  basic_scheduled_timer(basic_scheduled_timer&& other) : object_(other.get_executor(), detail::moved_into) {
    other.service().move_construct(impl(), other.impl());
  }
  /// Moves from a timer with another executor type convertible to this one;
  /// @p other is left as after the move constructor.
  template <class Executor1>
    requires std::is_convertible_v<const Executor1&, Executor>
  basic_scheduled_timer(basic_scheduled_timer<Clock, WaitTraits, Executor1>&& other)
      : object_(Executor(other.get_executor()), detail::moved_into) {
    other.service().move_construct(impl(), other.impl());
  }
  /// Cancels this timer's pending waits, then takes over @p other, including
  /// its context: later waits are driven by @p other's context.
  basic_scheduled_timer& operator=(basic_scheduled_timer&& other) {
    if (this != &other) {
      // The executor is copied (and, for a strand, boxed) before anything
      // else changes: if that throws, @p other is untouched and this timer
      // is as it was, or, past destroy(), valid with its waits cancelled.
      executor_type ex = other.get_executor();
      service().destroy(impl());  // cancels this timer's waits
      object_.reset_moved_into(ex);
      other.service().move_construct(impl(), other.impl());
    }
    return *this;
  }
  basic_scheduled_timer(const basic_scheduled_timer&) = delete;             ///< not copyable
  basic_scheduled_timer& operator=(const basic_scheduled_timer&) = delete;  ///< not copyable

  /// Cancels pending waits (their handlers get operation_aborted).
  ~basic_scheduled_timer() { service().destroy(impl()); }

  /// The timer's executor, the default for its handlers.
  executor_type get_executor() noexcept { return object_.get_executor(); }

  /// Cancels every pending wait; returns how many were cancelled.
  std::size_t cancel() { return service().cancel(impl()); }
  /// Cancels the oldest pending wait; returns 0 or 1.
  std::size_t cancel_one() { return service().cancel_one(impl()); }

  /// The expiry set (rounded when set with a leeway); a time point of
  /// duration::max() means "never".
  time_point expiry() const { return service().expiry(impl()); }
  /// Sets the expiry, cancelling pending waits; returns how many were cancelled.
  template <class Duration>
  std::size_t expires_at(const std::chrono::time_point<Clock, Duration>& expiry_time) {
    return service().expires_at(impl(), to_time_point(expiry_time));
  }
  /// Sets the expiry relative to now (saturating), cancelling pending waits.
  template <class Rep, class Period>
  std::size_t expires_after(const std::chrono::duration<Rep, Period>& expiry_time) {
    return service().expires_at(impl(), from_now(expiry_time));
  }

  /// Sets the expiry to @p expiry_time moved up to the end of its
  /// @p leeway-wide slot (slots are multiples of @p leeway on the steady
  /// clock's epoch), cancelling pending waits; returns how many were
  /// cancelled. Timers whose expiries land in the same slot share one
  /// deadline, so one wake-up completes them all (in the order their waits
  /// started, within a shard): heartbeats and idle timeouts that need not
  /// be exact cost far fewer wake-ups. A wait completes no earlier than
  /// @p expiry_time and less than @p leeway after it (plus the usual
  /// latency); expiry() returns the rounded time. A zero leeway is an exact
  /// expiry; a negative one throws std::invalid_argument. Rounding past the
  /// clock's range saturates to "never".
  template <class Duration, class Rep, class Period>
  std::size_t expires_at(const std::chrono::time_point<Clock, Duration>& expiry_time,
                         const std::chrono::duration<Rep, Period>& leeway) {
    const detail::duration slot = detail::checked_leeway(leeway);
    return service().expires_at(impl(), detail::round_up_to_slot(to_time_point(expiry_time), slot));
  }
  /// expires_at(now + @p expiry_time, @p leeway), saturating.
  template <class Rep1, class Period1, class Rep2, class Period2>
  std::size_t expires_after(const std::chrono::duration<Rep1, Period1>& expiry_time,
                            const std::chrono::duration<Rep2, Period2>& leeway) {
    const detail::duration slot = detail::checked_leeway(leeway);
    return service().expires_at(impl(), detail::round_up_to_slot(from_now(expiry_time), slot));
  }

  /// Blocks the calling thread until the expiry has passed (following an
  /// expiry moved meanwhile); cancel() does not end it. Runs no handlers.
  void wait() {
    sys_ns::error_code ec;
    service().wait(impl(), ec);
    if (ec) throw sys_ns::system_error(ec, "wait");
  }
  /// As wait(); @p ec is set to success when it returns.
  void wait(sys_ns::error_code& ec) { service().wait(impl(), ec); }

  /// Starts an asynchronous wait for the expiry.
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  /// Success when the expiry came; asio_ns::error::operation_aborted when
  /// the wait was cancelled (cancel, cancel_one, expires_*, destruction,
  /// per-operation cancellation, or the pool's shutdown_now()).
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation all cancel the wait.
  ///
  /// The handler never runs inside this call; it runs through its associated
  /// executor (default: the timer's executor), and the wait counts as
  /// outstanding work on the timer's executor until it completes.
  ///
  /// @par Handler Size
  /// A timer's first pending wait keeps its handler inside the timer object,
  /// with no allocation, when the handler is at most two words (16 bytes on
  /// a 64-bit machine: use_awaitable's, a lambda capturing `this` and one
  /// more pointer, or a shared_ptr), moves without throwing, uses the
  /// default allocator, has no cancellation slot and completes on the
  /// timer's own executor. Any other wait, a lambda of three or more words
  /// among them, takes a block from a per-thread cache of freed wait blocks
  /// (an allocation when the cache is empty). docs/performance.md measures
  /// what that costs (the `fire` rows with a three- and a four-word handler).
  template <class WaitToken = asio_ns::default_completion_token_t<executor_type>>
  auto async_wait(WaitToken&& token = asio_ns::default_completion_token_t<executor_type>()) {
    return asio_ns::async_initiate<WaitToken, void(sys_ns::error_code)>(initiate_async_wait(this),
                                                                                    token);
  }

 private:
  template <class, class, class>
  friend class basic_scheduled_timer;

  class initiate_async_wait {
   public:
    using executor_type = Executor;
    explicit initiate_async_wait(basic_scheduled_timer* self) noexcept : self_(self) {}
    executor_type get_executor() const noexcept { return self_->get_executor(); }
    template <class WaitHandler>
    void operator()(WaitHandler&& handler) const {
      self_->object_.with_executor([&](const executor_type& io_ex) {
        self_->service().async_wait(self_->impl(), std::forward<WaitHandler>(handler), io_ex);
      });
    }

   private:
    basic_scheduled_timer* self_;
  };

  /// An expiry of any unit as the service's time point, saturating.
  template <class Duration>
  static detail::time_point to_time_point(const std::chrono::time_point<Clock, Duration>& t) {
    return detail::time_point(detail::saturating_duration(t.time_since_epoch(), "expiry"));
  }
  /// Now on the timer's context plus @p d, saturating.
  template <class Rep, class Period>
  detail::time_point from_now(const std::chrono::duration<Rep, Period>& d) const {
    return detail::saturating_add(context_now(), detail::saturating_duration(d, "expiry"));
  }
  /// The context's now (see timer_service_base::now); the service is only
  /// looked at while a manual clock exists in the process.
  detail::time_point context_now() const noexcept {
    if (!detail::any_manual_clock()) [[likely]]
      return clock_type::now();
    return service().manual_or_real_now();
  }

  static timer_service& service_for(const executor_type& ex) { return detail::timer_service_of(ex); }

  /// Found through the timer's home shard: one pointer less per timer.
  detail::timer_service_base& service() const noexcept { return impl().home(std::memory_order_relaxed)->service(); }
  detail::timer_impl& impl() noexcept { return object_.impl(); }
  const detail::timer_impl& impl() const noexcept { return object_.impl(); }

  // The state and the executor: for a context's own executor, the state alone.
  detail::timer_object_impl<executor_type> object_;
};

}  // namespace chronopool

#include <chronopool/impl/basic_system_timer.hpp>

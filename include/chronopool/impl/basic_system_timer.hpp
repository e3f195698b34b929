// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// basic_scheduled_timer for std::chrono::system_clock: waits that follow
/// the wall clock. Included at the end of basic_scheduled_timer.hpp.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/detail/timer/wall_clock_waits.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace chronopool {

namespace detail {

/// A system_clock time point of any unit as the clock's own, saturating.
template <class Duration>
sys_time to_sys_time(const std::chrono::time_point<std::chrono::system_clock, Duration>& t) {
  return sys_time(saturating_duration(t.time_since_epoch(), "expiry"));
}
/// @p t moved up to the end of its @p slot-wide slot on the system clock's epoch.
inline sys_time round_up_to_sys_slot(sys_time t, duration slot) noexcept {
  return sys_time(round_up_to_slot(time_point(t.time_since_epoch()), slot).time_since_epoch());
}
/// @p now + @p d, saturating.
inline sys_time sys_after(sys_time now, duration d) noexcept {
  return sys_time(saturating_add(time_point(now.time_since_epoch()), d).time_since_epoch());
}

}  // namespace detail

/// A timer on the system clock, with the members and semantics of
/// asio_ns::basic_waitable_timer<std::chrono::system_clock> (Asio's
/// system_timer), and the extensions of the steady one (see the primary
/// template): calls from any thread while waits are pending, saturating
/// conversions, leeway.
///
/// Its waits follow the wall clock: when the system clock is stepped (NTP,
/// `date -s`, a resumed virtual machine), pending waits whose expiry has now
/// passed complete at once, with success, and later ones move with the
/// clock. A wait never completes before its expiry as the system clock
/// reads it. Steps are noticed by one watcher thread per process (Linux: a
/// timerfd that the kernel cancels when CLOCK_REALTIME is set), started by
/// the first pending wait of any system timer; each context then moves its
/// waits from one function posted to it. Between the step and that function
/// a wait that comes due by the old reckoning is armed again rather than
/// completed early. docs/design.md ("The timer service") tells how.
///
/// Costs more than the steady timer: each wait allocates a small record
/// besides its engine wait, waits of one context share one lock, and a step
/// moves every pending wait of the context. The steady timer pays nothing
/// for it.
///
/// @par Thread Safety
/// Distinct objects: safe. Shared objects: safe for cancel, cancel_one,
/// expiry, expires_at, expires_after and async_wait.
template <class WaitTraits, class Executor>
class basic_scheduled_timer<std::chrono::system_clock, WaitTraits, Executor> {
 public:
  using executor_type = Executor;                      ///< the executor handlers default to
  using clock_type = std::chrono::system_clock;        ///< std::chrono::system_clock
  using duration = typename clock_type::duration;      ///< clock_type's duration
  using time_point = typename clock_type::time_point;  ///< clock_type's time point
  using traits_type = WaitTraits;                      ///< kept for Asio compatibility; not consulted

  /// Rebinds the timer to another executor type.
  template <class Executor1>
  struct rebind_executor {
    /// The timer type with Executor1 as its executor.
    using other = basic_scheduled_timer<clock_type, WaitTraits, Executor1>;
  };

  /// A timer on @p ex's context, with no expiry set (a wait completes at
  /// once) and no pending wait.
  explicit basic_scheduled_timer(const executor_type& ex) : ex_(ex) { waits_for(ex).construct(impl_); }
  /// A timer on @p ctx, using ctx's executor.
  template <class ExecutionContext>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  explicit basic_scheduled_timer(ExecutionContext& ctx) : basic_scheduled_timer(executor_type(ctx.get_executor())) {}
  /// A timer on @p ex's context that expires at @p expiry_time (saturating).
  template <class Duration>
  basic_scheduled_timer(const executor_type& ex, const std::chrono::time_point<clock_type, Duration>& expiry_time)
      : basic_scheduled_timer(ex) {
    impl_.store_expiry(detail::to_sys_time(expiry_time));
  }
  /// A timer on @p ctx that expires at @p expiry_time (saturating).
  template <class ExecutionContext, class Duration>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_scheduled_timer(ExecutionContext& ctx, const std::chrono::time_point<clock_type, Duration>& expiry_time)
      : basic_scheduled_timer(ctx) {
    impl_.store_expiry(detail::to_sys_time(expiry_time));
  }
  /// A timer on @p ex's context that expires @p expiry_time from now (saturating).
  template <class Rep, class Period>
  basic_scheduled_timer(const executor_type& ex, const std::chrono::duration<Rep, Period>& expiry_time)
      : basic_scheduled_timer(ex) {
    impl_.store_expiry(sys_from_now(detail::saturating_duration(expiry_time, "expiry")));
  }
  /// A timer on @p ctx that expires @p expiry_time from now (saturating).
  template <class ExecutionContext, class Rep, class Period>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_scheduled_timer(ExecutionContext& ctx, const std::chrono::duration<Rep, Period>& expiry_time)
      : basic_scheduled_timer(ctx) {
    impl_.store_expiry(sys_from_now(detail::saturating_duration(expiry_time, "expiry")));
  }

  /// The moved-from timer is left as if newly constructed on its executor.
  basic_scheduled_timer(basic_scheduled_timer&& other) : ex_(other.ex_) {
    other.impl_.waits->move_timer(impl_, other.impl_);
  }
  /// Moves from a timer with another executor type convertible to this one.
  template <class Executor1>
    requires std::is_convertible_v<const Executor1&, Executor>
  basic_scheduled_timer(basic_scheduled_timer<clock_type, WaitTraits, Executor1>&& other)
      : ex_(Executor(other.get_executor())) {
    other.impl_.waits->move_timer(impl_, other.impl_);
  }
  /// Cancels this timer's pending waits, then takes over @p other, including
  /// its context.
  basic_scheduled_timer& operator=(basic_scheduled_timer&& other) {
    if (this != &other) {
      executor_type ex = other.ex_;  // copied first: if it throws, nothing changed
      impl_.waits->destroy(impl_);
      ex_ = std::move(ex);
      other.impl_.waits->move_timer(impl_, other.impl_);
    }
    return *this;
  }
  basic_scheduled_timer(const basic_scheduled_timer&) = delete;             ///< not copyable
  basic_scheduled_timer& operator=(const basic_scheduled_timer&) = delete;  ///< not copyable

  /// Cancels pending waits (their handlers get operation_aborted).
  ~basic_scheduled_timer() { impl_.waits->destroy(impl_); }

  /// The timer's executor, the default for its handlers.
  executor_type get_executor() noexcept { return ex_; }

  /// Cancels every pending wait; returns how many were cancelled.
  std::size_t cancel() { return impl_.waits->cancel(impl_, nullptr); }
  /// Cancels the oldest pending wait; returns 0 or 1.
  std::size_t cancel_one() { return impl_.waits->cancel_one(impl_); }

  /// The expiry set (rounded when set with a leeway); a time point of
  /// duration::max() means "never".
  time_point expiry() const { return impl_.load_expiry(); }
  /// Sets the expiry, cancelling pending waits; returns how many were cancelled.
  template <class Duration>
  std::size_t expires_at(const std::chrono::time_point<clock_type, Duration>& expiry_time) {
    return set_expiry(detail::to_sys_time(expiry_time));
  }
  /// Sets the expiry relative to now (saturating), cancelling pending waits.
  template <class Rep, class Period>
  std::size_t expires_after(const std::chrono::duration<Rep, Period>& expiry_time) {
    return set_expiry(sys_from_now(detail::saturating_duration(expiry_time, "expiry")));
  }
  /// Sets the expiry to @p expiry_time moved up to the end of its
  /// @p leeway-wide slot (multiples of @p leeway on the system clock's
  /// epoch), cancelling pending waits; as the steady timer's overload.
  template <class Duration, class Rep, class Period>
  std::size_t expires_at(const std::chrono::time_point<clock_type, Duration>& expiry_time,
                         const std::chrono::duration<Rep, Period>& leeway) {
    const detail::duration slot = detail::checked_leeway(leeway);
    return set_expiry(detail::round_up_to_sys_slot(detail::to_sys_time(expiry_time), slot));
  }
  /// expires_at(now + @p expiry_time, @p leeway), saturating.
  template <class Rep1, class Period1, class Rep2, class Period2>
  std::size_t expires_after(const std::chrono::duration<Rep1, Period1>& expiry_time,
                            const std::chrono::duration<Rep2, Period2>& leeway) {
    const detail::duration slot = detail::checked_leeway(leeway);
    return set_expiry(
        detail::round_up_to_sys_slot(sys_from_now(detail::saturating_duration(expiry_time, "expiry")), slot));
  }

  /// Blocks the calling thread until the system clock reaches the expiry
  /// (following steps of the clock, and an expiry moved meanwhile); cancel()
  /// does not end it. Runs no handlers. On a context with a manual clock it
  /// waits on virtual time: until another thread advances or steps the
  /// clock to the expiry.
  void wait() {
    detail::wait_for_wall_expiry(impl_.waits->service(), &read_expiry, &impl_);
  }
  /// As wait(); @p ec is set to success when it returns.
  void wait(sys_ns::error_code& ec) {
    detail::wait_for_wall_expiry(impl_.waits->service(), &read_expiry, &impl_);
    ec = {};
  }

  /// Starts an asynchronous wait for the expiry by the system clock.
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  /// Success when the expiry came by the system clock (at once when a step
  /// moved the clock past it); asio_ns::error::operation_aborted when
  /// the wait was cancelled (cancel, cancel_one, expires_*, destruction,
  /// per-operation cancellation, or the pool's shutdown_now()).
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation all cancel the wait.
  ///
  /// The handler never runs inside this call; it runs through its associated
  /// executor (default: the timer's executor), and the wait counts as
  /// outstanding work on the timer's executor until it completes.
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
    executor_type get_executor() const noexcept { return self_->ex_; }
    template <class WaitHandler>
    void operator()(WaitHandler&& handler) const {
      self_->impl_.waits->async_wait(self_->impl_, std::forward<WaitHandler>(handler), self_->ex_);
    }

   private:
    basic_scheduled_timer* self_;
  };

  std::size_t set_expiry(detail::sys_time t) { return impl_.waits->cancel(impl_, &t); }
  /// The context's system time (a manual clock's, when it has one) + @p d, saturating.
  detail::sys_time sys_from_now(detail::duration d) const noexcept {
    return detail::sys_after(impl_.waits->service().system_now(), d);
  }
  static detail::sys_time read_expiry(const void* impl) {
    return static_cast<const detail::wall_timer_impl*>(impl)->load_expiry();
  }

  static detail::wall_clock_waits& waits_for(const executor_type& ex) {
    return detail::timer_service_of(ex).wall_waits();
  }

  executor_type ex_;
  detail::wall_timer_impl impl_;
};

}  // namespace chronopool

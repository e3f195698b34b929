// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::periodic_timer — ticks for coroutines, like tokio's interval.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/detail/time/periodic_schedule.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace chronopool {

/// When a periodic_timer's first tick comes.
enum class first_tick : std::uint8_t {
  /// One period after construction (the default).
  after_period,
  /// At once: the first async_tick completes without waiting, as tokio's
  /// interval does; later ticks follow the period from construction.
  immediately,
};

/// Ticks at a fixed period: `co_await ticker.async_tick(use_awaitable)`
/// completes at each ideal instant. A tick that is already due completes at
/// once (never inside the call); after a late tick the policy decides: burst
/// keeps the ideal schedule (catch-up ticks back to back), delay restarts the
/// period from that tick, skip moves to the next ideal instant after now.
///
/// One tick wait at a time: a new async_tick cancels a pending one.
template <class Executor = asio_ns::any_io_executor>
class basic_periodic_timer {
 public:
  using executor_type = Executor;                 ///< the executor tick handlers default to
  using clock_type = std::chrono::steady_clock;   ///< the clock of the schedule
  using duration = clock_type::duration;          ///< clock_type's duration
  using time_point = clock_type::time_point;      ///< clock_type's time point

  /// First tick at @p first, or one period from now. @p period must be positive.
  /// The period may be of any unit; it is converted with saturation.
  /// The first tick's instant may be in the past: it then completes at once.
  template <class Rep, class Period>
  basic_periodic_timer(const executor_type& ex, std::chrono::duration<Rep, Period> period,
                       missed_tick_policy policy = missed_tick_policy::burst,
                       std::optional<time_point> first = std::nullopt)
      : timer_(ex), period_(checked(detail::saturating_duration(period, "period"))), policy_(policy),
        next_(first ? *first : detail::saturating_add(context_now(), period_)) {}
  /// As the constructor above, on @p ctx's executor.
  template <class ExecutionContext, class Rep, class Period>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_periodic_timer(ExecutionContext& ctx, std::chrono::duration<Rep, Period> period,
                       missed_tick_policy policy = missed_tick_policy::burst,
                       std::optional<time_point> first = std::nullopt)
      : basic_periodic_timer(executor_type(ctx.get_executor()), period, policy, first) {}

  /// First tick as @p when says (at once, or one period from now).
  template <class Rep, class Period>
  basic_periodic_timer(const executor_type& ex, std::chrono::duration<Rep, Period> period, missed_tick_policy policy,
                       first_tick when)
      : basic_periodic_timer(ex, period, policy, first_instant(when, ex)) {}
  /// As the constructor above, on @p ctx's executor.
  template <class ExecutionContext, class Rep, class Period>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_periodic_timer(ExecutionContext& ctx, std::chrono::duration<Rep, Period> period, missed_tick_policy policy,
                       first_tick when)
      : basic_periodic_timer(executor_type(ctx.get_executor()), period, policy,
                             first_instant(when, executor_type(ctx.get_executor()))) {}

  /// The executor of the timer's waits, the default for tick handlers.
  executor_type get_executor() noexcept { return timer_.get_executor(); }
  /// The period, as converted at construction.
  duration period() const noexcept { return period_; }
  /// What happens after a late tick (see the class).
  missed_tick_policy policy() const noexcept { return policy_; }
  /// The ideal instant of the next tick.
  time_point next_tick() const noexcept { return next_; }
  /// Cancels a pending tick wait (operation_aborted); the schedule is kept.
  std::size_t cancel() { return timer_.cancel(); }

  /// Re-bases the schedule (tokio's Interval::reset): the next tick is one
  /// period from now, then every period after it. It applies from the next
  /// async_tick: a tick wait already pending keeps the instant it was
  /// started for and, when it completes, does not move the new schedule.
  void reset() { reset_at(detail::saturating_add(context_now(), period_)); }

  /// Re-bases the schedule on @p next: the next tick's ideal instant (at
  /// once when past), then every period after it. Applies as reset() does.
  void reset_at(time_point next) noexcept {
    next_ = next;
    ++resets_;
  }

  /// From the next async_tick on, a tick completes at the end of the
  /// @p leeway-wide slot that holds its ideal instant (see
  /// periodic_options::leeway): the ticks of many timers in one slot share a
  /// wake-up, none comes early, and next_tick() stays on the exact schedule.
  /// Must be in [0, period) (std::invalid_argument); 0 is exact.
  template <class Rep, class Period>
  void set_leeway(std::chrono::duration<Rep, Period> leeway) {
    const duration l = detail::checked_leeway(leeway);
    detail::validate_leeway(period_, l, "periodic_timer");
    leeway_ = l;
  }
  /// The leeway set by set_leeway() (zero: exact ticks).
  duration leeway() const noexcept { return leeway_; }

  /// Waits for the next tick.
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation abort the wait; the tick is
  /// not consumed.
  template <class TickToken = asio_ns::default_completion_token_t<executor_type>>
  auto async_tick(TickToken&& token = asio_ns::default_completion_token_t<executor_type>()) {
    return asio_ns::async_compose<TickToken, void(sys_ns::error_code)>(tick_op{this, false, 0}, token,
                                                                                   timer_);
  }

 private:
  struct tick_op {
    basic_periodic_timer* self;
    bool started;
    std::uint64_t resets = 0;  // the timer's reset count when the wait started

    template <class Self>
    void operator()(Self& op, sys_ns::error_code ec = {}) {
      if (!started) {
        started = true;
        resets = self->resets_;
        op.reset_cancellation_state(asio_ns::enable_total_cancellation());
        self->timer_.expires_at(self->next_, self->leeway_);
        self->timer_.async_wait(std::move(op));
        return;
      }
      // A reset() while the wait was pending chose the next instant itself.
      if (!ec && resets == self->resets_) self->advance();
      op.complete(ec);
    }
  };

  // A tick's run starts as its wait completes.
  void advance() { next_ = detail::next_fixed_rate_instant(next_, period_, context_now(), policy_); }
  // Now on the timer's context: the steady clock, or its manual clock.
  time_point context_now() {
    if (!detail::any_manual_clock()) [[likely]]
      return clock_type::now();
    return detail::context_now(timer_.get_executor());
  }

  // nullopt: the constructor's default, one period from now.
  static std::optional<time_point> first_instant(first_tick when, const executor_type& ex) {
    if (when == first_tick::immediately) return detail::context_now(ex);
    return std::nullopt;
  }

  static duration checked(duration period) {
    if (period <= duration::zero()) throw std::invalid_argument("chronopool: periodic_timer: period must be positive");
    return period;
  }

  basic_scheduled_timer<clock_type, asio_ns::wait_traits<clock_type>, Executor> timer_;
  duration period_;
  missed_tick_policy policy_;
  time_point next_;
  duration leeway_{};
  std::uint64_t resets_ = 0;  // reset()/reset_at() calls, for a pending tick_op
};

/// A periodic timer on any I/O executor (asio_ns::any_io_executor).
using periodic_timer = basic_periodic_timer<>;

}  // namespace chronopool

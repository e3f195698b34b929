// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::cron_timer — calendar ticks for coroutines.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/cron_fire.hpp>
#include <chronopool/cron_schedule.hpp>
#include <chronopool/detail/calendar/cron_run.hpp>
#include <chronopool/detail/time/clock_steps.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool {

/// Ticks at the instants of a cron_schedule: `co_await t.async_tick(use_awaitable)`
/// completes at each one, and last_tick() then tells which instant it was.
///
/// The next instant is chosen when async_tick is called, that is when the
/// loop body of the previous tick has ended, so ticks never overlap the
/// body. When instants have passed by then, the cron_misfire given at
/// construction decides how many of them still tick, at once (once, by
/// default). The first tick is the first instant after construction.
///
/// Wall clock: the tick waits on a system timer (see chronopool::system_timer),
/// so it follows steps of the system clock: it never completes before its
/// instant by the system clock, and a forward step past the instant
/// completes it at once. On a context with a manual clock the instants are
/// read on its virtual system clock. One tick wait at a time: a new async_tick cancels
/// a pending one.
template <class Executor = asio_ns::any_io_executor>
class basic_cron_timer {
 public:
  using executor_type = Executor;                          ///< the executor tick handlers default to
  using clock_type = std::chrono::system_clock;            ///< the clock of the instants
  using time_point = clock_type::time_point;               ///< an instant of the schedule

  /// Ticks at the instants of @p schedule after now. Throws
  /// std::invalid_argument when it names none that time_point can hold.
  basic_cron_timer(const executor_type& ex, cron_schedule schedule, cron_misfire misfire = {})
      : timer_(ex), cursor_(std::move(schedule), misfire) {
    if (!cursor_.start(detail::context_system_now(ex)))
      throw std::invalid_argument("chronopool: cron_timer: the schedule names no instant ahead");
  }
  /// As the constructor above, on @p ctx's executor.
  template <class ExecutionContext>
    requires std::is_convertible_v<ExecutionContext&, asio_ns::execution_context&>
  basic_cron_timer(ExecutionContext& ctx, cron_schedule schedule, cron_misfire misfire = {})
      : basic_cron_timer(executor_type(ctx.get_executor()), std::move(schedule), misfire) {}

  /// The executor of the timer's waits, the default for tick handlers.
  executor_type get_executor() noexcept { return timer_.get_executor(); }
  /// The schedule ticked.
  const cron_schedule& schedule() const noexcept { return cursor_.schedule(); }

  /// The instant the next tick is for, if async_tick were called now (after
  /// a completed tick, the misfire rule is applied at this moment). After a
  /// tick has completed it may lie in the past: that tick then completes
  /// at once. time_point::max() when the schedule has no instant left.
  time_point next_tick() const {
    if (!consumed_) return cursor_.current();
    const std::optional<time_point> next = cursor_.peek(context_now());
    return next ? *next : time_point::max();
  }

  /// The instant of the last tick that completed successfully; empty before
  /// the first.
  std::optional<time_point> last_tick() const noexcept { return last_; }

  /// Cancels a pending tick wait (operation_aborted); the tick is not
  /// consumed.
  std::size_t cancel() { return timer_.cancel(); }

  /// Waits for the next tick.
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  /// asio_ns::error::operation_aborted when cancelled;
  /// asio_ns::error::eof when the schedule names no instant left (an
  /// instant past what system_clock::time_point holds).
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation abort the wait; the tick is
  /// not consumed.
  template <class TickToken = asio_ns::default_completion_token_t<executor_type>>
  auto async_tick(TickToken&& token = asio_ns::default_completion_token_t<executor_type>()) {
    return asio_ns::async_compose<TickToken, void(sys_ns::error_code)>(tick_op{this, 0}, token, timer_);
  }

 private:
  struct tick_op {
    basic_cron_timer* self;
    int state;  // 0: not started, 1: waiting, 2: completing eof

    template <class Self>
    void operator()(Self& op, sys_ns::error_code ec = {}) {
      if (state == 0) {
        op.reset_cancellation_state(asio_ns::enable_total_cancellation());
        if (self->consumed_) {
          if (!self->cursor_.advance(self->context_now())) {
            // Never complete inside the initiating call: post the eof.
            state = 2;
            asio_ns::post(self->timer_.get_executor(), std::move(op));
            return;
          }
          self->consumed_ = false;
        }
        state = 1;
        self->wait(std::move(op));
        return;
      }
      if (state == 2) {
        op.complete(asio_ns::error::eof);
        return;
      }
      if (!ec) {
        self->last_ = self->cursor_.current();
        self->consumed_ = true;
      }
      op.complete(ec);
    }
  };

  template <class Op>
  void wait(Op&& op) {
    timer_.expires_at(cursor_.current());
    timer_.async_wait(std::forward<Op>(op));
  }

  /// The system time on the timer's context: the library's, or its manual
  /// clock's. (Asio's get_executor() is not const; reading it changes nothing.)
  time_point context_now() const {
    using timer_type = basic_scheduled_timer<clock_type, asio_ns::wait_traits<clock_type>, Executor>;
    return detail::context_system_now(const_cast<timer_type&>(timer_).get_executor());
  }

  basic_scheduled_timer<clock_type, asio_ns::wait_traits<clock_type>, Executor> timer_;
  detail::cron_cursor cursor_;
  std::optional<time_point> last_;
  bool consumed_ = false;  // the tick for cursor_.current() has completed
};

/// A calendar timer on any I/O executor (asio_ns::any_io_executor).
using cron_timer = basic_cron_timer<>;

}  // namespace chronopool

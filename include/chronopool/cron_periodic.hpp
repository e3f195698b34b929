// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Calendar schedules for handlers on any executor: chronopool::schedule_cron.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/cron_fire.hpp>
#include <chronopool/cron_schedule.hpp>
#include <chronopool/detail/calendar/cron_run.hpp>
#include <chronopool/detail/support/check_not_empty.hpp>
#include <chronopool/detail/time/periodic_schedule.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_options.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

namespace chronopool {

namespace detail {

/// A calendar schedule's handler on an executor: one system timer wait per
/// instant (which follows steps of the wall clock), armed when the previous
/// run has ended.
template <class Executor, class Handler>
class cron_state final
    : public executor_schedule<cron_state<Executor, Handler>, Executor, std::chrono::system_clock> {
  using schedule_base = executor_schedule<cron_state, Executor, std::chrono::system_clock>;
  friend schedule_base;

 public:
  cron_state(const Executor& ex, Handler h, cron_cursor cursor, periodic_options o)
      : schedule_base(ex),
        handler_(std::move(h)),
        cursor_(std::move(cursor)),
        options_(std::move(o)) {}

  /// Waits for cursor_.current() on the executor's context, by the system clock.
  void arm() { this->wait_until(cursor_.current()); }

 private:
  // Runs on the executor; the next wait is armed only after the handler
  // returns, so runs never overlap. An exception from the handler never
  // leaves this function (see periodic_options::continue_after_error). It
  // never re-arms a pending wait (it has no controls), so every wait is
  // current and the generation is not needed.
  void on_tick(const sys_ns::error_code& ec, std::uint64_t /*generation*/) {
    if (ec || !this->active()) return;
    // The system timer completes no earlier than the instant by the system
    // clock, steps included.
    const sys_time instant = cursor_.current();
    // Lateness by the context's system clock, the one the instant is on;
    // run time by its steady (or manual) clock, which wall steps do not move.
    const sys_time started_at = this->schedule_system_now();
    const time_point started = this->schedule_now();
    bool stop = false;
    std::exception_ptr error;
    try {
      stop = invoke_cron(handler_, cron_fire{instant});
    } catch (...) {
      error = std::current_exception();
    }
    this->record_run(saturating_difference(time_point(started_at.time_since_epoch()),
                                           time_point(instant.time_since_epoch())),
                     saturating_difference(this->schedule_now(), started));
    if (!this->end_run(stop, std::move(error), options_)) return;
    // The context's system time: a manual clock's, on a context that has one.
    if (!cursor_.advance(this->schedule_system_now())) {
      this->stopped_.store(true);  // no instant left that system_clock can hold
      return;
    }
    arm();
  }

  Handler handler_;
  cron_cursor cursor_;
  periodic_options options_;
};

}  // namespace detail

/// Runs @p handler on @p ex at each instant @p schedule names, from the
/// first one after now. Each instant waits in the timer heap of @p ex's
/// context; the next one is armed only after the handler returns, so runs
/// never overlap, and @p misfire decides how many instants that passed in
/// the meantime still run (see cron_misfire; once, by default).
///
/// The handler is invocable with a cron_fire (the instant of the run) or
/// with nothing, and returns void, or periodic_control to end the schedule
/// from inside a run. An exception it throws never leaves the executor's
/// run(): it goes to options.error_handler and stops the schedule, or, with
/// options.continue_after_error, only goes to the handler. Throws
/// std::invalid_argument for an empty handler, for a max_runs or until,
/// or for a jitter or leeway other than 0. Each instant waits on a system
/// timer (see chronopool::system_timer), which follows the wall clock: a run
/// never starts before its instant by the system clock, and when the clock
/// is stepped forward past the instant waited for, that run starts at once
/// (@p misfire then decides how many of the instants passed meanwhile still
/// run).
template <class Executor, class Handler>
  requires detail::cron_callable<Handler>
periodic_handle schedule_cron(const Executor& ex, const cron_schedule& schedule, Handler&& handler,
                              periodic_options options = {}, cron_misfire misfire = {}) {
  using handler_type = std::decay_t<Handler>;
  static_assert(detail::cron_returns_ok_v<handler_type>,
                "chronopool: a calendar handler must return void or chronopool::periodic_control");
  constexpr const char* where = "schedule_cron";
  detail::validate_periodic(detail::duration(1), options, where);
  detail::validate_cron_options(options, where);
  detail::check_not_empty(handler, where);
  detail::cron_cursor cursor(schedule, misfire);
  if (!cursor.start(detail::context_system_now(ex)))
    throw std::invalid_argument("chronopool: schedule_cron: the schedule names no instant ahead");
  auto state = std::make_shared<detail::cron_state<Executor, handler_type>>(ex, std::forward<Handler>(handler),
                                                                           std::move(cursor), std::move(options));
  state->arm();
  return periodic_handle(std::move(state));
}

/// schedule_cron with a cron_schedule(@p expression, @p time_zone): throws
/// its std::invalid_argument for a bad expression or zone.
template <class Executor, class Handler>
  requires detail::cron_callable<Handler>
periodic_handle schedule_cron(const Executor& ex, std::string_view expression, std::string_view time_zone,
                              Handler&& handler, periodic_options options = {}, cron_misfire misfire = {}) {
  return schedule_cron(ex, cron_schedule(expression, time_zone), std::forward<Handler>(handler), std::move(options),
                       misfire);
}

}  // namespace chronopool

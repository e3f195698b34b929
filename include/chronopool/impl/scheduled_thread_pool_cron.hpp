// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_thread_pool::schedule_cron: a calendar schedule run as a pool
// task.
//
// The task is an ordinary fixed-delay periodic task whose callable is a
// pool_cron_run: each run calls the user's callable, then picks the next
// cron instant (cron_cursor::advance, the misfire rule) and sets the task's
// delay so that the task machinery's "end of run + delay" is that instant's
// steady deadline. So cancel, shutdown, periodic_control::stop, errors and
// the future behave as for every periodic task, and runs never overlap: the
// next instant is chosen when a run ends.
//
// The task follows steps of the system clock as schedule_at's wall-clock
// tasks do: the pool's registry (detail/pool/wall_clock_tasks.hpp) owns it
// and keeps the instant it is armed for (arm() tells it each new one), so a
// step re-times it while it waits, and its re-arm after a run re-measures
// the deadline.
#pragma once

#include <chronopool/detail/calendar/cron_run.hpp>
#include <chronopool/detail/pool/wall_clock_tasks.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace chronopool {
namespace detail {

/// The callable of a pool's cron task; see the file comment.
template <class F>
class pool_cron_run {
 public:
  struct state {
    cron_cursor cursor;
    periodic_options options;
    task_base* task = nullptr;  // the task that owns this callable
  };

  pool_cron_run(F f, std::unique_ptr<state> s) : f_(std::move(f)), state_(std::move(s)) {}

  void operator()() {
    state& s = *state_;
    const sys_time instant = s.cursor.current();
    // A run by hand (pending_task::run after shutdown_now(): no owner) is
    // for the instant it was queued for, at once. Otherwise a run before its
    // instant by the system clock means the clock was stepped back after the
    // pool thread's own check (wall_clock_tasks::hold_back): wait for the
    // instant on it, without a user run.
    const bool by_hand = s.task->owner() == nullptr;
    if (!by_hand && s.task->system_now() < instant) {
      arm(s, instant);
      return;
    }
    bool stop = false;
    std::exception_ptr error;
    try {
      stop = invoke_cron(f_, cron_fire{instant});
    } catch (...) {
      error = std::current_exception();
    }
    if (!stop && (!error || s.options.continue_after_error)) {
      if (const std::optional<sys_time> next = s.cursor.advance(s.task->system_now())) {
        arm(s, *next);
      } else {
        stop = true;  // no instant left that system_clock can hold
      }
    }
    if (stop) s.task->end_schedule_after_run();
    if (error) std::rethrow_exception(error);
  }

  /// Sets the task's next deadline to @p instant's steady deadline: the task
  /// machinery adds the delay to the end of the run, measured after this
  /// call, so the run comes no earlier than that deadline (at once when it
  /// has passed: a delay of 1 ns). The pool's wall-clock registry learns the
  /// instant (it re-measures the deadline when it re-queues the task, and
  /// after every step while it waits); a run by hand has no registry.
  /// Measured on the pool's clocks, which the task reads through its owner.
  static void arm(state& s, sys_time instant) noexcept {
    const time_point deadline = s.task->steady_deadline_for(instant);
    const duration delay = std::max(saturating_difference(deadline, s.task->now()), duration(1));
    s.task->set_periodic(delay, deadline, s.options);
    note_wall_instant(*s.task, instant);
  }

 private:
  F f_;
  std::unique_ptr<state> state_;
};

}  // namespace detail

template <class F>
  requires detail::cron_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_cron(const cron_schedule& schedule, F&& f,
                                                            periodic_options options, cron_misfire misfire) {
  using fn_type = std::decay_t<F>;
  static_assert(detail::cron_returns_ok_v<fn_type>,
                "chronopool: a calendar task must return void or chronopool::periodic_control");
  constexpr const char* where = "schedule_cron";
  check_periodic(duration(1), options, where);  // the periodic forms' errors: jitter, error_handler
  detail::validate_cron_options(options, where);
  detail::check_not_empty(f, where);
  options.missed_ticks = missed_tick_policy::burst;  // unused: cron_misfire decides
  using run = detail::pool_cron_run<fn_type>;
  auto st = std::make_unique<typename run::state>(
      typename run::state{detail::cron_cursor(schedule, misfire), std::move(options), nullptr});
  if (!st->cursor.start(system_now()))
    throw std::invalid_argument("chronopool: schedule_cron: the schedule names no instant ahead");
  typename run::state* const raw = st.get();
  detail::task_ptr t = detail::make_periodic_task(detail::task_kind::fixed_delay, run(std::forward<F>(f), std::move(st)));
  raw->task = t.get();
  t->set_calendar();
  run::arm(*raw, raw->cursor.current());
  enqueue_wall(t, raw->cursor.current(), where);
  return scheduled_future<void>(std::move(t));
}

template <class F>
  requires detail::cron_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_cron(std::string_view expression, std::string_view time_zone,
                                                            F&& f, periodic_options options, cron_misfire misfire) {
  return schedule_cron(cron_schedule(expression, time_zone), std::forward<F>(f), std::move(options), misfire);
}

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Out-of-line templates of scheduled_thread_pool: building tasks and
// handing them to the compiled part.
#pragma once

#include <type_traits>
#include <utility>

namespace chronopool {
namespace detail {

/// A system_clock time point of any duration as a sys_time, saturating (its
/// max() stays "never", see steady_deadline_for); NaN throws
/// std::invalid_argument naming @p what.
template <class Duration>
sys_time wall_instant(std::chrono::time_point<std::chrono::system_clock, Duration> t, const char* what) {
  const duration d = saturating_duration(t.time_since_epoch(), what);
  if (d == duration::max()) return sys_time::max();
  if (d == duration::min()) return sys_time::min();
  // Rounded up where the system clock is coarser: never before the instant.
  return sys_time(std::chrono::ceil<sys_time::duration>(d));
}

}  // namespace detail

template <class F>
detail::task_ptr scheduled_thread_pool::make_one_shot(F&& f, time_point deadline, const char* where) {
  detail::check_not_empty(f, where);
  detail::task_ptr t = detail::make_one_shot_task(std::forward<F>(f));
  t->set_deadline(deadline);
  return t;
}

template <class F>
  requires detail::task_callable<F>
void scheduled_thread_pool::execute(F&& f) {
  detail::task_ptr t = make_one_shot(std::forward<F>(f), now(), "execute");
  t->set_reports_errors(true);
  enqueue(t, "execute");
}

template <class Clock, class Duration>
auto scheduled_thread_pool::steady_deadline(std::chrono::time_point<Clock, Duration> deadline) const -> time_point {
  if constexpr (std::is_same_v<Clock, clock>) {
    return time_point(detail::saturating_duration(deadline.time_since_epoch(), "deadline"));
  } else {
    // Another clock: measure the distance once, now, and keep it on the pool's steady time.
    return detail::steady_deadline_of(deadline, "deadline", now());
  }
}

template <class Rep, class Period, class F>
  requires detail::task_callable<F>
void scheduled_thread_pool::execute_after(std::chrono::duration<Rep, Period> delay, F&& f) {
  const time_point deadline = detail::deadline_after(now(), detail::saturating_duration(delay, "delay"));
  detail::task_ptr t = make_one_shot(std::forward<F>(f), deadline, "execute_after");
  t->set_reports_errors(true);
  enqueue(t, "execute_after");
}

template <class Clock, class Duration, class F>
  requires detail::task_callable<F>
void scheduled_thread_pool::execute_at(std::chrono::time_point<Clock, Duration> deadline, F&& f) {
  if constexpr (std::is_same_v<Clock, std::chrono::system_clock>) {
    // Follows the wall clock: the registry re-times it after a step.
    const detail::sys_time instant = detail::wall_instant(deadline, "deadline");
    detail::task_ptr t = make_one_shot(std::forward<F>(f), time_point::max(), "execute_at");
    t->set_reports_errors(true);
    enqueue_wall(t, instant, "execute_at");
  } else {
    detail::task_ptr t = make_one_shot(std::forward<F>(f), steady_deadline(deadline), "execute_at");
    t->set_reports_errors(true);
    enqueue(t, "execute_at");
  }
}

template <class F>
  requires detail::task_callable<F>
auto scheduled_thread_pool::submit(F&& f) -> scheduled_future<detail::callable_result_t<F>> {
  detail::task_ptr t = make_one_shot(std::forward<F>(f), now(), "submit");
  enqueue(t, "submit");
  return scheduled_future<detail::callable_result_t<F>>(std::move(t));
}

template <class Rep, class Period, class F>
  requires detail::task_callable<F>
auto scheduled_thread_pool::schedule(std::chrono::duration<Rep, Period> delay, F&& f)
    -> scheduled_future<detail::callable_result_t<F>> {
  const time_point deadline = detail::deadline_after(now(), detail::saturating_duration(delay, "delay"));
  detail::task_ptr t = make_one_shot(std::forward<F>(f), deadline, "schedule");
  enqueue(t, "schedule");
  return scheduled_future<detail::callable_result_t<F>>(std::move(t));
}

template <class Clock, class Duration, class F>
  requires detail::task_callable<F>
auto scheduled_thread_pool::schedule_at(std::chrono::time_point<Clock, Duration> deadline, F&& f)
    -> scheduled_future<detail::callable_result_t<F>> {
  if constexpr (std::is_same_v<Clock, std::chrono::system_clock>) {
    // Follows the wall clock: the registry re-times it after a step.
    const detail::sys_time instant = detail::wall_instant(deadline, "deadline");
    detail::task_ptr t = make_one_shot(std::forward<F>(f), time_point::max(), "schedule_at");
    enqueue_wall(t, instant, "schedule_at");
    return scheduled_future<detail::callable_result_t<F>>(std::move(t));
  } else {
    detail::task_ptr t = make_one_shot(std::forward<F>(f), steady_deadline(deadline), "schedule_at");
    enqueue(t, "schedule_at");
    return scheduled_future<detail::callable_result_t<F>>(std::move(t));
  }
}

template <class Rep1, class Period1, class Rep2, class Period2, class F>
scheduled_future<void> scheduled_thread_pool::schedule_periodic(detail::task_kind kind,
                                                                std::chrono::duration<Rep1, Period1> initial_delay,
                                                                std::chrono::duration<Rep2, Period2> period, F&& f,
                                                                const periodic_options& options, const char* where) {
  const time_point first =
      detail::deadline_after(now(), detail::saturating_duration(initial_delay, "initial delay"));
  return schedule_periodic_from(kind, first, period, std::forward<F>(f), options, where);
}

template <class Rep1, class Period1, class Rep2, class Period2, class F>
  requires detail::task_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_at_fixed_rate(std::chrono::duration<Rep1, Period1> initial_delay,
                                                                     std::chrono::duration<Rep2, Period2> period,
                                                                     F&& f, periodic_options options) {
  return schedule_periodic(detail::task_kind::fixed_rate, initial_delay, period, std::forward<F>(f), options,
                           "schedule_at_fixed_rate");
}

template <class Rep1, class Period1, class Rep2, class Period2, class F>
  requires detail::task_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_with_fixed_delay(
    std::chrono::duration<Rep1, Period1> initial_delay, std::chrono::duration<Rep2, Period2> delay, F&& f,
    periodic_options options) {
  return schedule_periodic(detail::task_kind::fixed_delay, initial_delay, delay, std::forward<F>(f), options,
                           "schedule_with_fixed_delay");
}

// Every periodic task is built here from its first ideal deadline: the
// duration overloads compute it from now, the time-point overloads pass it
// unchanged, so the schedule is first + k * period exactly.
template <class Rep, class Period, class F>
scheduled_future<void> scheduled_thread_pool::schedule_periodic_from(detail::task_kind kind, time_point first,
                                                                     std::chrono::duration<Rep, Period> period,
                                                                     F&& f, const periodic_options& options,
                                                                     const char* where) {
  static_assert(std::is_void_v<detail::callable_result_t<F>> ||
                    std::is_same_v<detail::callable_result_t<F>, periodic_control>,
                "chronopool: a periodic task must return void or chronopool::periodic_control");
  const duration p = detail::saturating_duration(period, "period");
  check_periodic(p, options, where);
  detail::check_not_empty(f, where);
  detail::task_ptr t = detail::make_periodic_task(kind, std::forward<F>(f));
  t->set_periodic(p, first, options);
  enqueue(t, where);
  return scheduled_future<void>(std::move(t));
}

template <class Duration, class Rep, class Period, class F>
  requires detail::task_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_at_fixed_rate(std::chrono::time_point<clock, Duration> first,
                                                                     std::chrono::duration<Rep, Period> period,
                                                                     F&& f, periodic_options options) {
  return schedule_periodic_from(detail::task_kind::fixed_rate, to_steady(first, "first run"), period,
                                std::forward<F>(f), options, "schedule_at_fixed_rate");
}

template <class Duration, class Rep, class Period, class F>
  requires detail::task_callable<F>
scheduled_future<void> scheduled_thread_pool::schedule_with_fixed_delay(std::chrono::time_point<clock, Duration> first,
                                                                        std::chrono::duration<Rep, Period> delay,
                                                                        F&& f, periodic_options options) {
  return schedule_periodic_from(detail::task_kind::fixed_delay, to_steady(first, "first run"), delay,
                                std::forward<F>(f), options, "schedule_with_fixed_delay");
}

template <asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
auto scheduled_thread_pool::async_wait_for_termination(CompletionToken&& token) {
  return asio_ns::async_initiate<CompletionToken, void(sys_ns::error_code)>(
      detail::initiate_pool_wait<executor_type>(core_, get_executor(), detail::pool_wait_kind::termination, {},
                                                nullptr),
      token);
}

template <asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
auto scheduled_thread_pool::async_join(CompletionToken&& token) {
  return asio_ns::async_initiate<CompletionToken, void(sys_ns::error_code)>(
      detail::initiate_pool_wait<executor_type>(core_, get_executor(), detail::pool_wait_kind::termination, {},
                                                &detail::shutdown_core),
      token);
}

template <class Clock, class Duration,
          asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
auto scheduled_thread_pool::async_wait_quiet(std::chrono::time_point<Clock, Duration> horizon,
                                             CompletionToken&& token) {
  return asio_ns::async_initiate<CompletionToken, void(sys_ns::error_code)>(
      detail::initiate_pool_wait<executor_type>(core_, get_executor(), detail::pool_wait_kind::quiet,
                                                to_steady(horizon, "horizon"), nullptr),
      token);
}

}  // namespace chronopool

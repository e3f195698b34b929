// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Sleeping without a timer object: async_sleep and async_sleep_until for any
/// completion token, and sleep_for and sleep_until for coroutines.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/timer_service.hpp>

#include <chronopool/detail/config/asio.hpp>
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/awaitable.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#else
#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#endif

#include <chrono>
#include <utility>

namespace chronopool {

namespace detail {

template <class Executor>
class initiate_async_sleep {
 public:
  using executor_type = Executor;
  explicit initiate_async_sleep(const Executor& ex) : ex_(ex) {}
  executor_type get_executor() const noexcept { return ex_; }

  template <class Handler>
  void operator()(Handler&& handler, time_point deadline) const {
    timer_service_of(ex_).async_wait_at(deadline, std::forward<Handler>(handler), ex_);
  }

 private:
  Executor ex_;
};

}  // namespace detail

/// Waits @p duration on @p ex's context, like a steady_timer that is armed,
/// waited on once, and destroyed — but with one allocation and no timer object.
///
/// @par Completion Signature
/// @code void(sys_ns::error_code) @endcode
///
/// @par Per-Operation Cancellation
/// terminal, partial and total cancellation complete it with operation_aborted.
///
/// Saturating: a duration too large to represent sleeps forever; a negative one
/// completes promptly (never inside this call).
template <class Executor, class Rep, class Period,
          class Token = asio_ns::default_completion_token_t<Executor>>
  requires(asio_ns::execution::is_executor<Executor>::value || asio_ns::is_executor<Executor>::value)
auto async_sleep(const Executor& ex, std::chrono::duration<Rep, Period> duration, Token&& token = Token()) {
  const detail::time_point deadline =
      detail::deadline_after(detail::context_now(ex), detail::saturating_duration(duration, "sleep duration"));
  return asio_ns::async_initiate<Token, void(sys_ns::error_code)>(
      detail::initiate_async_sleep<Executor>(ex), token, deadline);
}

/// async_sleep() with a leeway: the deadline, now + @p duration, moves up to
/// the end of its @p leeway-wide slot (see basic_scheduled_timer::expires_at
/// with a leeway), so sleeps that end within one slot share a wake-up. It
/// completes no earlier than @p duration and less than @p leeway after. A
/// negative leeway throws std::invalid_argument; zero is exact.
template <class Executor, class Rep1, class Period1, class Rep2, class Period2,
          class Token = asio_ns::default_completion_token_t<Executor>>
  requires(asio_ns::execution::is_executor<Executor>::value || asio_ns::is_executor<Executor>::value)
auto async_sleep(const Executor& ex, std::chrono::duration<Rep1, Period1> duration,
                 std::chrono::duration<Rep2, Period2> leeway, Token&& token = Token()) {
  const detail::duration slot = detail::checked_leeway(leeway);
  const detail::time_point deadline = detail::round_up_to_slot(
      detail::deadline_after(detail::context_now(ex), detail::saturating_duration(duration, "sleep duration")), slot);
  return asio_ns::async_initiate<Token, void(sys_ns::error_code)>(
      detail::initiate_async_sleep<Executor>(ex), token, deadline);
}

/// Waits until @p deadline on @p ex's context, like a steady_timer armed with
/// expires_at(deadline) and waited on once. Only steady_clock time points:
/// wall-clock waits are not offered. A deadline already past completes
/// promptly (never inside this call); one too far to represent never comes.
///
/// @par Completion Signature
/// @code void(sys_ns::error_code) @endcode
///
/// @par Per-Operation Cancellation
/// terminal, partial and total cancellation complete it with operation_aborted.
template <class Executor, class Duration, class Token = asio_ns::default_completion_token_t<Executor>>
  requires(asio_ns::execution::is_executor<Executor>::value || asio_ns::is_executor<Executor>::value)
auto async_sleep_until(const Executor& ex, std::chrono::time_point<std::chrono::steady_clock, Duration> deadline,
                       Token&& token = Token()) {
  // The deadline is taken as given (saturated into the clock's duration),
  // never re-derived from now.
  const detail::time_point at(detail::saturating_duration(deadline.time_since_epoch(), "sleep deadline"));
  return asio_ns::async_initiate<Token, void(sys_ns::error_code)>(
      detail::initiate_async_sleep<Executor>(ex), token, at);
}

/// Inside an asio::awaitable: `co_await chronopool::sleep_for(50ms);`. Throws
/// sys_ns::system_error (operation_aborted) when the coroutine's
/// cancellation slot cancels it, e.g. as the losing side of `||`.
template <class Rep, class Period>
asio_ns::awaitable<void> sleep_for(std::chrono::duration<Rep, Period> duration) {
  auto ex = co_await asio_ns::this_coro::executor;
  co_await async_sleep(ex, duration, asio_ns::use_awaitable);
}

/// sleep_for() with a leeway: `co_await chronopool::sleep_for(1s, 10ms);`
/// resumes at the end of the 10 ms slot that holds now + 1 s, with every
/// other sleep and timer due in that slot.
template <class Rep1, class Period1, class Rep2, class Period2>
asio_ns::awaitable<void> sleep_for(std::chrono::duration<Rep1, Period1> duration,
                                       std::chrono::duration<Rep2, Period2> leeway) {
  auto ex = co_await asio_ns::this_coro::executor;
  co_await async_sleep(ex, duration, leeway, asio_ns::use_awaitable);
}

/// Inside an asio::awaitable: `co_await chronopool::sleep_until(t);` resumes
/// at the steady_clock instant @p deadline (at once, though never inline,
/// when it has passed). Throws sys_ns::system_error
/// (operation_aborted) when the coroutine's cancellation slot cancels it.
template <class Duration>
asio_ns::awaitable<void> sleep_until(std::chrono::time_point<std::chrono::steady_clock, Duration> deadline) {
  auto ex = co_await asio_ns::this_coro::executor;
  co_await async_sleep_until(ex, deadline, asio_ns::use_awaitable);
}

}  // namespace chronopool

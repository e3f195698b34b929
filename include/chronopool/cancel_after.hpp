// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// cancel_after: a completion token adapter that cancels an operation which
/// has not completed within a timeout (Boost 1.81 has no asio::cancel_after;
/// this mirrors the one Asio 1.31 / Boost 1.86 added, on chronopool timers).
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/steady_timer.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <type_traits>
#include <utility>

namespace chronopool {

/// The completion token cancel_after(timeout, token) returns: @p Token,
/// adapted so that the operation is cancelled when it has not completed
/// within the timeout. @p Timer is the timer type the timeout runs on.
template <class Token, class Timer = steady_timer>
class cancel_after_t {
 public:
  /// Adapts @p token; @p callers_timer, when not null, is the caller's timer to use.
  template <class T>
  cancel_after_t(T&& token, detail::duration timeout, asio_ns::cancellation_type_t type,
                 Timer* callers_timer = nullptr)
      : token_(std::forward<T>(token)), timeout_(timeout), type_(type), timer_(callers_timer) {}

  Token token_;                              ///< the adapted token
  detail::duration timeout_;                 ///< how long the operation may take
  asio_ns::cancellation_type_t type_;    ///< what the expiry emits
  Timer* timer_;                             ///< the caller's timer, or null for one of its own
};

/// The partial adapter cancel_after(timeout) returns: applied to a token
/// (`cancel_after(2s)(token)`) it gives a cancel_after_t; used as a token
/// itself it adapts the operation's default completion token, or
/// asio_ns::deferred when the I/O executor names none (so that
/// `co_await op(..., cancel_after(2s))` works inside an asio::awaitable).
template <class Timer = steady_timer>
class partial_cancel_after {
 public:
  /// The timeout and the cancellation type; @p callers_timer, when not null,
  /// is the caller's timer to use.
  partial_cancel_after(detail::duration timeout, asio_ns::cancellation_type_t type, Timer* callers_timer = nullptr)
      : timeout_(timeout), type_(type), timer_(callers_timer) {}

  /// Adapts @p token.
  template <class Token>
  cancel_after_t<std::decay_t<Token>, Timer> operator()(Token&& token) const {
    return cancel_after_t<std::decay_t<Token>, Timer>(std::forward<Token>(token), timeout_, type_, timer_);
  }

  detail::duration timeout_;               ///< how long the operation may take
  asio_ns::cancellation_type_t type_;  ///< what the expiry emits
  Timer* timer_;                           ///< the caller's timer, or null for one of its own
};

/// A partial adapter: use it as the completion token of an operation whose
/// default token should be kept (`co_await s.async_read_some(b,
/// chronopool::cancel_after(2s))`), or call it with a token. When the
/// operation has not completed @p timeout after it was initiated, a
/// cancellation of @p type (terminal by default) is emitted on its
/// cancellation slot. A timeout too large to represent never expires.
///
/// The timer is a chronopool::steady_timer on the operation's I/O executor
/// (the handler's associated executor when the operation has none, the
/// system executor when neither has one); its expiry runs on the handler's
/// associated executor. It is cancelled when
/// the operation completes, so it keeps no run() going after that and never
/// cancels a later operation. The handler's own cancellation slot keeps
/// working: a cancellation emitted on it is forwarded to the operation.
template <class Rep, class Period>
partial_cancel_after<> cancel_after(std::chrono::duration<Rep, Period> timeout,
                                    asio_ns::cancellation_type_t type = asio_ns::cancellation_type::terminal) {
  return partial_cancel_after<>(detail::saturating_duration(timeout, "timeout"), type);
}

/// Adapts @p token: the operation is cancelled (terminal) when it has not
/// completed @p timeout after it was initiated. See the partial form.
template <class Rep, class Period, class Token>
  requires(!std::is_convertible_v<Token, asio_ns::cancellation_type_t>)
cancel_after_t<std::decay_t<Token>> cancel_after(std::chrono::duration<Rep, Period> timeout, Token&& token) {
  return cancel_after_t<std::decay_t<Token>>(std::forward<Token>(token),
                                             detail::saturating_duration(timeout, "timeout"),
                                             asio_ns::cancellation_type::terminal);
}

/// Adapts @p token: the operation is cancelled with @p type (partial, total
/// or terminal) when it has not completed @p timeout after it was initiated.
template <class Rep, class Period, class Token>
cancel_after_t<std::decay_t<Token>> cancel_after(std::chrono::duration<Rep, Period> timeout,
                                                 asio_ns::cancellation_type_t type, Token&& token) {
  return cancel_after_t<std::decay_t<Token>>(std::forward<Token>(token),
                                             detail::saturating_duration(timeout, "timeout"), type);
}

/// A partial adapter that runs the timeout on the caller's @p timer (it is
/// re-armed at each initiation, and must outlive the operation and not be
/// used for anything else meanwhile).
template <class Clock, class WaitTraits, class Executor, class Rep, class Period>
partial_cancel_after<basic_scheduled_timer<Clock, WaitTraits, Executor>> cancel_after(
    basic_scheduled_timer<Clock, WaitTraits, Executor>& timer, std::chrono::duration<Rep, Period> timeout,
    asio_ns::cancellation_type_t type = asio_ns::cancellation_type::terminal) {
  return partial_cancel_after<basic_scheduled_timer<Clock, WaitTraits, Executor>>(
      detail::saturating_duration(timeout, "timeout"), type, &timer);
}

/// Adapts @p token, running the timeout on the caller's @p timer (see the
/// partial form with a timer); the cancellation is terminal.
template <class Clock, class WaitTraits, class Executor, class Rep, class Period, class Token>
  requires(!std::is_convertible_v<Token, asio_ns::cancellation_type_t>)
cancel_after_t<std::decay_t<Token>, basic_scheduled_timer<Clock, WaitTraits, Executor>> cancel_after(
    basic_scheduled_timer<Clock, WaitTraits, Executor>& timer, std::chrono::duration<Rep, Period> timeout,
    Token&& token) {
  return cancel_after_t<std::decay_t<Token>, basic_scheduled_timer<Clock, WaitTraits, Executor>>(
      std::forward<Token>(token), detail::saturating_duration(timeout, "timeout"),
      asio_ns::cancellation_type::terminal, &timer);
}

/// Adapts @p token, running the timeout on the caller's @p timer; the
/// cancellation is of @p type.
template <class Clock, class WaitTraits, class Executor, class Rep, class Period, class Token>
cancel_after_t<std::decay_t<Token>, basic_scheduled_timer<Clock, WaitTraits, Executor>> cancel_after(
    basic_scheduled_timer<Clock, WaitTraits, Executor>& timer, std::chrono::duration<Rep, Period> timeout,
    asio_ns::cancellation_type_t type, Token&& token) {
  return cancel_after_t<std::decay_t<Token>, basic_scheduled_timer<Clock, WaitTraits, Executor>>(
      std::forward<Token>(token), detail::saturating_duration(timeout, "timeout"), type, &timer);
}

}  // namespace chronopool

#include <chronopool/impl/cancel_after.hpp>

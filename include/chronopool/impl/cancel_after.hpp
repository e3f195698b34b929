// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// cancel_after's machinery: the state an adapted operation shares with its
// timer wait, the wrapped handler, the initiation that arms the timer, and
// Asio's async_result and associator specialisations for the tokens.
// Included by chronopool/cancel_after.hpp.
#pragma once

#include <chronopool/cancel_after.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool {

namespace detail {

/// What one cancel_after'd operation shares with its timer wait: the timer
/// (owned, or the caller's), the signal whose slot the operation sees, and
/// whether the operation has completed. The timer wait and the outer slot's
/// handler hold it, never the operation's handler: an expiring timer can
/// only emit a signal, not keep the handler alive.
template <class Timer>
class cancel_after_state {
 public:
  template <class Executor>
  cancel_after_state(const Executor& ex, asio_ns::cancellation_type_t type)
      : owned_(std::in_place, ex), timer_(&*owned_), type_(type) {}
  cancel_after_state(Timer& timer, asio_ns::cancellation_type_t type) : timer_(&timer), type_(type) {}

  Timer& timer() noexcept { return *timer_; }
  asio_ns::cancellation_slot slot() noexcept { return signal_.slot(); }

  /// The timer expired (or the outer slot fired): cancel the operation with
  /// @p type, unless it has already completed.
  void emit(asio_ns::cancellation_type_t type) {
    if (!done_.load(std::memory_order_acquire)) signal_.emit(type);
  }
  void timer_expired(const sys_ns::error_code& ec) {
    if (!ec) emit(type_);
  }

  /// The operation completed: no later emission, the timer's wait ends now
  /// (so it keeps no run() going), and the outer slot lets go of this state.
  void finish(asio_ns::cancellation_slot outer) noexcept {
    done_.store(true, std::memory_order_release);
    try {
      timer_->cancel();
    } catch (...) {
      // Only a mutex that cannot be locked throws here; the wait then ends
      // at its expiry and finds done_ set.
    }
    if (outer.is_connected()) outer.clear();
  }

 private:
  std::optional<Timer> owned_;
  Timer* timer_;
  asio_ns::cancellation_type_t type_;
  asio_ns::cancellation_signal signal_;
  std::atomic<bool> done_{false};
};

/// The operation's completion handler, wrapped: it presents the state's slot
/// as its cancellation slot, forwards every other associated property
/// (executor, allocator) to the wrapped handler, and ends the timer before
/// the wrapped handler runs.
template <class Handler, class State>
class cancel_after_handler {
 public:
  using cancellation_slot_type = asio_ns::cancellation_slot;

  cancel_after_handler(Handler h, std::shared_ptr<State> state, asio_ns::cancellation_slot outer)
      : handler_(std::move(h)), state_(std::move(state)), outer_(outer) {}

  cancellation_slot_type get_cancellation_slot() const noexcept { return state_->slot(); }

  template <class... Args>
  void operator()(Args&&... args) {
    std::shared_ptr<State> state = std::move(state_);
    state->finish(outer_);
    state.reset();
    std::move(handler_)(std::forward<Args>(args)...);
  }

  const Handler& inner() const noexcept { return handler_; }

 private:
  Handler handler_;
  std::shared_ptr<State> state_;
  asio_ns::cancellation_slot outer_;
};

/// Where an initiation's timer lives: on the operation's I/O executor when
/// the initiation has one, else on the handler's associated executor.
template <class Initiation, class Handler>
auto cancel_after_io_executor(const Initiation& init, const Handler& h) {
  return asio_ns::get_associated_executor(init, asio_ns::get_associated_executor(h));
}

/// Wraps an operation's initiation: arms the timer, wraps the handler, then
/// initiates the operation.
template <class Initiation, class Timer>
class initiate_cancel_after {
 public:
  /// With an owned timer (timer_ref null), armed for @p timeout.
  initiate_cancel_after(Initiation init, duration timeout, asio_ns::cancellation_type_t type, Timer* timer_ref)
      : init_(std::move(init)), timeout_(timeout), type_(type), timer_ref_(timer_ref) {}

  template <class Handler, class... Args>
  void operator()(Handler&& handler, Args&&... args) {
    using handler_t = std::decay_t<Handler>;
    using state_t = cancel_after_state<Timer>;
    auto io_ex = cancel_after_io_executor(init_, handler);
    auto alloc = asio_ns::get_associated_allocator(handler);
    std::shared_ptr<state_t> state =
        timer_ref_ ? std::allocate_shared<state_t>(alloc, *timer_ref_, type_)
                   : std::allocate_shared<state_t>(alloc, typename Timer::executor_type(io_ex), type_);

    // The user's own cancellation still reaches the operation: the outer
    // slot forwards to the state's signal, with the outer type.
    asio_ns::cancellation_slot outer = asio_ns::get_associated_cancellation_slot(handler);
    if (outer.is_connected()) {
      outer.assign([state](asio_ns::cancellation_type_t t) { state->emit(t); });
    }

    // The timer's completion runs where the operation's handler runs, so the
    // emission is ordered with the operation as its completion is.
    state->timer().expires_after(timeout_);
    state->timer().async_wait(asio_ns::bind_executor(
        asio_ns::get_associated_executor(handler, io_ex),
        [state](const sys_ns::error_code& ec) { state->timer_expired(ec); }));

    try {
      std::move(init_)(cancel_after_handler<handler_t, state_t>(std::forward<Handler>(handler), state, outer),
                       std::forward<Args>(args)...);
    } catch (...) {
      // The operation was never started: neither may its timer run on.
      state->finish(outer);
      throw;
    }
  }

 private:
  Initiation init_;
  duration timeout_;
  asio_ns::cancellation_type_t type_;
  Timer* timer_ref_;
};

/// The token used by a partial adapter: the operation's default completion
/// token (that of its I/O executor), else deferred, as later Asio does.
template <class Initiation>
using cancel_after_default_token_t =
    std::conditional_t<std::is_void_v<asio_ns::default_completion_token_t<
                           asio_ns::associated_executor_t<std::decay_t<Initiation>>>>,
                       detail::asio_compat::deferred_t,
                       asio_ns::default_completion_token_t<
                           asio_ns::associated_executor_t<std::decay_t<Initiation>>>>;

}  // namespace detail

}  // namespace chronopool

CHRONOPOOL_ASIO_NAMESPACE_BEGIN

// cancel_after_t<Token> as a completion token: initiate the operation with
// Token, through an initiation that arms the timer and wraps the handler.
template <class Token, class Timer, class... Signatures>
struct async_result<chronopool::cancel_after_t<Token, Timer>, Signatures...> {
  template <class Initiation, class RawToken, class... Args>
  static auto initiate(Initiation&& init, RawToken&& token, Args&&... args)
      -> decltype(async_initiate<std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>, const Token,
                                                    Token>,
                                 Signatures...>(
          std::declval<chronopool::detail::initiate_cancel_after<std::decay_t<Initiation>, Timer>>(),
          std::declval<std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>, const Token&,
                                          Token&>>(),
          std::declval<Args>()...)) {
    using token_t = std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>, const Token, Token>;
    return async_initiate<token_t, Signatures...>(
        chronopool::detail::initiate_cancel_after<std::decay_t<Initiation>, Timer>(
            std::forward<Initiation>(init), token.timeout_, token.type_, token.timer_),
        token.token_, std::forward<Args>(args)...);
  }
};

// partial_cancel_after as a completion token: adapt the operation's default
// token (deferred when it has none).
template <class Timer, class... Signatures>
struct async_result<chronopool::partial_cancel_after<Timer>, Signatures...> {
  template <class Initiation, class RawToken, class... Args>
  static auto initiate(Initiation&& init, RawToken&& partial, Args&&... args)
      -> decltype(async_initiate<chronopool::detail::cancel_after_default_token_t<Initiation>, Signatures...>(
          std::declval<chronopool::detail::initiate_cancel_after<std::decay_t<Initiation>, Timer>>(),
          std::declval<chronopool::detail::cancel_after_default_token_t<Initiation>&>(),
          std::declval<Args>()...)) {
    chronopool::detail::cancel_after_default_token_t<Initiation> token{};
    return async_initiate<chronopool::detail::cancel_after_default_token_t<Initiation>, Signatures...>(
        chronopool::detail::initiate_cancel_after<std::decay_t<Initiation>, Timer>(
            std::forward<Initiation>(init), partial.timeout_, partial.type_, partial.timer_),
        token, std::forward<Args>(args)...);
  }
};

// The wrapped handler keeps the wrapped one's executor and allocator (its
// cancellation slot is the member one: the state's).
template <template <class, class> class Associator, class Handler, class State, class DefaultCandidate>
struct associator<Associator, chronopool::detail::cancel_after_handler<Handler, State>, DefaultCandidate> {
  using type = typename Associator<Handler, DefaultCandidate>::type;

  static type get(const chronopool::detail::cancel_after_handler<Handler, State>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.inner());
  }
  static auto get(const chronopool::detail::cancel_after_handler<Handler, State>& h,
                  const DefaultCandidate& c) noexcept -> decltype(Associator<Handler, DefaultCandidate>::get(h.inner(), c)) {
    return Associator<Handler, DefaultCandidate>::get(h.inner(), c);
  }
};

CHRONOPOOL_ASIO_NAMESPACE_END

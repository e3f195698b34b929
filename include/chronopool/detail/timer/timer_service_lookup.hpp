// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Finding a context's timer_service without the service registry's lock on
// every timer made.
//
// Asio's use_service<S>(ctx) takes the registry's mutex and walks its list
// of services; constructing a timer or starting a sleep does it each time.
// Each thread remembers the last context it looked up and that context's
// service. The memo holds while no timer_service has been destroyed since
// it was taken: a service lives as long as its context, so a context
// destroyed after the memo bumps timer_services_destroyed first, and a
// new context that reuses its address can never match a stale memo.
#pragma once

#include <chronopool/detail/config/asio.hpp>
#include <chronopool/timer_service.hpp>

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace chronopool::detail {

/// Counts timer_service destructions (bumped first thing in ~timer_service).
extern std::atomic<std::uint64_t> timer_services_destroyed;

/// One thread's last lookup.
struct timer_service_memo {
  const asio_ns::execution_context* context = nullptr;
  timer_service* service = nullptr;
  std::uint64_t destroyed = 0;  ///< timer_services_destroyed when it was taken
};

inline thread_local timer_service_memo last_timer_service_lookup;

/// use_service<timer_service>(@p ctx), from the thread's memo when it holds.
inline timer_service& timer_service_of(asio_ns::execution_context& ctx) {
  timer_service_memo& memo = last_timer_service_lookup;
  const std::uint64_t destroyed = timer_services_destroyed.load(std::memory_order_acquire);
  if (memo.context == &ctx && memo.destroyed == destroyed) [[likely]]
    return *memo.service;
  timer_service& service = asio_ns::use_service<timer_service>(ctx);
  memo = {&ctx, &service, destroyed};
  return service;
}

/// The timer_service of @p ex's context.
template <class Executor>
  requires(!std::is_convertible_v<const Executor&, const asio_ns::execution_context&>)
timer_service& timer_service_of(const Executor& ex) {
  if constexpr (asio_ns::execution::is_executor<Executor>::value) {
    return timer_service_of(asio_ns::query(ex, asio_ns::execution::context));
  } else {
    return timer_service_of(ex.context());
  }
}

}  // namespace chronopool::detail

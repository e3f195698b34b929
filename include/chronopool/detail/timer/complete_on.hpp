// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Handing a function to an executor, without the type-erased detour when the
// executor is a plain io_context or scheduled_thread_pool in disguise.
#pragma once

#include <chronopool/scheduled_thread_pool.hpp>

#include <chronopool/detail/config/asio.hpp>
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/strand.hpp>
#include <asio/thread_pool.hpp>
#else
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#endif

#include <type_traits>
#include <utility>

namespace chronopool::detail {

template <class Plain, class Ex, class F>
bool complete_on_target(const Ex& ex, F& f, bool may_run_here);

/// post() (or, with @p may_run_here, dispatch()) of @p f to @p ex. Through a
/// type-erased any_io_executor, Asio wraps the function twice (an
/// executor_function, then the io_context's own operation), two allocations
/// and several type-erased executor copies per call. When the target is a
/// plain io_context or scheduled_thread_pool executor, the call goes to it
/// directly: one operation, the same semantics.
template <class Ex, class F>
void complete_on(const Ex& ex, F&& f, bool may_run_here) {
  if constexpr (std::is_same_v<Ex, asio_ns::any_io_executor>) {
    if (complete_on_target<asio_ns::io_context::executor_type>(ex, f, may_run_here)) return;
    if (complete_on_target<scheduled_thread_pool::executor_type>(ex, f, may_run_here)) return;
  }
  if (may_run_here) {
    asio_ns::dispatch(ex, std::forward<F>(f));
  } else {
    asio_ns::post(ex, std::forward<F>(f));
  }
}

/// The executor type of @p Plain with outstanding_work.tracked.
template <class Plain>
using tracked_executor_t = std::decay_t<decltype(asio_ns::prefer(std::declval<const Plain&>(),
                                                                     asio_ns::execution::outstanding_work.tracked))>;

/// complete_on() for @p ex's target when it is @p Plain or its tracked form;
/// false when it is neither.
template <class Plain, class Ex, class F>
bool complete_on_target(const Ex& ex, F& f, bool may_run_here) {
  if (const auto* t = asio_compat::target<tracked_executor_t<Plain>>(ex)) {
    complete_on(*t, std::move(f), may_run_here);
    return true;
  }
  if (const auto* p = asio_compat::target<Plain>(ex)) {
    complete_on(*p, std::move(f), may_run_here);
    return true;
  }
  return false;
}

/// The execution context @p ex's target belongs to when it is a plain
/// io_context or scheduled_thread_pool executor (tracked or not), else null:
/// a wait whose handler runs there may be completed by that context's own
/// threads directly, with no hop through an executor.
template <class Ex>
const asio_ns::execution_context* plain_context_of(const Ex& ex) noexcept {
  using io = asio_ns::io_context::executor_type;
  using pool = scheduled_thread_pool::executor_type;
  if constexpr (std::is_same_v<Ex, asio_ns::any_io_executor>) {
    if (const auto* e = asio_compat::target<io>(ex)) return &e->context();
    if (const auto* e = asio_compat::target<tracked_executor_t<io>>(ex)) return &e->context();
    if (const auto* e = asio_compat::target<pool>(ex)) return &e->context();
    if (const auto* e = asio_compat::target<tracked_executor_t<pool>>(ex)) return &e->context();
    return nullptr;
  } else if constexpr (std::is_same_v<Ex, io> || std::is_same_v<Ex, tracked_executor_t<io>> ||
                       std::is_same_v<Ex, pool> || std::is_same_v<Ex, tracked_executor_t<pool>>) {
    return &ex.context();
  } else {
    return nullptr;
  }
}

/// The executor of the context behind @p ex, without the wrappers a timer's
/// I/O executor may have (tracked work, a strand): where a timer service
/// posts its context's completions and arms its native wake-up. A context of
/// a kind not known here keeps @p ex as it is.
template <class Ex>
asio_ns::any_io_executor context_executor_of(const Ex& ex) {
  using io = asio_ns::io_context::executor_type;
  using pool = scheduled_thread_pool::executor_type;
  using tp = asio_ns::thread_pool::executor_type;
  if constexpr (std::is_same_v<Ex, asio_ns::any_io_executor>) {
    if (const auto* e = asio_compat::target<io>(ex)) return e->context().get_executor();
    if (const auto* e = asio_compat::target<tracked_executor_t<io>>(ex)) return e->context().get_executor();
    if (const auto* e = asio_compat::target<asio_ns::strand<io>>(ex)) return context_executor_of(e->get_inner_executor());
    if (const auto* e = asio_compat::target<pool>(ex)) return e->context().get_executor();
    if (const auto* e = asio_compat::target<tp>(ex)) return e->context().get_executor();
    return ex;
  } else if constexpr (std::is_same_v<Ex, io> || std::is_same_v<Ex, tracked_executor_t<io>> ||
                       std::is_same_v<Ex, pool> || std::is_same_v<Ex, tracked_executor_t<pool>> ||
                       std::is_same_v<Ex, tp>) {
    return ex.context().get_executor();
  } else if constexpr (requires { ex.get_inner_executor(); }) {
    return context_executor_of(ex.get_inner_executor());  // a strand
  } else {
    return asio_ns::any_io_executor(ex);
  }
}

}  // namespace chronopool::detail

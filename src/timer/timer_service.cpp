// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// timer_service's user API, over timer_service_base (timer_service_base.cpp), and
// its statistics' one-line text.
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/detail/support/human_duration.hpp>

#include <fmt/format.h>

#include <string>

namespace chronopool {

// Defined once, here: an id defined inline in a header can be duplicated
// across shared objects, splitting the service in two.
asio_ns::execution_context::id timer_service::id;

timer_service::timer_service(asio_ns::execution_context& ctx) : detail::timer_service_base(ctx) {}

namespace detail {
std::atomic<std::uint64_t> timer_services_destroyed{0};
}  // namespace detail

// Bumped before anything of the service goes: a thread's lookup memo
// (timer_service_lookup.hpp) for this context is stale from here on.
timer_service::~timer_service() { detail::timer_services_destroyed.fetch_add(1, std::memory_order_release); }

void timer_service::use_pool(scheduled_thread_pool& pool) { route_to_pool(pool, pool.core_); }

bool timer_service::driven_by_pool() const noexcept { return routed_to_pool(); }

void timer_service::set_poll_window(std::chrono::nanoseconds window) { set_window(window); }

void timer_service::set_wakeup_slack(std::chrono::nanoseconds slack) { set_slack(slack); }

std::size_t timer_service::pending_waits() const { return pending(); }

timer_service_stats timer_service::stats() const {
  timer_service_stats s;
  add_shard_stats(s);
  return s;
}

timer_service_stats timer_stats(asio_ns::execution_context& ctx) {
  return asio_ns::use_service<timer_service>(ctx).stats();
}

std::string to_string(const timer_service_stats& s) {
  const latency_histogram& late = s.lateness_histogram;
  return fmt::format("pending={} completed={} cancelled={} lateness(n={}) p50={} p99={} max={}", s.pending_waits,
                     s.completed_waits, s.cancelled_waits, late.count(), detail::human_duration(late.quantile(0.5)),
                     detail::human_duration(late.quantile(0.99)), detail::human_duration(late.max()));
}

void set_poll_window(asio_ns::execution_context& ctx, std::chrono::nanoseconds window) {
  asio_ns::use_service<timer_service>(ctx).set_poll_window(window);
}

void set_wakeup_slack(asio_ns::execution_context& ctx, std::chrono::nanoseconds slack) {
  asio_ns::use_service<timer_service>(ctx).set_wakeup_slack(slack);
}

void use_pool(asio_ns::execution_context& ctx, scheduled_thread_pool& pool) {
  asio_ns::use_service<timer_service>(ctx).use_pool(pool);
}

}  // namespace chronopool

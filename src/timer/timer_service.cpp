// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The timer service: which shard keeps a context's waits and who drives it.
// See timer_service.hpp for which threads run what.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/detail/pool/pool_core.hpp>


#include <algorithm>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace chronopool {

// Defined once, here: an id defined inline in a header can be duplicated
// across shared objects, splitting the service in two.
boost::asio::execution_context::id timer_service::id;

namespace {

// One shard per core, so threads that each run their own timers rarely
// share a lock; more than 16 would only spread a context's waits thinner.
std::size_t shard_count() noexcept {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(cores, 1, 16);
}

/// A diagnostic of the whole service: @p of summed over its shards (each under its own lock).
template <class R>
R sum_over(const std::vector<std::shared_ptr<detail::timer_shard>>& shards, R (detail::timer_shard::*of)() const) {
  R n = 0;
  for (const auto& shard : shards) n += (*shard.*of)();
  return n;
}

}  // namespace

timer_service::timer_service(boost::asio::execution_context& ctx)
    : boost::asio::execution_context::service(ctx), context_(ctx) {
  shards_.reserve(shard_count());
  for (std::size_t i = shard_count(); i > 0; --i)
    shards_.push_back(std::make_shared<detail::timer_shard>(*this, poller_));
  poller_.attach(shards_);
}

timer_service::~timer_service() = default;

void timer_service::use_pool(scheduled_thread_pool& pool) {
  if (pool_set_.exchange(true))
    throw std::logic_error("chronopool::use_pool: this context's timers already use a pool");
  if (any_timer_.load()) {
    pool_set_.store(false);
    throw std::logic_error("chronopool::use_pool: call it before the first timer of the context exists");
  }
  const bool context_is_pool = &context_ == static_cast<boost::asio::execution_context*>(&pool);
  for (const auto& shard : shards_) {
    if (context_is_pool) shard->set_context_executor(pool.get_executor());
    shard->use_pool(pool.core_, context_is_pool);
  }
  if (context_is_pool) {
    own_pool_ = &pool;  // from the pool's constructor, before any timer of it exists
    context_known_.store(true);
  }
}

bool timer_service::driven_by_pool() const noexcept { return pool_set_.load(); }

void timer_service::set_poll_window(std::chrono::nanoseconds window) {
  if (window < std::chrono::nanoseconds::zero() || window > std::chrono::milliseconds(1))
    throw std::invalid_argument("chronopool::set_poll_window: the window must be between 0 and 1 ms");
  poller_.set_window(window);
}

std::uint64_t timer_service::poll_starts() const noexcept { return poller_.starts(); }

std::chrono::nanoseconds timer_service::native_wakeup_latency() const noexcept { return poller_.wakeup_latency(); }

std::size_t timer_service::pending_waits() const { return sum_over(shards_, &detail::timer_shard::pending); }

std::uint64_t timer_service::unlocked_starts() const {
  return sum_over(shards_, &detail::timer_shard::unlocked_starts);
}

std::size_t timer_service::index_bytes() const { return sum_over(shards_, &detail::timer_shard::index_bytes); }

void timer_service::wait(implementation_type& impl, boost::system::error_code& ec) {
  for (;;) {
    const detail::time_point t = expiry(impl);
    if (detail::clock::now() >= t) break;
    std::this_thread::sleep_until(t);
  }
  ec = {};
}

void timer_service::learn_executor(const boost::asio::any_io_executor& ex) {
  for (const auto& shard : shards_) shard->set_context_executor(ex);  // the first one wins
  context_known_.store(true, std::memory_order_release);
}

void timer_service::shutdown() {
  for (const auto& shard : shards_) shard->shutdown();
}

void set_poll_window(boost::asio::execution_context& ctx, std::chrono::nanoseconds window) {
  boost::asio::use_service<timer_service>(ctx).set_poll_window(window);
}

void use_pool(boost::asio::execution_context& ctx, scheduled_thread_pool& pool) {
  boost::asio::use_service<timer_service>(ctx).use_pool(pool);
}

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// timer_service_base's out-of-line members: the shards it makes, who drives
// them (the context's own threads or a pool), and the diagnostics summed
// over the shards.
#include <chronopool/detail/timer/timer_service_base.hpp>

#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/timer/wall_clock_waits.hpp>
#include <chronopool/detail/wakeup/wakeup_setting.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>


#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

namespace chronopool::detail {

namespace {

// One shard per core, so threads that each run their own timers rarely
// share a lock; more than 16 would only spread a context's waits thinner.
std::size_t shard_count() noexcept {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(cores, 1, 16);
}

/// A diagnostic of the whole service: @p of summed over its shards (each under its own lock).
template <class R>
R sum_over(const std::vector<std::shared_ptr<timer_shard>>& shards, R (timer_shard::*of)() const) {
  R n = 0;
  for (const auto& shard : shards) n += (*shard.*of)();
  return n;
}

}  // namespace

timer_service_base::timer_service_base(asio_ns::execution_context& ctx)
    : asio_ns::execution_context::service(ctx), context_(ctx) {
  shards_.reserve(shard_count());
  for (std::size_t i = shard_count(); i > 0; --i) shards_.push_back(std::make_shared<timer_shard>(*this, poller_));
  poller_.attach(shards_);
  wall_ = std::make_shared<wall_clock_waits>(*this);
}

timer_service_base::~timer_service_base() {
  if (manual_clock_) manual_clocks_attached.fetch_sub(1, std::memory_order_relaxed);
}

void timer_service_base::route_to_pool(scheduled_thread_pool& pool, std::shared_ptr<pool_core> core) {
  if (manual_.load() != nullptr)
    throw std::logic_error("chronopool::use_pool: this context's timers run on a manual clock (use_manual_clock); "
                           "a manual clock does not drive a pool");
  const bool context_is_pool = &context_ == static_cast<asio_ns::execution_context*>(&pool);
  if (!context_is_pool && core->manual_time_of() != nullptr)
    throw std::logic_error("chronopool::use_pool: the pool runs on a manual clock "
                           "(scheduled_thread_pool_options::use_manual_clock); another context's timers would "
                           "read the real clock against its virtual one: put that context on its own manual "
                           "clock (use_manual_clock(io)) instead");
  if (pool_set_.exchange(true))
    throw std::logic_error("chronopool::use_pool: this context's timers already use a pool");
  if (any_timer_.load()) {
    pool_set_.store(false);
    throw std::logic_error("chronopool::use_pool: call it before the first timer of the context exists");
  }
  for (const auto& shard : shards_) {
    if (context_is_pool) shard->set_context_executor(pool.get_executor());
    shard->use_pool(core, context_is_pool);
  }
  if (context_is_pool) {
    own_pool_ = &pool;  // from the pool's constructor, before any timer of it exists
    context_known_.store(true);
  }
}

void timer_service_base::run_on_pool_time(const manual_time* m) {
  for (const auto& shard : shards_) shard->use_manual_time(m);
  manual_.store(m, std::memory_order_release);
}

void timer_service_base::set_window(std::chrono::nanoseconds window) {
  check_wakeup_setting("chronopool::set_poll_window: the window", window);
  poller_.set_window(window);
}

void timer_service_base::set_slack(std::chrono::nanoseconds slack) {
  check_wakeup_setting("chronopool::set_wakeup_slack: slack", slack);
  poller_.set_slack(slack);
}

std::size_t timer_service_base::pending() const { return sum_over(shards_, &timer_shard::pending); }

void timer_service_base::add_shard_stats(timer_service_stats& s) const {
  for (const auto& shard : shards_) shard->add_stats(s);
}

std::uint64_t timer_service_base::poll_starts() const noexcept { return poller_.starts(); }

std::chrono::nanoseconds timer_service_base::native_wakeup_latency() const noexcept {
  return poller_.wakeup_latency();
}

std::uint64_t timer_service_base::unlocked_starts() const { return sum_over(shards_, &timer_shard::unlocked_starts); }

std::size_t timer_service_base::index_bytes() const { return sum_over(shards_, &timer_shard::index_bytes); }

void timer_service_base::wait(implementation_type& impl, sys_ns::error_code& ec) {
  if (const manual_time* m = manual()) {
    // Virtual time: until another thread advances the clock past the expiry.
    for (time_point t = expiry(impl); m->now() < t; t = expiry(impl)) m->wait_until(t);
    ec = {};
    return;
  }
  for (;;) {
    const time_point t = expiry(impl);
    if (clock::now() >= t) break;
    std::this_thread::sleep_until(t);
  }
  ec = {};
}

void timer_service_base::learn_executor(const asio_ns::any_io_executor& ex) {
  for (const auto& shard : shards_) shard->set_context_executor(ex);  // the first one wins
  context_known_.store(true, std::memory_order_release);
}

void timer_service_base::shutdown() {
  wall_->shutdown();  // no step is followed from here on; the shards drop the wall waits with the rest
  for (const auto& shard : shards_) shard->shutdown();
}

}  // namespace chronopool::detail

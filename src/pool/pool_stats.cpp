// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pool's statistics: the snapshot pool_core takes and its one-line text.
#include <chronopool/pool_stats.hpp>

#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/support/human_duration.hpp>

#include <mutex>

#include <fmt/format.h>

namespace chronopool {

using detail::human_duration;

std::string to_string(const pool_stats& s) {
  const latency_histogram& run = s.run_time_histogram;
  return fmt::format("{} threads={}/{} largest={} active={} queued={} tasks={} completed={} failed={} "
                     "rejected={} cancelled={} lateness(n={}) p50={} p99={} max={} run(n={}) p50={} p99={} max={}",
                     s.state, s.pool_size, s.core_pool_size, s.largest_pool_size, s.active_count, s.queued_count,
                     s.task_count, s.completed_task_count, s.failed_task_count, s.rejected_task_count,
                     s.cancelled_task_count, s.lateness.count, human_duration(s.lateness.p50),
                     human_duration(s.lateness.p99), human_duration(s.lateness.max), run.count(),
                     human_duration(run.quantile(0.5)), human_duration(run.quantile(0.99)), human_duration(run.max()));
}

}  // namespace chronopool

namespace chronopool::detail {

pool_stats pool_core::stats() const {
  pool_stats s;
  s.state = state_.load();
  s.core_pool_size = core_size_.load();
  {
    std::lock_guard lock(mutex_);
    s.pool_size = live_.load();
    s.largest_pool_size = largest_;
  }
  s.active_count = active_count();
  s.queued_count = queue_.size();
  s.completed_task_count = completed_task_count();
  s.task_count = s.completed_task_count + s.active_count + s.queued_count;
  s.failed_task_count = failed_.load(std::memory_order_relaxed);
  s.rejected_task_count = rejected_.load(std::memory_order_relaxed);
  s.cancelled_task_count = cancelled_.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    s.lateness_histogram = retired_lateness_;
    s.run_time_histogram = retired_run_time_;
    for (const worker& w : workers_) {
      w.lateness.add_to(s.lateness_histogram);
      w.run_time.add_to(s.run_time_histogram);
    }
  }
  const latency_histogram& h = s.lateness_histogram;
  s.lateness.count = h.count();
  s.lateness.window = static_cast<std::size_t>(h.count());
  s.lateness.p50 = h.quantile(0.5);
  s.lateness.p99 = h.quantile(0.99);
  s.lateness.max = h.max();
  return s;
}

std::size_t pool_core::active_count() const noexcept {
  std::size_t n = 0;
  std::lock_guard lock(mutex_);
  for (const worker& w : workers_) n += w.active.load(std::memory_order_relaxed) ? 1 : 0;
  return n;
}

std::uint64_t pool_core::completed_task_count() const noexcept {
  std::uint64_t n = completed_elsewhere_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  n += retired_completed_;
  for (const worker& w : workers_) n += w.completed.load(std::memory_order_relaxed);
  return n;
}

std::size_t pool_core::pool_size() const { return live_.load(); }

std::size_t pool_core::largest_pool_size() const {
  std::lock_guard lock(mutex_);
  return largest_;
}

}  // namespace chronopool::detail

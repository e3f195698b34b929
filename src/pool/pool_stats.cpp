// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/pool_stats.hpp>

#include <fmt/format.h>

namespace chronopool {
namespace {

// Durations in the unit a person reads fastest: 850ns, 41us, 12.3ms, 2.01s.
std::string human(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  const double a = ns < 0 ? -ns : ns;
  if (a < 1e3) return fmt::format("{}ns", d.count());
  if (a < 1e6) return fmt::format("{:.3g}us", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.3g}ms", ns / 1e6);
  return fmt::format("{:.3g}s", ns / 1e9);
}

}  // namespace

std::string to_string(const pool_stats& s) {
  return fmt::format("{} threads={}/{} largest={} active={} queued={} tasks={} completed={} "
                     "lateness(n={}) p50={} p99={} max={}",
                     s.state, s.pool_size, s.core_pool_size, s.largest_pool_size, s.active_count, s.queued_count,
                     s.task_count, s.completed_task_count, s.lateness.count, human(s.lateness.p50),
                     human(s.lateness.p99), human(s.lateness.max));
}

}  // namespace chronopool

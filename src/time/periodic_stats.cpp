// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A periodic schedule's statistics as one line of text.
#include <chronopool/periodic_stats.hpp>

#include <chronopool/detail/support/human_duration.hpp>

#include <fmt/format.h>

namespace chronopool {

std::string to_string(const periodic_stats& s) {
  using detail::human_duration;
  const latency_histogram& late = s.lateness_histogram;
  const latency_histogram& run = s.run_time_histogram;
  return fmt::format("runs={} lateness(n={}) p50={} p99={} max={} run(n={}) p50={} p99={} max={}", s.runs,
                     late.count(), human_duration(late.quantile(0.5)), human_duration(late.quantile(0.99)),
                     human_duration(late.max()), run.count(), human_duration(run.quantile(0.5)),
                     human_duration(run.quantile(0.99)), human_duration(run.max()));
}

}  // namespace chronopool

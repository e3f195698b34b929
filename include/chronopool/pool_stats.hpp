// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A snapshot of a pool's counters.
#pragma once

#include <chronopool/latency_histogram.hpp>
#include <chronopool/run_state.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace chronopool {

/// How late task runs started (start time − deadline), summarised from
/// pool_stats::lateness_histogram: every run since the pool started.
struct lateness_summary {
  std::uint64_t count = 0;   ///< runs measured since the pool started
  std::size_t window = 0;    ///< runs the percentiles below are taken over (every run: equal to count)
  std::chrono::nanoseconds p50{0};  ///< the median, within 1/128 of a recorded value
  std::chrono::nanoseconds p99{0};  ///< the 99th percentile, within 1/128 of a recorded value
  std::chrono::nanoseconds max{0};  ///< the largest, exact
};

/// A pool's counters taken together (scheduled_thread_pool::stats()), each
/// read once; as the pool keeps running they need not add up exactly.
/// Formattable with fmt: `{}` prints to_string().
struct pool_stats {
  run_state state = run_state::running;  ///< the pool's life-cycle state
  std::size_t pool_size = 0;          ///< threads alive now
  std::size_t core_pool_size = 0;     ///< the core pool size set now
  std::size_t largest_pool_size = 0;  ///< most threads ever alive at once
  std::size_t active_count = 0;       ///< threads running a task now
  std::size_t queued_count = 0;       ///< tasks in the queue
  std::uint64_t task_count = 0;       ///< runs completed + running + queued (as Java)
  std::uint64_t completed_task_count = 0;  ///< runs completed (each periodic run counts)
  std::uint64_t failed_task_count = 0;     ///< task runs that threw (each periodic run counts)
  std::uint64_t rejected_task_count = 0;   ///< submissions refused by the rejection policy or handler
  std::uint64_t cancelled_task_count = 0;  ///< tasks cancelled before a run (futures, timers, shutdown policies)
  lateness_summary lateness;          ///< how late runs started, summarised
  /// How late every task run started (start − deadline) since the pool
  /// started; mergeable with other pools' and processes'.
  latency_histogram lateness_histogram;
  /// How long every task run took (start to end, the hooks included).
  latency_histogram run_time_histogram;
};

/// One line, e.g. "running threads=2/2 largest=2 active=1 queued=3 tasks=10
/// completed=6 failed=0 rejected=0 cancelled=1 lateness(n=6) p50=41us p99=88us
/// max=88us run(n=6) p50=2.1us p99=9.8us max=9.8us".
std::string to_string(const pool_stats& s);

}  // namespace chronopool

/// \cond
// fmt's formatter for pool_stats: prints to_string() (doxygen 1.9 cannot place a
// specialization declared by its qualified name, hence the \cond).
template <>
struct fmt::formatter<chronopool::pool_stats> : fmt::formatter<std::string_view> {
  auto format(const chronopool::pool_stats& s, fmt::format_context& ctx) const -> fmt::format_context::iterator {
    return fmt::formatter<std::string_view>::format(chronopool::to_string(s), ctx);
  }
};
/// \endcond

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A snapshot of one periodic schedule's runs: how late they started, how long they took.
#pragma once

#include <chronopool/latency_histogram.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace chronopool {

/// The runs of one periodic handler (periodic_handle::stats()), since it
/// started. Each run records itself as it ends, and runs never overlap, so
/// the figures agree with each other but for a run ending while they are
/// read. Formattable with fmt: `{}` prints to_string().
struct periodic_stats {
  std::uint64_t runs = 0;  ///< handler runs that ended, by returning or by throwing (periodic_handle::ticks())
  /// How late each run started: its start minus the deadline its wait was
  /// armed for (the ideal instant plus jitter, up to its leeway slot; for a trigger_now() run,
  /// the trigger; for a calendar schedule, its instant, by the system
  /// clock). On a manual clock, virtual time: exactly 0 for a run
  /// that advance() started at its deadline. Mergeable with other
  /// schedules', pools' and processes'.
  latency_histogram lateness_histogram;
  /// How long each run took (start to end of the handler), by the same clock.
  latency_histogram run_time_histogram;
};

/// One line, e.g. "runs=10 lateness(n=10) p50=12us p99=80us max=80us
/// run(n=10) p50=2.1ms p99=2.4ms max=2.4ms".
std::string to_string(const periodic_stats& s);

}  // namespace chronopool

/// \cond
// fmt's formatter for periodic_stats: prints to_string() (see pool_stats.hpp).
template <>
struct fmt::formatter<chronopool::periodic_stats> : fmt::formatter<std::string_view> {
  auto format(const chronopool::periodic_stats& s, fmt::format_context& ctx) const -> fmt::format_context::iterator {
    return fmt::formatter<std::string_view>::format(chronopool::to_string(s), ctx);
  }
};
/// \endcond

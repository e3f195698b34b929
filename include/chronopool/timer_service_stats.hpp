// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A snapshot of a context's timer waits: counts and lateness.
#pragma once

#include <chronopool/latency_histogram.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace chronopool {

/// The waits of one context's chronopool timers (timer_service::stats(),
/// timer_stats()), summed over the service's shards, each shard read under
/// its lock: the figures of one shard agree with each other, while waits on
/// other shards go on. Formattable with fmt: `{}` prints to_string().
struct timer_service_stats {
  std::size_t pending_waits = 0;    ///< started and not yet handed to their handlers
  std::uint64_t completed_waits = 0;  ///< handed to their handlers with success (their deadline came)
  std::uint64_t cancelled_waits = 0;  ///< completed with operation_aborted (cancelled, or aborted by a pool's shutdown)
  /// When each wait that fired was found due, minus its deadline (how late
  /// the service completed it), since the context's service was made.
  /// Cancelled waits are not in it, but for one cancelled in the moment
  /// between firing and its handler's call: that one fired, so it is here,
  /// and its handler sees operation_aborted, so it counts in
  /// cancelled_waits, not completed_waits. The time is the one the service read to find
  /// the waits due: on a manual clock, the virtual time, so a wait
  /// completed by advance() is exactly 0 late. Mergeable with other
  /// contexts' and processes'.
  latency_histogram lateness_histogram;
};

/// One line, e.g. "pending=3 completed=120 cancelled=4 lateness(n=120)
/// p50=41us p99=88us max=120us".
std::string to_string(const timer_service_stats& s);

/// The statistics of @p ctx's chronopool timers (an io_context, a
/// scheduled_thread_pool, any execution context): its timer_service's
/// stats(), the service made if need be.
timer_service_stats timer_stats(asio_ns::execution_context& ctx);

}  // namespace chronopool

/// \cond
// fmt's formatter for timer_service_stats: prints to_string() (see pool_stats.hpp).
template <>
struct fmt::formatter<chronopool::timer_service_stats> : fmt::formatter<std::string_view> {
  auto format(const chronopool::timer_service_stats& s, fmt::format_context& ctx) const
      -> fmt::format_context::iterator {
    return fmt::formatter<std::string_view>::format(chronopool::to_string(s), ctx);
  }
};
/// \endcond

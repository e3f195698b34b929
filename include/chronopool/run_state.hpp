// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// The life cycle of a scheduled_thread_pool, as in Java's ThreadPoolExecutor.
#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

namespace chronopool {

/// Only ever advances: RUNNING → SHUTDOWN → STOP → TIDYING → TERMINATED
/// (shutdown_now() from RUNNING skips SHUTDOWN). Formattable with fmt: `{}`
/// prints to_string().
enum class run_state : std::uint8_t {
  running,     ///< accepts and runs work
  shutdown,    ///< rejects new work; queued work follows the shutdown policies
  stop,        ///< rejects new work, runs nothing more, asks running work to stop
  tidying,     ///< all threads gone; the terminated hook is running
  terminated,  ///< the terminated hook has returned
};

/// The enumerator's name, e.g. "shutdown".
constexpr std::string_view to_string(run_state s) noexcept {
  switch (s) {
    case run_state::running: return "running";
    case run_state::shutdown: return "shutdown";
    case run_state::stop: return "stop";
    case run_state::tidying: return "tidying";
    case run_state::terminated: return "terminated";
  }
  return "unknown";
}

}  // namespace chronopool

/// \cond
// fmt's formatter for run_state: prints to_string() (doxygen 1.9 cannot place a
// specialization declared by its qualified name, hence the \cond).
template <>
struct fmt::formatter<chronopool::run_state> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(chronopool::run_state s, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(chronopool::to_string(s), ctx);
  }
};
/// \endcond

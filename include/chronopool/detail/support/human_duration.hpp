// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Durations as the one-line statistics formatters print them.
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace chronopool::detail {

/// @p d in the unit a person reads fastest: 850ns, 41us, 12.3ms, 2.01s.
inline std::string human_duration(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  const double a = ns < 0 ? -ns : ns;
  if (a < 1e3) return fmt::format("{}ns", d.count());
  if (a < 1e6) return fmt::format("{:.3g}us", ns / 1e3);
  if (a < 1e9) return fmt::format("{:.3g}ms", ns / 1e6);
  return fmt::format("{:.3g}s", ns / 1e9);
}

}  // namespace chronopool::detail

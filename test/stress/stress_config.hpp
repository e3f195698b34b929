// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// How big the stress runs are: one scale factor for every count, chosen per
// build so that the normal build pushes at least a million tasks through the
// ledger and the sanitizer builds stay within their CI time budget.
//
// CHRONOPOOL_STRESS_SCALE (float > 0) overrides the scale; CHRONOPOOL_STRESS_SEED
// changes the base seed (the random choices follow from the seeds printed;
// thread interleavings do not).
#pragma once

#include <chronopool/detail/support/sanitizers.hpp>

#include <cstdint>
#include <cstdlib>

namespace stress {

enum class build_kind { plain, address_sanitizer, thread_sanitizer };

inline constexpr build_kind this_build = CHRONOPOOL_THREAD_SANITIZER    ? build_kind::thread_sanitizer
                                         : CHRONOPOOL_ADDRESS_SANITIZER ? build_kind::address_sanitizer
                                                                        : build_kind::plain;

/// The default scale of this build: the full count everywhere, so CI pushes
/// a million one-shot tasks (plus periodic tasks and timer waits) through the
/// ledger in the plain build and under both sanitizers. Measured on 2 cores:
/// plain (-O0) ~35 s, ASan+UBSan (-O1) ~25 s, TSan ~65 s. Lower a sanitizer's
/// scale here if a slower machine needs it; the floor under TSan is
/// 100,000 tasks (scale 0.1).
constexpr double default_scale() {
  switch (this_build) {
    case build_kind::thread_sanitizer: return 1.0;
    case build_kind::address_sanitizer: return 1.0;
    case build_kind::plain: break;
  }
  return 1.0;
}

inline const char* build_name() {
  switch (this_build) {
    case build_kind::thread_sanitizer: return "tsan";
    case build_kind::address_sanitizer: return "asan";
    case build_kind::plain: break;
  }
  return "plain";
}

inline double scale() {
  if (const char* s = std::getenv("CHRONOPOOL_STRESS_SCALE")) {
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end != s && v > 0.0) return v;
  }
  return default_scale();
}

inline std::uint64_t base_seed() {
  if (const char* s = std::getenv("CHRONOPOOL_STRESS_SEED")) return std::strtoull(s, nullptr, 10);
  return 20240611;
}

}  // namespace stress

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// CPU time and wake-ups of this process (getrusage), for workloads that
// measure what their timers cost the machine beside how late they fire.
// Process-wide, so a workload reads it before and after its window and
// reports the difference.
#pragma once

#include <cstdint>

namespace bench::usage {

struct sample {
  /// Voluntary context switches of all threads so far: each is a thread that
  /// blocked (for a deadline, or for work) and was woken again.
  std::int64_t voluntary_switches;
  /// User + system CPU time of all threads so far, in ns.
  std::int64_t cpu_ns;
};

sample now();

}  // namespace bench::usage

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// CPU time and wake-ups of this process (getrusage), beside what each
// workload measures of its own: what its timers or functions cost the
// machine, every thread counted (the library's, the set-up's, the caller's).
// Process-wide, so a workload brackets its timed phase with a meter and
// reports the difference.
#pragma once

#include "model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace bench::usage {

struct sample {
  /// Voluntary context switches of all threads so far: each is a thread that
  /// blocked (for a deadline, or for work) and was woken again.
  std::int64_t voluntary_switches;
  /// User + system CPU time of all threads so far, in ns.
  std::int64_t cpu_ns;
};

sample now();

/// The usage of a workload's timed phase: start() and stop() bracket it, more
/// than once when part of it (a read of /proc between two loops, say) is not
/// to be counted; the meter sums the brackets.
class meter {
 public:
  void start() { started_ = now(); }
  void stop() {
    const sample s = now();
    total_.voluntary_switches += s.voluntary_switches - started_.voluntary_switches;
    total_.cpu_ns += s.cpu_ns - started_.cpu_ns;
  }

  std::int64_t cpu_ns() const { return total_.cpu_ns; }
  std::int64_t voluntary_switches() const { return total_.voluntary_switches; }

  /// "CPU ms": the phase's user + system time, for a workload whose phase is
  /// a window of time rather than a count of operations.
  figure cpu_ms() const;
  /// "CPU ns/<unit>": the phase's user + system time over its @p ops
  /// operations, comparable with the workload's own per-operation figures.
  figure cpu_ns_per(const std::string& unit, std::size_t ops) const;

 private:
  sample started_{};
  sample total_{};
};

}  // namespace bench::usage

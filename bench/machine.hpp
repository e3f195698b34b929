// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the numbers were measured on: printed above the table and stored in
// the JSON, so a result is never read without its context.
#pragma once

#include <string>

namespace bench {

struct machine_info {
  unsigned cores = 0;     // std::thread::hardware_concurrency
  std::string cpu;        // "model name" from /proc/cpuinfo
  std::string compiler;   // __VERSION__
  std::string boost;      // BOOST_LIB_VERSION
  std::string build;      // NDEBUG or not, sanitizers
  std::string date;       // UTC, ISO 8601
};

machine_info describe_machine();

/// How far a thread that does nothing but read the clock falls behind it:
/// the floor under every lateness figure. A VM (or the kernel's tick) stops
/// a running thread now and then; a deadline falling in such a stall is late
/// by what is left of it, whoever polls for it. Measured once per run.
///
/// Then the same with T threads at once, one per context thread: a deadline
/// that falls where one of them stalls can still be met by another, unless
/// they all stall together. On a VM they mostly do (the whole guest is
/// stopped), and what they share is the floor for a context whose threads
/// stand in for each other (the pool's precision mode).
struct spin_floor {
  double seconds = 0;              // how long the thread spun
  double stalls_over_10us = 0;     // per second: gaps between two clock reads over 10 us
  double longest_us = 0;           // the longest gap
  double late_over_10us_pct = 0;   // share of uniformly spread deadlines a spinner sees > 10 us late
  unsigned threads_together = 0;       // how many spun at once for the two figures below
  double stalled_together_per_s = 0;   // per second: stretches over 10 us in which none of them read the clock
  double late_for_all_pct = 0;         // share of uniformly spread deadlines every one of them sees > 10 us late
};

/// Spins one thread on steady_clock for @p how_long_s seconds (the other threads of the
/// process idle) and sums its stalls; then @p threads threads together for as long.
spin_floor measure_spin_floor(double how_long_s, unsigned threads);

/// The 1, 5 and 15 minute load averages from /proc/loadavg ("?" if unreadable).
std::string load_average();

}  // namespace bench

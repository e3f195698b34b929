// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "workloads.hpp"

#include <array>

namespace bench {

std::span<const workload_def> all_workloads() {
  // Memory-heavy workloads first: the process's peak RSS is then set by the
  // workload that owns it (each run still reports its own delta).
  static const std::array<workload_def, 10> defs{{
      {"fire", "N one-shot timers spread over a window; submit cost, lateness, peak RSS, CPU", fire_cases},
      {"timeout", "M outstanding 30 s timeouts; re-arm (cancel old + arm new) cost from T threads, CPU", timeout_cases},
      {"cancel", "N far-future timers armed, then all cancelled; ns/op, RSS, CPU", cancel_cases},
      {"memory", "bytes per pending timer (RSS delta / N)", memory_cases},
      {"periodic", "K fixed-rate tasks at 10 ms; ticks done, drift from the ideal schedule, wake-ups, CPU", periodic_cases},
      {"sleep", "a coroutine sleeping 0 and 1 ms in a loop; round trip, lateness, CPU", sleep_cases},
      {"coalesce", "N timers due over a window, exact and with a leeway; wake-ups, CPU, lateness", coalesce_cases},
      {"broadcast", "K waits on one timer, all cancelled, then all fired; ns per wait, CPU", broadcast_cases},
      {"post", "post from T threads into the pool; ns per function, CPU", post_cases},
      {"pool-task", "N one-shot pool tasks over a window (execute_after, schedule, schedule_at; futures dropped or kept); submit cost, lateness, CPU", pool_task_cases},
  }};
  return defs;
}

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace bench

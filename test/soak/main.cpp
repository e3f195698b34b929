// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool_soak: runs the mixed workload (workload.hpp) in cycles for a
// given time and checks that nothing was lost or done twice and that memory
// stayed flat: the resident set size at the end may exceed the one measured
// after the warm-up by at most --max-growth-mib. Prints RSS at the start,
// after the warm-up, periodically and at the end. Where the resident set
// cannot be read (detail/platform/process_memory.hpp reports 0), the memory
// check is skipped and says so. Exit status 1 on failure.
//
//   chronopool_soak [--seconds N] [--warmup-seconds N] [--max-growth-mib N] [--seed N]
//
// scripts/soak builds and runs it for minutes; CTest runs it for a few
// seconds as a smoke test.
#include "workload.hpp"

#include <chronopool/detail/platform/process_memory.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

/// The resident set in bytes; 0 where it cannot be read.
std::size_t resident_bytes() { return static_cast<std::size_t>(chronopool::detail::platform::resident_bytes()); }

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

struct options {
  long seconds = 300;
  long warmup_seconds = -1;  // default: a fifth of the run, at most 60 s
  double max_growth_mib = 16;
  unsigned long long seed = 20240611;
};

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: chronopool_soak [--seconds N] [--warmup-seconds N] [--max-growth-mib N] [--seed N]\n");
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; i += 2) {  // options come as name-value pairs
    if (i + 1 >= argc) usage();
    const char* value = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) {
      o.seconds = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(argv[i], "--warmup-seconds") == 0) {
      o.warmup_seconds = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(argv[i], "--max-growth-mib") == 0) {
      o.max_growth_mib = std::strtod(value, nullptr);
    } else if (std::strcmp(argv[i], "--seed") == 0) {
      o.seed = std::strtoull(value, nullptr, 10);
    } else {
      usage();
    }
  }
  if (o.seconds <= 0) usage();
  if (o.warmup_seconds < 0) o.warmup_seconds = std::min<long>(60, o.seconds / 5);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  using steady = std::chrono::steady_clock;
  const options o = parse(argc, argv);
  const std::size_t rss_start = resident_bytes();
  const bool rss_readable = rss_start != 0;
  if (!rss_readable) std::printf("soak: the resident set cannot be read here: the memory check is skipped\n");
  std::printf("soak: %ld s (warm-up %ld s), RSS at start %.1f MiB\n", o.seconds, o.warmup_seconds,
              mib(rss_start));
  std::fflush(stdout);

  const auto start = steady::now();
  const auto warm = start + std::chrono::seconds(o.warmup_seconds);
  const auto end = start + std::chrono::seconds(o.seconds);
  const auto report_every = std::chrono::seconds(std::max<long>(5, o.seconds / 10));
  auto next_report = start + report_every;

  soak::counts total;
  bool warmed = false;
  std::size_t rss_warm = 0;
  std::size_t rss_last = rss_start;  // after the last cycle, with the long-lived objects still alive
  std::size_t rss_peak = rss_start;
  std::uint64_t cycles = 0;
  {
    soak::workload w(o.seed);
    while (steady::now() < end) {
      total.add(w.cycle(std::chrono::milliseconds(500)));
      ++cycles;
      const std::size_t rss = resident_bytes();
      rss_last = rss;
      rss_peak = std::max(rss_peak, rss);
      const auto now = steady::now();
      if (!warmed && now >= warm) {
        warmed = true;
        rss_warm = rss;
        std::printf("soak: RSS after warm-up %.1f MiB\n", mib(rss_warm));
      }
      if (now >= next_report) {
        next_report += report_every;
        const auto t = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
        std::printf("soak: t=%llds cycles=%llu tasks=%llu timer waits=%llu RSS=%.1f MiB\n", static_cast<long long>(t),
                    static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(total.tasks),
                    static_cast<unsigned long long>(total.timer_waits), mib(rss));
        std::fflush(stdout);
      }
      if (total.violations != 0) break;
    }
  }
  const std::size_t rss_torn_down = resident_bytes();
  if (!warmed) rss_warm = rss_last;
  const double growth = mib(rss_last) - mib(rss_warm);

  std::printf("soak: %llu cycles: %llu one-shot tasks (%llu ran, %llu cancelled), %llu periodic runs, "
              "%llu timer waits (%llu handler calls), %llu short-lived pools\n",
              static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(total.tasks),
              static_cast<unsigned long long>(total.ran), static_cast<unsigned long long>(total.cancelled),
              static_cast<unsigned long long>(total.periodic_runs), static_cast<unsigned long long>(total.timer_waits),
              static_cast<unsigned long long>(total.handler_calls), static_cast<unsigned long long>(total.pools));
  std::printf("soak: RSS at start %.1f MiB, after warm-up %.1f MiB, at end %.1f MiB (%.1f MiB once torn down), "
              "peak %.1f MiB; growth after warm-up %.1f MiB (limit %.1f MiB)\n",
              mib(rss_start), mib(rss_warm), mib(rss_last), mib(rss_torn_down),
              mib(rss_peak), growth, o.max_growth_mib);
  bool ok = true;
  if (total.violations != 0) {
    std::printf("soak: FAILED: %llu ledger violations, the first: %s\n",
                static_cast<unsigned long long>(total.violations), total.first_violation.c_str());
    ok = false;
  }
  if (rss_readable && growth > o.max_growth_mib) {
    std::printf("soak: FAILED: memory grew by %.1f MiB after the warm-up\n", growth);
    ok = false;
  }
  if (ok) std::printf("soak: OK\n");
  return ok ? 0 : 1;
}

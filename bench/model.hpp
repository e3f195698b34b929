// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The benchmark's data model: variants, figures, runs and cases.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// Who runs the timers (or the posted functions) in one run.
enum class variant {
  asio_io,    ///< boost::asio::steady_timer on an io_context run by T threads
  cp_io,      ///< chronopool::steady_timer on the same set-up (native mode)
  asio_pool,  ///< boost::asio::steady_timer on boost::asio::thread_pool(T)
  cp_pool,    ///< chronopool on scheduled_thread_pool(T) (pool mode)
  cp_io_pool, ///< chronopool::steady_timer on the io_context of asio_io, its
              ///< waits kept by a one-thread scheduled_thread_pool (use_pool)
  cp_precise, ///< cp_pool in precision mode (the leader spins before deadlines)
  cp_io_precise, ///< cp_io in precision mode (set_poll_window: wake early, poll the rest)
  cp_pool_task,  ///< the pool's own delayed tasks (execute_after, schedule...) on
                 ///< scheduled_thread_pool(T), pool-task only; compared with
                 ///< cp_pool, a steady_timer on the same kind of pool
};

/// --wakeup-slack: every chronopool set-up's wake-up slack (the pool's
/// wakeup_slack, the io_context's set_wakeup_slack); unset, the library's
/// default.
inline std::optional<std::chrono::nanoseconds> wakeup_slack;

/// The spin limit of cp_precise and the poll window of cp_io_precise.
inline constexpr std::chrono::microseconds precise_spin_limit{200};

inline const char* name(variant v) {
  switch (v) {
    case variant::asio_io: return "asio-io";
    case variant::cp_io: return "cp-io";
    case variant::asio_pool: return "asio-pool";
    case variant::cp_pool: return "cp-pool";
    case variant::cp_io_pool: return "cp-io-pool";
    case variant::cp_precise: return "cp-precise";
    case variant::cp_io_precise: return "cp-io-precise";
    case variant::cp_pool_task: return "cp-pool-task";
  }
  return "?";
}

/// The set-up a chronopool variant is compared with: Asio's io_context with
/// an io_context, Asio's thread_pool with a pool; the pool's own tasks with
/// timers on the same kind of pool.
inline variant peer_of(variant v) {
  switch (v) {
    case variant::cp_io:
    case variant::cp_io_pool:
    case variant::cp_io_precise: return variant::asio_io;
    case variant::cp_pool:
    case variant::cp_precise: return variant::asio_pool;
    case variant::cp_pool_task: return variant::cp_pool;
    default: return v;
  }
}

/// Every chronopool variant has a peer; an Asio variant is its own.
inline bool is_chronopool(variant v) { return peer_of(v) != v; }

inline const std::vector<variant> all_variants{variant::asio_io, variant::cp_io, variant::asio_pool,
                                               variant::cp_pool, variant::cp_io_pool};
inline const std::vector<variant> pool_variants{variant::asio_pool, variant::cp_pool};
/// For the workloads that measure lateness: every variant and precision mode.
inline const std::vector<variant> timing_variants{variant::asio_io,    variant::cp_io,
                                                  variant::asio_pool,  variant::cp_pool,
                                                  variant::cp_io_pool, variant::cp_precise,
                                                  variant::cp_io_precise};
/// Every variant, for --variants.
inline const std::vector<variant> every_variant{variant::asio_io,       variant::cp_io,     variant::asio_pool,
                                                variant::cp_pool,       variant::cp_io_pool, variant::cp_precise,
                                                variant::cp_io_precise, variant::cp_pool_task};

/// One number measured by one run. Lower is better unless marked otherwise.
struct figure {
  std::string name;
  double value;
  bool higher_is_better = false;
};

/// What one run of one variant measured.
struct run_result {
  std::vector<figure> figures;  // in display order
  /// Optional distribution for plotting: (quantile, value in µs) pairs.
  std::vector<std::pair<double, double>> cdf;
};

/// A workload at one size: a group of rows in the table.
struct bench_case {
  std::string workload;  // CLI name, e.g. "fire"
  std::string label;     // e.g. "N=1,000,000"
  std::vector<variant> variants;
  std::function<run_result(variant)> run;
};

struct options {
  unsigned threads = 2;
  int reps = 5;
  bool quick = false;
  bool big = false;  // adds the sizes that take minutes and GiBs (timeout at M = 10,000,000)
  std::optional<std::string> json_path;
  std::vector<std::string> only;  // empty: every workload
  std::vector<variant> variants;  // empty: every variant (a profile wants one)
  std::string command_line;
};

}  // namespace bench

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The workloads, by CLI name. Each one turns the options into its cases (one
// per size); a case knows how to run one repetition of one variant.
#pragma once

#include "model.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bench {

std::vector<bench_case> fire_cases(const options& o);
std::vector<bench_case> timeout_cases(const options& o);
std::vector<bench_case> cancel_cases(const options& o);
std::vector<bench_case> periodic_cases(const options& o);
std::vector<bench_case> sleep_cases(const options& o);
std::vector<bench_case> post_cases(const options& o);
std::vector<bench_case> pool_task_cases(const options& o);
std::vector<bench_case> memory_cases(const options& o);
std::vector<bench_case> coalesce_cases(const options& o);
std::vector<bench_case> broadcast_cases(const options& o);

struct workload_def {
  const char* name;
  const char* what;  // one line for --help
  std::vector<bench_case> (*cases)(const options&);
};

/// Every workload, in the order they run.
std::span<const workload_def> all_workloads();

/// 1000000 -> "1,000,000": sizes in labels are read, not parsed.
std::string with_commas(std::uint64_t n);

}  // namespace bench

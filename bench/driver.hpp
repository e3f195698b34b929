// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Runs the cases: for each, one warm-up run of every variant (discarded), then
// R repetitions in which the variants alternate, so that a drift of the
// machine's state (another process, thermal, the allocator) hits both sides.
#pragma once

#include "model.hpp"

#include <vector>

namespace bench {

struct case_result {
  const bench_case* spec;
  /// runs[i][r]: repetition r of spec->variants[i].
  std::vector<std::vector<run_result>> runs;
};

std::vector<case_result> run_cases(const std::vector<bench_case>& cases, const options& o);

}  // namespace bench

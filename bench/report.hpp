// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Output: the header and the Markdown table on stdout, every repetition in JSON.
#pragma once

#include "driver.hpp"
#include "machine.hpp"
#include "model.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace bench {

struct run_context {
  machine_info machine;
  spin_floor floor;
  std::string load_before;
  std::string load_after;
  double seconds = 0;
};

void print_header(std::FILE* out, const run_context& ctx, const options& o);
/// One table per workload: median, min and max of every figure and, on
/// chronopool's rows, the median over repetitions of chronopool / its Asio peer.
void print_tables(std::FILE* out, const std::vector<case_result>& results, const options& o);
void print_footer(std::FILE* out, const run_context& ctx);
/// Throws std::runtime_error when the file cannot be written.
void write_json(const std::string& path, const run_context& ctx, const std::vector<case_result>& results,
                const options& o);

}  // namespace bench

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable-bench --creations (creations_bench.cpp): schedule
// creations per second, one request at a time against one bulk upsert.
#pragma once

#include <cstddef>
#include <string>

namespace chronopool::bench_durable {

struct creations_options {
  std::size_t n = 10'000;  // schedules per bulk measurement (a fifth of them one at a time)
  int reps = 3;
  std::string server;      // the redis-server binary
  std::string fsync = "everysec";  // the private server's appendfsync
};

int run_creations(const creations_options& o);

}  // namespace chronopool::bench_durable

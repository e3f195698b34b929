// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable-bench --fleet W (fleet_bench.cpp): W worker processes
// on one redis-server, as a fleet runs: schedule creations per second from
// W processes through async_upsert_schedules, then a backlog of due
// one-shots drained by W started schedulers (claim, handler, ack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace chronopool::bench_durable {

struct fleet_options {
  std::size_t workers = 4;     // processes
  std::size_t n = 100'000;     // one-shots created, then drained, per repetition
  int reps = 3;
  std::string server;          // the redis-server binary
  std::string fsync = "everysec";  // the private servers' appendfsync
  std::size_t cluster_masters = 0;  // 0: one redis-server; else a Redis Cluster of that many masters
  std::uint32_t partitions = 1;     // the namespace's partition count (scheduler_options::partitions)
};

int run_fleet(const fleet_options& o, const char* self);

/// The worker side: argv after "--fleet-child". Returns the exit status.
int run_fleet_child(int argc, char** argv);

}  // namespace chronopool::bench_durable

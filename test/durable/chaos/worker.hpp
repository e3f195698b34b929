// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A chaos worker process: a durable scheduler on the harness's namespace
// with the handlers of every scenario, logging each completed run (and each
// data_lost report) for the checker.
#pragma once

#include <chronopool/durable/scheduler_options.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace chronopool::durable::chaos {

/// Task names. "tick": short work, logged. "poison": always throws.
/// "hang": hangs past its timeout on its first attempt, and on every attempt
/// of every other occurrence (those end as dead letters, the rest run on a
/// retry). "nobody": no process has a handler for it.
inline constexpr const char* tick_task = "tick";
inline constexpr const char* poison_task = "poison";
inline constexpr const char* hang_task = "hang";
inline constexpr const char* orphan_task = "nobody";
/// The hang handler's timeout (handler_options::timeout): it hangs three times as long.
inline constexpr std::chrono::milliseconds hang_timeout{250};

/// Where the fleet's Redis is, as the harness passes it to worker
/// processes: "<port>" (one server on loopback) or "cluster:<port>,..."
/// (the seeds of a Redis Cluster on loopback). Throws on anything else.
redis_options redis_target(const std::string& spec);

/// The scheduler options of workers and of the harness's own scheduler, on
/// `redis` (its address; the timeouts are set here) and a namespace of
/// `partitions` partitions.
scheduler_options worker_options(const redis_options& redis, const std::string& ns, int lease_ms,
                                 std::uint32_t partitions);

/// Runs a worker on Redis `target` (see redis_target) until SIGTERM: every completed run of tick and hang is a
/// line "fire_id token pid start end" appended to `log`, every data_lost
/// log record a line "data_lost pid ms" to `log`.events, its counters a
/// line to `log`.stats when it exits. Returns the process's exit code.
int run_worker(const std::string& target, const std::string& ns, const std::string& log, int lease_ms,
               std::uint32_t partitions);

}  // namespace chronopool::durable::chaos

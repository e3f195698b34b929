// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// What a handler of a durable schedule is told about the fire it runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

namespace chronopool::durable {

/// One fire of a schedule. Every fire runs at least once; it may run again
/// (after a crash, an expired lease or a handler error), always under a new,
/// larger fencing token. Make effects exactly-once by deduplicating on
/// fire_id, or by rejecting writes whose token is below one already seen.
struct fire_context {
  std::string schedule_id;  ///< the id the schedule was created with
  std::string task;         ///< the task name, which chose the handler
  std::string payload;      ///< the schedule's payload, as given when it was created
  /// "<schedule_id>@<due in ms since the epoch>": the same for every attempt
  /// of this occurrence, on every process.
  std::string fire_id;
  /// The occurrence's nominal time on the Redis server's clock.
  std::chrono::system_clock::time_point due;
  /// Fencing token: increases with every claim in the namespace's partition,
  /// so with every claim of this schedule (fires of two partitions may
  /// share a token: see scheduler_options::partitions).
  std::uint64_t token = 0;
  /// 1 for the first claim of this occurrence, 2 after one lost lease or retry, ...
  std::uint32_t attempt = 0;
  /// Requested when this process lost (or could not extend) the lease: the
  /// fire may now run elsewhere, so the handler should stop soon.
  std::stop_token stop;
};

}  // namespace chronopool::durable

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::durable::dead_letter — a fire that failed all its attempts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace chronopool::durable {

/// A fire that failed every attempt its failure_policy allowed, kept in
/// Redis until it is re-driven or deleted (scheduler::async_redrive_dead_letter,
/// scheduler::async_delete_dead_letter). Cancelling its schedule keeps it.
struct dead_letter {
  std::string schedule_id;  ///< the schedule the fire belonged to
  /// The fire's id, "<schedule_id>@<due in ms>": names the dead letter.
  std::string fire_id;
  std::string task;         ///< the task name
  /// The occurrence's nominal time on the Redis server's clock.
  std::chrono::system_clock::time_point due;
  std::uint32_t attempts = 0;  ///< how many attempts ran (or were given back)
  /// The last attempt's error: the exception's text (at most 1 KiB), or why
  /// it was given back (no handler, timed out, lease ran out).
  std::string last_error;
  /// When it was dead-lettered, on the Redis server's clock.
  std::chrono::system_clock::time_point dead_lettered_at;
};

}  // namespace chronopool::durable

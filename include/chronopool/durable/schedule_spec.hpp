// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Many schedules in one request: what scheduler::async_upsert_schedules
/// takes (schedule_spec) and reports for each (upsert_result).
#pragma once

#include <chronopool/durable/schedule_info.hpp>
#include <chronopool/durable/scheduler_options.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace chronopool::durable {

/// One schedule to create or upsert, of any kind, as the single calls
/// (async_schedule_at, async_schedule_at_fixed_rate,
/// async_schedule_with_fixed_delay, async_schedule_cron) take it.
struct schedule_spec {
  std::string id;       ///< the schedule's id, unique in the namespace; not empty
  std::string task;     ///< the task name its fires run; not empty
  std::string payload;  ///< handed to every fire
  schedule_kind kind = schedule_kind::one_shot;  ///< one-shot, fixed rate, fixed delay or cron
  /// One-shot and fixed rate: the first occurrence (Redis's clock), rounded
  /// up to the millisecond. Empty: `delay` after Redis's now. Not for fixed
  /// delay or cron (a cron schedule starts at its first instant after
  /// Redis's now).
  std::optional<std::chrono::system_clock::time_point> start;
  /// The first occurrence this long after Redis's now when `start` is
  /// empty; not negative, zero for a cron schedule.
  std::chrono::milliseconds delay{0};
  /// Fixed rate and fixed delay: the period, at least 1 ms; zero otherwise.
  std::chrono::milliseconds period{0};
  /// Cron: the expression (cron_schedule's syntax); empty otherwise.
  std::string cron;
  /// Cron: the IANA time zone it is read in.
  std::string time_zone = "UTC";
  /// Misfires, replace or update, failure policy, history (as for the
  /// single calls; not for a one-shot but its failure policy).
  schedule_options options;
};

/// What happened to one schedule_spec.
enum class upsert_outcome {
  created,    ///< there was no schedule with this id: created
  replaced,   ///< schedule_options::replace: the one there was replaced (its state reset)
  updated,    ///< schedule_options::update: the one there took the new settings, keeping its position
  unchanged,  ///< schedule_options::replace with exactly the same settings: kept as it was
  failed,     ///< refused (see upsert_result::error); nothing of it was written
};

/// The result of one schedule_spec, in the order they were given.
struct upsert_result {
  std::string id;  ///< the spec's id
  upsert_outcome outcome = upsert_outcome::failed;  ///< what happened
  /// The schedule's pending occurrence (Redis's clock), unless it failed.
  std::chrono::system_clock::time_point due;
  /// Why it failed: the parameter and the value refused, the library's
  /// text (`EXISTS schedule x exists`), or the request's error for
  /// schedules never answered. Empty unless failed.
  std::string error;
};

}  // namespace chronopool::durable

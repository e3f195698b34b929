// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// What the management calls of chronopool::durable::scheduler report:
/// schedules as listed and inspected, their last runs, extra fires.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chronopool::durable {

/// How a schedule's occurrences follow each other.
enum class schedule_kind {
  one_shot,     ///< a single occurrence (async_schedule, async_schedule_at)
  fixed_rate,   ///< occurrences at first + k period
  fixed_delay,  ///< each occurrence a period after the previous one was acknowledged
  cron,         ///< the instants of a cron expression in an IANA time zone (scheduler::async_schedule_cron)
};

/// Where a schedule stands.
enum class schedule_state {
  active,   ///< waiting for its next fire (or being retried)
  paused,   ///< not claimed until resumed (a fire running when it was paused runs on)
  running,  ///< a fire of it is leased to a process now
};

/// One schedule as scheduler::async_list_schedules lists it.
struct schedule_summary {
  std::string id;    ///< the schedule's id
  std::string task;  ///< its task name
  schedule_kind kind = schedule_kind::one_shot;  ///< one-shot, fixed rate, fixed delay or cron
  std::chrono::milliseconds period{0};  ///< the period or delay (zero for a one-shot and a cron schedule)
  std::string cron;       ///< a cron schedule's expression, as given; else empty
  std::string time_zone;  ///< a cron schedule's IANA time zone; else empty
  /// The pending periodic occurrence's nominal time (Redis's clock): what
  /// its fire id names; extra fires are not counted here.
  std::chrono::system_clock::time_point next_due;
  /// When it may next be claimed (later than next_due while a failed fire
  /// waits for its retry, earlier when an extra fire is due first); empty
  /// while it is paused or running.
  std::optional<std::chrono::system_clock::time_point> eligible;
  schedule_state state = schedule_state::active;  ///< active, paused or running
  /// Attempts made of the pending occurrence: of the running fire, or of
  /// one waiting for its retry; 0 before its first.
  std::uint32_t attempts = 0;
  /// Extra fires not finished yet (scheduler::async_trigger_now,
  /// scheduler::async_backfill): waiting, or the one running.
  std::uint32_t extra_fires = 0;
};

/// One page of scheduler::async_list_schedules.
struct schedule_page {
  std::vector<schedule_summary> schedules;  ///< in id order (bytewise)
  /// Pass as schedule_query::after for the next page; empty on the last one.
  std::string next_cursor;
};

/// Which schedules scheduler::async_list_schedules returns.
struct schedule_query {
  std::string prefix;  ///< only ids starting with this (empty: all)
  std::string after;   ///< only ids after this one (a page's next_cursor; empty: from the first)
  std::size_t limit = 100;  ///< at most this many, 1 to 1000
};

/// How a recorded run ended.
enum class run_outcome {
  succeeded,      ///< the handler returned; the fire was acknowledged
  failed,         ///< the handler threw, timed out or was missing; retried later
  dead_lettered,  ///< it failed on its last allowed attempt: a dead letter now
  lease_expired,  ///< its process died, stalled or stopped: the lease ran out (retried, or dead-lettered at the next claim on its last attempt)
};

/// One past run of a schedule, from its history.
struct run_record {
  /// "<schedule id>@<due in ms>", as fire_context::fire_id.
  std::string fire_id;
  std::chrono::system_clock::time_point due;  ///< the occurrence's nominal time
  /// When the attempt was claimed (Redis's clock), read from its fencing
  /// token: claims hand out tokens from 1000 per millisecond of Redis's
  /// time, so this is exact to the millisecond unless the fleet claimed
  /// more than 1000 fires in one (see docs/durable.md, "Data loss: epochs
  /// and tokens"); empty when unknown.
  std::optional<std::chrono::system_clock::time_point> started;
  /// The attempt's fencing token (fire_context::token).
  std::uint64_t token = 0;
  std::chrono::system_clock::time_point finished;  ///< when it was acknowledged, failed or found expired
  std::uint32_t attempt = 0;  ///< which attempt of the occurrence, from 1
  run_outcome outcome = run_outcome::succeeded;  ///< how it ended
  std::string error;  ///< the error text of a failed run (at most 1 KiB), else empty
};

/// One schedule in full, as scheduler::async_inspect reports it.
struct schedule_details {
  schedule_summary summary;  ///< what listing shows
  std::string payload;       ///< the payload its fires carry
  /// When it was created (Redis's clock).
  std::chrono::system_clock::time_point created;
  std::uint64_t runs = 0;          ///< fires acknowledged
  std::uint64_t failures = 0;      ///< failed attempts (retried or dead-lettered)
  std::uint64_t dead_letters = 0;  ///< occurrences dead-lettered
  std::string last_error;          ///< the latest failed attempt's error text
  /// The process holding or that last held its lease; empty before the first claim.
  std::string lease_owner;
  /// When the running fire's lease expires; empty unless running.
  std::optional<std::chrono::system_clock::time_point> lease_expires;
  /// How many runs its history keeps (schedule_options::history_length).
  std::uint32_t history_length = 0;
  /// Its last runs, newest first, at most history_length of them.
  std::vector<run_record> history;
  /// The nominal times of its first 100 unfinished extra fires, earliest first.
  std::vector<std::chrono::system_clock::time_point> extra_fires;
};

/// What scheduler::async_trigger_now did.
struct triggered_fire {
  /// The extra fire's id, "<schedule id>@<ms>", as its fire_context::fire_id.
  std::string fire_id;
  std::chrono::system_clock::time_point due;  ///< now, on Redis's clock
  /// A fire of the schedule was running: the extra one runs after it.
  bool queued_behind_running = false;
};

/// What scheduler::async_backfill did.
struct backfill_result {
  std::size_t occurrences = 0;  ///< occurrences of the schedule in the range (before its pending one)
  std::size_t added = 0;        ///< of those, how many were not waiting already
};

}  // namespace chronopool::durable

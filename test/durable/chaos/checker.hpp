// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chaos harness's verdict, computed from the workers' append-only log
// and the list of faults it injected. Pure, so its own tests can show that
// it catches each kind of violation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace chronopool::durable::chaos {

/// One completed run of a fire, as a worker logged it:
/// "<schedule>@<due> <token> <pid> <start ms> <end ms>".
struct run_record {
  std::string schedule;
  std::int64_t due = 0;
  std::uint64_t token = 0;
  long pid = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

/// Fault kinds the checker treats apart. The others (kill -9, SIGSTOP, a
/// Redis restart, proxy stalls and cuts; on a Redis Cluster a master killed
/// and its replica promoted, a master pausing its clients, every node
/// cutting its connections) only excuse repeats and overlaps near them.
/// A failover may lose the writes the replica had not received yet, but
/// what it keeps is a prefix of the master's writes: state rolls back, so
/// acknowledged occurrences may run again and a lease may vanish under its
/// holder (an overlap without an expired lease), yet no occurrence is
/// skipped, so no tick is excused as lost; and tokens stay above the lost
/// ones, since a claim hands out tokens above Redis's clock in microseconds
/// (one clock on loopback).
/// Redis restarted without its data: schedules are re-created from `end`
/// on, so ticks due after `start` (when the fleet was seen caught up) and
/// before `end` are lost with the data; tokens handed out after it must
/// exceed those before it, and a worker must report data_lost.
inline constexpr const char* data_loss_fault = "redis restart without data";
/// Redis at maxmemory (noeviction): no fire may be lost or run twice.
inline constexpr const char* maxmemory_fault = "redis at maxmemory";
/// A deploy upserting every schedule while workers run: no completed
/// occurrence may run again because of it.
inline constexpr const char* deploy_fault = "deploy (upsert)";

struct fault_record {
  std::string kind;
  std::int64_t start = 0;  // ms, system_clock
  std::int64_t end = 0;
  long target = 0;  // the worker's pid, for faults aimed at one
  /// What the harness saw go wrong while injecting it (a creation accepted
  /// at maxmemory, a deploy that reset a schedule, ...); empty: nothing.
  std::string problem;
};

struct schedule_grid {
  std::int64_t first_due = 0;
  std::int64_t period = 0;
  /// Its failure_policy::max_attempts; 0: check_input::max_attempts.
  std::uint32_t max_attempts = 0;
};

struct check_input {
  std::vector<run_record> runs;
  std::vector<fault_record> faults;
  std::map<std::string, schedule_grid> schedules;
  /// Every tick due at or before this must have run.
  std::int64_t check_until = 0;
  /// How far from a fault a duplicate or overlap may start and still be
  /// blamed on it: a lease plus the time to notice and reclaim.
  std::int64_t margin = 0;
  /// Dead letters found at the end: fire id ("<schedule>@<due>") -> attempts.
  std::map<std::string, std::uint32_t> dead_letters;
  /// The workers' failure_policy::max_attempts: a dead letter with fewer
  /// attempts was given up too early (schedule_grid::max_attempts wins).
  std::uint32_t max_attempts = 0;
  /// When workers logged "data_lost" (ms, system_clock).
  std::vector<std::int64_t> data_lost_reports;
};

struct check_report {
  std::uint64_t ticks_expected = 0;
  std::uint64_t ticks_run = 0;
  std::uint64_t missing = 0;
  std::uint64_t dead_lettered = 0;     // ticks that never ran but are dead letters
  std::uint64_t lost_with_data = 0;    // ticks that never ran, due inside a data_loss_fault
  std::uint64_t duplicated_ticks = 0;  // ticks that ran more than once
  std::uint64_t overlaps = 0;          // runs of one schedule that overlapped
  std::vector<std::string> violations;
  bool ok() const { return violations.empty(); }
};

/// Parses one log line; false if malformed.
bool parse_run(const std::string& line, run_record& out);

/// Every tick up to check_until ran at least once or is a dead letter (no
/// fire lost unless dead-lettered), and dead letters come only after
/// max_attempts attempts; every repeat carries a
/// different token and lies near a fault; per schedule, the lowest token
/// each occurrence ran under grows with its due; runs of one schedule
/// overlap only near a fault (where a lease can have expired).
check_report check(const check_input& in);

}  // namespace chronopool::durable::chaos

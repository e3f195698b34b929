// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The stress ledger's view of one periodic task: how often and when it ran,
// whether two runs ever overlapped, and whether it ran more often than its
// schedule allows.
#pragma once

#include <chronopool/periodic_options.hpp>
#include <chronopool/scheduled_future.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace stress {

struct periodic_record {
  using clock = std::chrono::steady_clock;

  // Set by the producer before submitting.
  bool fixed_rate = true;
  clock::duration period{};
  clock::duration initial_delay{};  // as the schedule counts it: negative ones are 0
  bool never = false;              // initial delay too large to represent: must never run
  clock::time_point submitted{};   // taken just before the submitting call
  chronopool::missed_tick_policy policy = chronopool::missed_tick_policy::burst;
  std::optional<std::uint64_t> max_runs;  // periodic_options::max_runs, when set

  // Written by the producer that owns the record (the only one controlling
  // it): pause, resume, reschedule and trigger_now move the schedule, so the
  // schedule bound (max_runs_allowed) no longer applies once one succeeded.
  bool controlled = false;
  int controls = 0;        // control calls that returned true
  bool held_paused = false;  // paused() was true right after a pause: no run may follow while it lasts
  int runs_when_paused = 0;

  // Written by the runs.
  std::atomic<int> runs{0};
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::atomic<clock::rep> last_start{0};

  // Written by the producer after submitting; read after the pool is gone.
  chronopool::scheduled_future<void> future;
  bool rejected = false;
  int runs_by_pool = 0;  // snapshot once the pool is destroyed, before shutdown_now()'s tasks run

  /// The body of the task: records the run and detects overlap.
  void run() {
    const clock::rep start = clock::now().time_since_epoch().count();
    const int now = in_flight.fetch_add(1) + 1;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    last_start.store(start);
    runs.fetch_add(1);
    in_flight.fetch_sub(1);
  }

  /// The most runs the schedule allows up to the last run's start. Every run
  /// starts at or after its ideal instant, and consecutive ideal instants are
  /// at least one period apart under every missed-tick policy (burst keeps
  /// the ideal schedule, delay and skip only move it later; fixed-delay
  /// measures from the end of a run), and the first ideal instant is at or
  /// after submitted + initial delay. So n runs need
  /// last_start >= submitted + initial + (n - 1) × period. One run of slack
  /// covers clock reads on different threads.
  std::int64_t max_runs_allowed() const {
    if (never) return 0;
    const clock::time_point first = submitted + initial_delay;
    const clock::time_point last{clock::duration(last_start.load())};
    if (last < first) return 1 + slack;
    return (last - first) / period + 1 + slack;
  }

  /// A violation message, or empty when the runs are consistent with the schedule.
  std::string check() const {
    if (max_in_flight.load() > 1) return "periodic runs overlapped";
    if (rejected) return runs.load() != 0 ? "a rejected periodic task ran" : "";
    if (max_runs && static_cast<std::uint64_t>(runs.load()) > *max_runs)
      return "a periodic task ran " + std::to_string(runs.load()) + " times, more than its max_runs " +
             std::to_string(*max_runs);
    if (controlled) return "";  // the schedule was moved: only the checks above apply
    if (never && runs_by_pool != 0) return "a periodic task with a 'never' initial delay ran";
    if (runs_by_pool > 0 && runs_by_pool > max_runs_allowed())
      return std::string(fixed_rate ? "fixed-rate" : "fixed-delay") + " task ran " + std::to_string(runs_by_pool) +
             " times, its schedule allows " + std::to_string(max_runs_allowed());
    return "";
  }

  static constexpr std::int64_t slack = 1;
};

}  // namespace stress

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chaos harness's own scheduler on the namespace, straight on Redis (not
// through the stalling proxy): it creates the schedules of every scenario,
// deploys them again while workers run, re-creates them after a data loss,
// probes Redis at maxmemory, and reads the dead letters for the checker.
#pragma once

#include "checker.hpp"

#include <chronopool/durable/schedule_spec.hpp>
#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable::chaos {

struct fleet_layout {
  int tick_schedules = 4;  ///< s0, s1, ...: task tick, every tick_period_ms, never given up
  int tick_period_ms = 100;
  /// The poison, hang and orphan schedules' failure_policy::max_attempts.
  std::uint32_t failing_attempts = 3;
};

class fleet_admin {
 public:
  fleet_admin(const redis_options& redis, const std::string& ns, int lease_ms, std::uint32_t partitions);
  ~fleet_admin();
  fleet_admin(const fleet_admin&) = delete;
  fleet_admin& operator=(const fleet_admin&) = delete;

  /// Creates the schedules in one bulk upsert, first due a little after
  /// Redis's now, and describes their grids to the checker. Throws if one
  /// is not created.
  void create(const fleet_layout& layout, check_input& in);
  /// Upserts every schedule again, as a deploy does: with `update`, in
  /// place with a new payload (each must come back "updated"), else with
  /// replace and the same start and settings (each must come back
  /// "unchanged"). What went wrong, or "".
  std::string deploy(bool update);
  /// After a data loss: creates every schedule again on its grid, first due
  /// at its first tick at or after `resume_ms`, retrying while Redis comes
  /// back (bounded). What went wrong, or "".
  std::string recreate(std::int64_t resume_ms);
  /// Merges the namespace's dead letters into `into` (fire id -> attempts).
  /// False when Redis could not be asked.
  bool collect_dead_letters(std::map<std::string, std::uint32_t>& into);
  /// A far one-shot the maxmemory probe will cancel.
  void prepare_maxmemory_probe();
  /// At maxmemory: creating a schedule must fail with out_of_memory, and
  /// cancelling the prepared one (a write that frees) must work. What went
  /// wrong, or "".
  std::string probe_at_maxmemory();
  /// Deletes every schedule (the end of the run).
  void cancel_all();

 private:
  // Each must come back `expected` (or created, with or_created).
  std::string upsert(std::vector<schedule_spec> specs, upsert_outcome expected, bool or_created);

  chronopool::scheduled_thread_pool pool_{1};
  std::unique_ptr<scheduler> sched_;
  std::vector<schedule_spec> specs_;
  int probes_ = 0;
  int deploys_ = 0;
};

}  // namespace chronopool::durable::chaos

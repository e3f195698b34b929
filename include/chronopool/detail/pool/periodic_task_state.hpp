// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The schedule of a periodic pool task: every field only a periodic task
// needs. It lives in the periodic task's own allocation (task_impl with
// Periodic) and task_base reaches it through one pointer, null for a
// one-shot task, so a one-shot task carries none of it.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>

#include <atomic>
#include <cstdint>

namespace chronopool::detail {

/// See the file comment; task_base's control functions are its only users.
struct periodic_task_state {
  // Written under the control lock, read without it by task_view (hence atomic).
  std::atomic<duration> period{};
  // Set by set_periodic() before the task is queued; a calendar task's run
  // sets them again for its next run (it has no controls to race with).
  double jitter = 0.0;
  duration leeway{};
  missed_tick_policy missed_ticks = missed_tick_policy::burst;
  bool continue_after_error = false;
  bool calendar = false;  // schedule_cron: the controls are refused (task_base::set_calendar)
  // Only the running thread writes and reads it.
  bool ends_schedule = false;  // the run returned periodic_control::stop (or past `until`)
  // Under the control lock:
  bool pause_requested = false;    // running: pause when the run ends
  bool trigger_requested = false;  // running: one extra run right after
  bool extra_run = false;          // queued: the run due now is an extra one (grid kept)
  bool has_rebase = false;         // running: rebase_period/rebase_next apply when it ends
  time_point ideal{};              // the un-jittered deadline of the current (queued: next) run
  duration rebase_period{};        // zero: keep the period
  time_point rebase_next{};
  // End conditions, set once before the task is queued.
  bool has_until = false;
  time_point until{};
  std::uint64_t max_runs = 0;  // 0: no limit
  std::uint64_t runs = 0;      // runs finished; only the running thread touches it
};

}  // namespace chronopool::detail

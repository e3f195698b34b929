// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Per-task options for periodic scheduling.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>

namespace chronopool {

/// What a fixed-rate schedule does when a run starts so late that the next
/// ideal instant has already passed (tokio's MissedTickBehavior). In every
/// policy the overdue run fires at once; the policy decides the run after it.
/// Period 100 ms, the run at 0 lasting 250 ms: burst runs at 0, 250, 250,
/// 300 (the instants 100, 200, 300), delay at 0, 250, 350, skip at 0, 250, 300.
/// The same rule holds for pool tasks, periodic handlers on executors and
/// periodic_timer.
enum class missed_tick_policy : std::uint8_t {
  /// Keep the ideal schedule: the missed runs happen back to back until the
  /// schedule has caught up (Java's fixed-rate rule). The default.
  burst,
  /// Restart the period from the overdue run: the next one comes a period
  /// after it started.
  delay,
  /// Drop the missed instants: after the overdue run, the next one is at the
  /// first ideal instant after that run started.
  skip,
};

/// What a periodic callable may return instead of void, to steer its own
/// schedule from inside a run.
enum class periodic_control : std::uint8_t {
  /// Keep the schedule: the next run comes as usual.
  keep,
  /// End the schedule after this run. A pool task's future then completes
  /// normally (get() returns, cancelled() is false); a handler on an
  /// executor becomes inactive.
  stop,
};

/// Options of one periodic task (schedule_at_fixed_rate / schedule_with_fixed_delay).
struct periodic_options {
  /// By default an exception thrown by a run stops the schedule (Java's rule):
  /// a pool task's future then rethrows it from get(); a handler on an
  /// executor keeps it in periodic_handle::error() and hands it to
  /// error_handler. When true, the exception goes to the error handler and
  /// the schedule goes on.
  bool continue_after_error = false;

  /// Periodic handlers on executors only: where their exceptions go (never
  /// out of the executor's run(); see continue_after_error). Empty: an error
  /// log_record (component "periodic", event "handler_failed") to the
  /// process-wide handler (chronopool::set_log_handler; by default one line
  /// on stderr). A pool's periodic
  /// tasks report to the pool's error_handler: setting this one for them
  /// throws std::invalid_argument.
  std::function<void(std::exception_ptr)> error_handler{};

  /// Random offset added to each run's deadline, as a fraction of the period,
  /// drawn uniformly from [0, jitter × period). It spreads a fleet's ticks so
  /// servers do not fire in lockstep; the ideal schedule itself does not drift.
  /// Must be in [0, 1).
  double jitter = 0.0;

  /// Fixed-rate only: how to treat ticks that were missed while a run was late.
  missed_tick_policy missed_ticks = missed_tick_policy::burst;

  /// Each run's deadline (after the jitter) moves up to the end of its
  /// leeway-wide slot, slots being multiples of the leeway on the steady
  /// clock's epoch: the ticks of many tasks (a server's heartbeats) that
  /// land in one slot share a deadline, and so a wake-up. A run starts no
  /// earlier than its instant and less than a leeway after; the ideal
  /// schedule itself does not drift. Must be in [0, period); 0 (the
  /// default) keeps deadlines exact.
  std::chrono::nanoseconds leeway{0};

  /// The schedule ends after this many runs (extra runs by trigger_now()
  /// count): a pool task's future then completes normally, a handler on an
  /// executor becomes inactive (periodic_handle::active() is false, error()
  /// null). Empty (the default): no limit. 0 throws std::invalid_argument
  /// naming max_runs. periodic_timer has no end conditions.
  std::optional<std::uint64_t> max_runs{};

  /// No run starts at or after this steady_clock instant. When the next
  /// run's deadline would be at or after it, the schedule ends as with
  /// max_runs (a pool task's future completes normally, a handler becomes
  /// inactive); a run taken late, after it, does not call the callable and
  /// ends the schedule. Empty (the default): no end. Not after the first
  /// run's ideal instant: std::invalid_argument naming both instants.
  std::optional<std::chrono::steady_clock::time_point> until{};
};

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// What a run of a calendar schedule is told (cron_fire), and what it does
/// with instants it missed (cron_misfire).
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>

namespace chronopool {

/// Handed to a calendar schedule's callable when it takes one
/// (scheduled_thread_pool::schedule_cron, chronopool::schedule_cron): the
/// instant this run is for. A callable invocable with a cron_fire gets it;
/// one invocable with no arguments is called without it.
struct cron_fire {
  /// The cron instant this run stands for: the schedule names it, and the
  /// run starts no earlier than it by the system clock. For a run that
  /// makes up missed instants (see cron_misfire) it is the earliest of them
  /// not yet made up, so it can lie well in the past.
  std::chrono::system_clock::time_point scheduled;
};

/// What a calendar schedule does with the instants that passed while it
/// could not run (a run that lasted past the next instant, a suspended
/// machine, a busy pool): how many of them still run, back to back and at
/// once, before the schedule waits for the next instant still ahead. The
/// ones made up are the earliest missed instants, in order; the rest are
/// dropped. Quartz names the same choices for its cron triggers.
///
/// The budget is per streak of lateness: it is refilled by every run whose
/// instant was still ahead when the previous run ended.
struct cron_misfire {
  /// How many missed instants run before the schedule jumps to the next
  /// instant still ahead: 0 drops them all, 1 (the default) runs once for
  /// them, `std::numeric_limits<std::size_t>::max()` runs every one of them.
  std::size_t max_runs = 1;

  /// Quartz's MISFIRE_INSTRUCTION_FIRE_ONCE_NOW, the default (and what its
  /// smart policy picks for cron triggers): the missed instants collapse
  /// into one run at once, then the schedule resumes at the next instant
  /// still ahead. Work missed during a suspend is done, once.
  static constexpr cron_misfire fire_once_now() noexcept { return {1}; }
  /// Quartz's MISFIRE_INSTRUCTION_DO_NOTHING, cron's own rule: missed
  /// instants are dropped; the next run is at the next instant still ahead.
  static constexpr cron_misfire skip() noexcept { return {0}; }
  /// Makes up at most @p n missed instants (the earliest ones), then drops
  /// the rest.
  static constexpr cron_misfire catch_up(std::size_t n) noexcept { return {n}; }
  /// Makes up every missed instant, as a fixed-rate schedule's burst policy
  /// does. After a long suspend that can be many runs.
  static constexpr cron_misfire catch_up_all() noexcept { return {std::numeric_limits<std::size_t>::max()}; }
};

}  // namespace chronopool

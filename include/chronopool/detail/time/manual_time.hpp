// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The time seam of a timer service: where its timers, sleeps and periodic
// handlers read "now". A service without a manual clock (every service in
// production) reads steady_clock::now(); one a test attached a
// manual_clock to reads that clock's virtual time instead.
//
// The real path pays one relaxed load of a process-wide count and a branch
// that is never taken while no manual clock exists: the count is read
// before anything of the service, so reading the time costs no extra load
// of the service or its shard. The engine (a shard) keeps its own pointer to
// the manual time, null for the real clock, read once per collect or arm.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace chronopool::detail {

/// How many manual clocks are attached to live services, process-wide.
/// Zero outside tests; the real path reads it once per reading of the time.
extern std::atomic<std::size_t> manual_clocks_attached;

/// True while any manual clock exists: only then may a service's time be
/// virtual.
inline bool any_manual_clock() noexcept {
  return manual_clocks_attached.load(std::memory_order_relaxed) != 0;
}

/// The virtual time of one manual clock: steady time, and the system
/// clock as an offset from it (moved by wall steps). Written by the thread
/// that drives the clock; read by any thread of the context.
class manual_time {
 public:
  /// Starts at the real clocks' present, so that deadlines computed from
  /// either clock before the attach stay meaningful.
  manual_time() noexcept;

  /// The virtual steady time.
  time_point now() const noexcept { return time_point(duration(steady_.load(std::memory_order_acquire))); }
  /// The virtual system time: steady time plus the wall offset.
  std::chrono::system_clock::time_point system_now() const noexcept;
  /// The virtual steady deadline standing for the virtual system instant
  /// @p instant: now() + (instant − system_now()), saturating; "never" stays.
  time_point steady_deadline_for(std::chrono::system_clock::time_point instant) const noexcept;
  /// Wall steps taken so far (set_system_time, step_system_time).
  std::uint64_t steps() const noexcept { return steps_.load(std::memory_order_acquire); }

  /// Moves the steady time to @p t (never back) and wakes blocking waits.
  void set_now(time_point t) noexcept;
  /// Moves the system time by @p step (either way); counts a wall step.
  void step_system(duration step) noexcept;

  /// Blocks until now() reaches @p t (another thread advances the clock).
  void wait_until(time_point t) const;
  /// Blocks until system_now() reaches @p t (another thread advances or
  /// steps the clock).
  void wait_until_system(std::chrono::system_clock::time_point t) const;

 private:
  std::atomic<std::int64_t> steady_;       // ns since the steady epoch
  std::atomic<std::int64_t> wall_offset_;  // system ns − steady ns
  std::atomic<std::uint64_t> steps_{0};
  mutable std::mutex mutex_;  // for the waits' sleepers only
  mutable std::condition_variable moved_;
};

}  // namespace chronopool::detail

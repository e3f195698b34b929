// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Wall-clock time for deadlines kept on the steady clock.
//
// The engine orders every deadline on std::chrono::steady_clock. A wait for
// a system_clock instant is armed at the steady deadline that stands for it
// now (steady_deadline_for), and stays right while nobody sets the system
// clock: slewing moves both clocks alike. When the system clock is stepped,
// the process-wide registry here tells every subscribed listener, which
// re-computes its wall-clock deadlines: those now passed become due at once,
// later ones move with the clock.
//
// One thread per process (started with the first subscription, stopped
// with the last) blocks on detail/platform/clock_step_watch.hpp. Tests step
// the library's view of the system clock with inject_clock_step(), which
// notifies the listeners at once, on the caller's thread.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>

#include <chrono>
#include <cstdint>

namespace chronopool::detail {

using sys_time = std::chrono::system_clock::time_point;

/// The system clock as the library reads it: system_clock::now() plus the
/// steps injected by inject_clock_step() (none outside tests).
sys_time system_now() noexcept;

/// The steady deadline that stands for the system_clock instant @p instant,
/// measured now: steady_now + (instant − system_now()), saturating; max()
/// stands for "never" (time_point::max()). A later step of the system clock
/// moves nothing by itself; listeners re-compute.
time_point steady_deadline_for(sys_time instant) noexcept;

/// Told about every step of the system clock while subscribed.
class clock_step_listener {
 public:
  /// Called after a step, on the registry's watcher thread (or on the thread
  /// that injected the step), with the registry's lock held: it must not
  /// block, must not subscribe or unsubscribe, and should only hand the
  /// re-computation to its own threads (post it, or flag it and wake them).
  virtual void on_clock_step() noexcept = 0;

 protected:
  ~clock_step_listener() = default;
};

/// Starts telling @p l about clock steps (starting the watcher thread if it
/// is the first listener). Throws std::system_error when the thread or the
/// system's watch cannot be created, std::bad_alloc.
void subscribe_clock_steps(clock_step_listener& l);
/// Stops telling @p l; once it returns, on_clock_step() of @p l neither runs
/// nor will be called. The last listener's unsubscription stops and joins
/// the watcher thread. Not from on_clock_step().
void unsubscribe_clock_steps(clock_step_listener& l) noexcept;

/// Test seam: moves system_now() by @p step and notifies every listener
/// before returning, as a real step would from the watcher thread.
void inject_clock_step(std::chrono::nanoseconds step);

/// Test seam: moves system_now() by @p step without telling anyone, as a
/// step the watcher has not reported yet would.
void shift_system_now_unnoticed(std::chrono::nanoseconds step) noexcept;

/// Steps noticed so far (real and injected), for tests and diagnostics.
std::uint64_t clock_steps_seen() noexcept;

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Notice of a step of the system (wall) clock: a discontinuous set by NTP's
// step mode, `date -s`, settimeofday, or a resume from suspend. Gradual
// slewing (adjtime) is not a step: it moves the system and steady clocks
// together. One watch is owned by the process-wide registry of
// detail/time/clock_steps.hpp, whose one thread blocks in wait().
#pragma once

#include <cstdint>
#include <memory>

namespace chronopool::detail::platform {

class clock_step_watch {
 public:
  /// Opens the watch. Throws std::system_error when the system refuses the
  /// resources it needs.
  clock_step_watch();
  ~clock_step_watch();
  clock_step_watch(const clock_step_watch&) = delete;
  clock_step_watch& operator=(const clock_step_watch&) = delete;

  /// Blocks until the system clock was stepped (true) or interrupt() was
  /// called (false; every later call returns false at once too). One
  /// thread at a time may wait.
  bool wait();
  /// Makes the current and every later wait() return false. Any thread.
  void interrupt() noexcept;
  /// The longest time a step can go unnoticed: zero where the system
  /// reports steps as they happen, otherwise the polling interval.
  static std::int64_t notice_delay_ns() noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace chronopool::detail::platform

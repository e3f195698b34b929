// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A one-shot kernel timer on the monotonic clock, used only to measure what
// arming one costs (detail/wakeup/kernel_timer_cost.hpp): it is armed and
// disarmed, never waited on. Where the system offers no timer that can be
// armed without sleeping on it, none is available and the cost is not
// measured.
#pragma once

#include <chrono>
#include <cstdint>

namespace chronopool::detail::platform {

class one_shot_kernel_timer {
 public:
  /// Opens a timer; available() tells whether there is one.
  one_shot_kernel_timer() noexcept;
  ~one_shot_kernel_timer();
  one_shot_kernel_timer(const one_shot_kernel_timer&) = delete;
  one_shot_kernel_timer& operator=(const one_shot_kernel_timer&) = delete;

  /// False where the system has no such timer (or opening it failed); the
  /// other calls then do nothing.
  bool available() const noexcept;
  /// Arms it to expire at @p deadline (absolute; the timer's clock is the
  /// one std::chrono::steady_clock reads). Reads no clock itself, so that
  /// timing the call times the arming alone.
  void arm_at(std::chrono::steady_clock::time_point deadline) noexcept;
  /// Disarms it, expired or not.
  void disarm() noexcept;

 private:
  std::intptr_t handle_ = -1;  // the system's handle; -1 when none
};

}  // namespace chronopool::detail::platform

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A step of the library's system clock (detail::inject_clock_step: it
// moves system_now() for the whole process and tells every listener at
// once), stepped back when the scope ends so later cases see the real clock.
#pragma once

#include <chronopool/detail/time/clock_steps.hpp>

#include <chrono>

namespace test_support {

class injected_step {
 public:
  explicit injected_step(std::chrono::nanoseconds d) : d_(d) { chronopool::detail::inject_clock_step(d); }
  ~injected_step() { back(); }
  injected_step(const injected_step&) = delete;
  injected_step& operator=(const injected_step&) = delete;

  /// Steps back now (once).
  void back() {
    if (d_ == std::chrono::nanoseconds::zero()) return;
    chronopool::detail::inject_clock_step(-d_);
    d_ = {};
  }

 private:
  std::chrono::nanoseconds d_;
};

}  // namespace test_support

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Stepping the machine's real clock, for the opt-in tests of wall-clock
// steps. The machines that run the tests are shared: only with
// CHRONOPOOL_TEST_CLOCK_STEP=1 may a test set CLOCK_REALTIME, and it must
// step it back by as much. Everything else injects steps through
// chronopool::detail::inject_clock_step.
#pragma once

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

#include <time.h>

namespace test_support {

/// Whether CHRONOPOOL_TEST_CLOCK_STEP=1 lets a test step the machine's clock.
inline bool may_step_the_machine_clock() {
  const char* v = std::getenv("CHRONOPOOL_TEST_CLOCK_STEP");
  return v != nullptr && std::string(v) == "1";
}

/// Steps CLOCK_REALTIME by @p by from its own reading. False (errno set)
/// when this process may not set the clock (no CAP_SYS_TIME).
inline bool step_machine_clock(std::chrono::nanoseconds by) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const auto ns = std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec) + by;
  timespec to{};
  to.tv_sec = static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(ns).count());
  to.tv_nsec = static_cast<long>((ns - std::chrono::seconds(to.tv_sec)).count());
  return ::clock_settime(CLOCK_REALTIME, &to) == 0;
}

}  // namespace test_support

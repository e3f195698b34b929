// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Timer slack on Linux: prctl(PR_SET_TIMERSLACK). See
// detail/platform/timer_slack.hpp.
#include <chronopool/detail/platform/timer_slack.hpp>

#include <sys/prctl.h>

namespace chronopool::detail::platform {

// Linux delays a sleeping thread's timed wake-up by up to its timer slack
// (50 us by default) to batch wake-ups. One nanosecond is the smallest slack
// the kernel accepts (0 means "the default").
void minimise_timer_slack() noexcept { ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); }

std::int64_t current_timer_slack_ns() noexcept {
  const int slack = ::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  return slack < 0 ? -1 : static_cast<std::int64_t>(slack);
}

}  // namespace chronopool::detail::platform

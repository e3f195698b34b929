// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Timer slack, portable fallback: standard C++ has no control over it, so
// sleeps keep the system's default precision. See
// detail/platform/timer_slack.hpp.
#include <chronopool/detail/platform/timer_slack.hpp>

namespace chronopool::detail::platform {

void minimise_timer_slack() noexcept {}

std::int64_t current_timer_slack_ns() noexcept { return -1; }

}  // namespace chronopool::detail::platform

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Timer slack: how late the system may end a thread's timed sleep so that it
// can batch wake-ups. A worker sleeps until the head deadline of its queue,
// so every unit of slack is lateness of the task. Where the slack cannot be
// set, sleeps are only less precise. Called once per pool thread.
#pragma once

#include <cstdint>

namespace chronopool::detail::platform {

/// Asks for the smallest timer slack for the calling thread. Failure only
/// costs precision, so it is ignored.
void minimise_timer_slack() noexcept;

/// The calling thread's timer slack in nanoseconds; -1 where it cannot be read.
std::int64_t current_timer_slack_ns() noexcept;

}  // namespace chronopool::detail::platform

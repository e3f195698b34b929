// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What arming a kernel timer for a near deadline costs the calling thread.
// When its expiry is the earliest on the CPU, the kernel reprograms the
// hardware timer, which in a virtual machine leaves the guest and can cost
// microseconds. A thread about to sleep for less than that would spend
// longer in the kernel than the sleep lasts, so it waits on the CPU instead.
// The cost is measured once per process.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>

namespace chronopool::detail {

/// The median time of arming a kernel timer for 20 us ahead, measured on
/// the first call and capped at 50 us so that a preempted measurement
/// cannot make callers spin long. Zero where it cannot be measured (no
/// one-shot kernel timer: detail/platform/kernel_timer.hpp), and callers
/// then count no cost for arming one.
duration near_kernel_timer_cost() noexcept;

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The one-shot kernel timer, portable fallback: none. Standard C++ arms a
// kernel timer only inside a timed wait, whose duration is the sleep, not
// the arming, so the cost cannot be measured. near_kernel_timer_cost() is
// then zero, its documented "not measured", rather than a guessed constant:
// callers count no cost for arming a timer and sleep where they would have
// spun, which keeps every wait correct and may only make a wake-up for a very
// near deadline later. See detail/platform/kernel_timer.hpp.
#include <chronopool/detail/platform/kernel_timer.hpp>

namespace chronopool::detail::platform {

one_shot_kernel_timer::one_shot_kernel_timer() noexcept = default;

one_shot_kernel_timer::~one_shot_kernel_timer() = default;

bool one_shot_kernel_timer::available() const noexcept { return handle_ >= 0; }  // never: it stays -1

void one_shot_kernel_timer::arm_at(std::chrono::steady_clock::time_point) noexcept {}

void one_shot_kernel_timer::disarm() noexcept {}

}  // namespace chronopool::detail::platform

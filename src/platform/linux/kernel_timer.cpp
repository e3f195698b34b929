// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The one-shot kernel timer on Linux: a non-blocking timerfd on
// CLOCK_MONOTONIC, armed with an absolute deadline. See
// detail/platform/kernel_timer.hpp.
#include <chronopool/detail/platform/kernel_timer.hpp>

#include <sys/timerfd.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>

namespace chronopool::detail::platform {

one_shot_kernel_timer::one_shot_kernel_timer() noexcept
    : handle_(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (handle_ < 0) handle_ = -1;
}

one_shot_kernel_timer::~one_shot_kernel_timer() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));
}

bool one_shot_kernel_timer::available() const noexcept { return handle_ >= 0; }

// libstdc++'s and libc++'s steady_clock read CLOCK_MONOTONIC, the timer's
// clock, so a steady time point is an absolute deadline for it as it is.
void one_shot_kernel_timer::arm_at(std::chrono::steady_clock::time_point deadline) noexcept {
  if (handle_ < 0) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  if (ns < 0) return;
  constexpr std::int64_t ns_per_s = 1'000'000'000;
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / ns_per_s);
  spec.it_value.tv_nsec = static_cast<long>(ns % ns_per_s);
  ::timerfd_settime(static_cast<int>(handle_), TFD_TIMER_ABSTIME, &spec, nullptr);
}

void one_shot_kernel_timer::disarm() noexcept {
  if (handle_ < 0) return;
  const itimerspec disarmed{};
  ::timerfd_settime(static_cast<int>(handle_), 0, &disarmed, nullptr);
}

}  // namespace chronopool::detail::platform

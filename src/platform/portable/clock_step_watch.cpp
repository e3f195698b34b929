// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Clock steps with standard C++ only: no system tells a program through
// standard C++ that its clock was set, so the watch compares the distance
// between the system and the steady clock every 100 ms and reports a step
// when it moved by more than 1 ms (slewing moves both clocks together,
// at most 0.5 ms per second). See detail/platform/clock_step_watch.hpp.
#include <chronopool/detail/platform/clock_step_watch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace chronopool::detail::platform {

namespace {

constexpr std::chrono::milliseconds poll_interval{100};
constexpr std::chrono::nanoseconds tolerance = std::chrono::milliseconds{1};

std::chrono::nanoseconds system_minus_steady() {
  const auto sys = std::chrono::system_clock::now().time_since_epoch();
  const auto steady = std::chrono::steady_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(sys) -
         std::chrono::duration_cast<std::chrono::nanoseconds>(steady);
}

}  // namespace

struct clock_step_watch::state {
  std::mutex mutex;
  std::condition_variable wake;
  bool interrupted = false;
  std::chrono::nanoseconds offset = system_minus_steady();
};

clock_step_watch::clock_step_watch() : state_(std::make_unique<state>()) {}

clock_step_watch::~clock_step_watch() = default;

bool clock_step_watch::wait() {
  std::unique_lock lock(state_->mutex);
  for (;;) {
    if (state_->wake.wait_for(lock, poll_interval, [&] { return state_->interrupted; })) return false;
    const std::chrono::nanoseconds now = system_minus_steady();
    const std::chrono::nanoseconds moved = now - state_->offset;
    state_->offset = now;
    if (moved > tolerance || moved < -tolerance) return true;
  }
}

void clock_step_watch::interrupt() noexcept {
  {
    const std::lock_guard lock(state_->mutex);
    state_->interrupted = true;
  }
  state_->wake.notify_all();
}

std::int64_t clock_step_watch::notice_delay_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(poll_interval).count();
}

}  // namespace chronopool::detail::platform

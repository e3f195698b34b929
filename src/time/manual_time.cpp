// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A manual clock's virtual time (see detail/time/manual_time.hpp).
#include <chronopool/detail/time/manual_time.hpp>

#include <chronopool/detail/time/clock_steps.hpp>

namespace chronopool::detail {

std::atomic<std::size_t> manual_clocks_attached{0};

manual_time::manual_time() noexcept
    : steady_(clock::now().time_since_epoch().count()),
      wall_offset_(std::chrono::duration_cast<duration>(detail::system_now().time_since_epoch()).count() -
                   steady_.load(std::memory_order_relaxed)) {}

std::chrono::system_clock::time_point manual_time::system_now() const noexcept {
  const duration wall = saturating_add(time_point(duration(steady_.load(std::memory_order_acquire))),
                                       duration(wall_offset_.load(std::memory_order_acquire)))
                            .time_since_epoch();
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(wall));
}

time_point manual_time::steady_deadline_for(std::chrono::system_clock::time_point instant) const noexcept {
  const time_point i(saturating_duration(instant.time_since_epoch(), "instant"));
  if (is_never(i)) return i;
  // instant − offset: the steady time at which the system time reads instant.
  return time_point(saturating_sub(i.time_since_epoch(), duration(wall_offset_.load(std::memory_order_acquire))));
}

void manual_time::set_now(time_point t) noexcept {
  {
    const std::lock_guard lock(mutex_);
    if (t.time_since_epoch().count() > steady_.load(std::memory_order_relaxed))
      steady_.store(t.time_since_epoch().count(), std::memory_order_release);
  }
  moved_.notify_all();
}

void manual_time::step_system(duration step) noexcept {
  {
    // Under the sleepers' lock: one that read the old offset is already
    // waiting when the notification comes.
    const std::lock_guard lock(mutex_);
    wall_offset_.fetch_add(step.count(), std::memory_order_acq_rel);
    steps_.fetch_add(1, std::memory_order_acq_rel);
  }
  moved_.notify_all();
}

void manual_time::wait_until(time_point t) const {
  std::unique_lock lock(mutex_);
  moved_.wait(lock, [&] { return now() >= t; });
}

void manual_time::wait_until_system(std::chrono::system_clock::time_point t) const {
  std::unique_lock lock(mutex_);
  moved_.wait(lock, [&] { return system_now() >= t; });
}

}  // namespace chronopool::detail

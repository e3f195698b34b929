// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Steps the library's system clock back and forth (detail::inject_clock_step)
// while the stress ledger's producers run, so that its wall-clock tasks
// (schedule_at with a system_clock instant) are re-timed by the pool's passes
// and held back by its threads while everything else races them. The steps
// are small (the tasks are due within 20 ms) and the running offset stays
// within ±60 ms; stop() steps back by what is left, so the clock ends where it
// started and the drain that follows sees the real clock.
#pragma once

#include <chronopool/detail/time/clock_steps.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

namespace stress {

class clock_stepper {
 public:
  explicit clock_stepper(std::uint64_t seed) : seed_(seed) {}
  clock_stepper(const clock_stepper&) = delete;
  clock_stepper& operator=(const clock_stepper&) = delete;
  ~clock_stepper() { stop(); }

  void start() {
    thread_ = std::thread([this] {
      std::mt19937_64 rng(seed_ ^ 0x5eed5eedull);
      std::uniform_int_distribution<int> step_us(-30'000, 30'000);
      std::uniform_int_distribution<int> pause_us(200, 2'000);
      while (!stop_.load()) {
        int d = step_us(rng);
        if ((offset_us_ + d > 60'000) || (offset_us_ + d < -60'000)) d = -d;  // stay within ±60 ms
        chronopool::detail::inject_clock_step(std::chrono::microseconds(d));
        offset_us_ += d;
        steps_.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(pause_us(rng)));
      }
    });
  }

  /// Joins the stepping thread and steps back to the real clock. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    stop_.store(true);
    thread_.join();
    if (offset_us_ != 0) chronopool::detail::inject_clock_step(std::chrono::microseconds(-offset_us_));
    offset_us_ = 0;
  }

  std::uint64_t steps() const noexcept { return steps_.load(); }

  /// Wall-clock tasks the producers submitted (counted by them).
  std::atomic<std::uint64_t> wall_tasks{0};

 private:
  std::uint64_t seed_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> steps_{0};
  std::int64_t offset_us_ = 0;  // the stepping thread's until it is joined
};

}  // namespace stress

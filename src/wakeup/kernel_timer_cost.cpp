// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Measures what re-arming a kernel timer for a near deadline costs; see
// detail/wakeup/kernel_timer_cost.hpp.
#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>

#include <chronopool/detail/platform/kernel_timer.hpp>

#include <algorithm>
#include <array>
#include <chrono>

namespace chronopool::detail {
namespace {

constexpr auto cost_cap = std::chrono::microseconds(50);

duration measure() noexcept {
  platform::one_shot_kernel_timer timer;
  if (!timer.available()) return duration::zero();
  std::array<duration, 9> samples{};
  for (auto& sample : samples) {
    // Near enough to be the CPU's earliest timer, so that arming it
    // reprograms the hardware timer, as a near deadline does; disarmed
    // straight after. Left armed, it could expire while a later sample is
    // being taken, and that sample would then include the interrupt.
    const auto deadline = clock::now() + std::chrono::microseconds(20);
    const auto start = clock::now();
    timer.arm_at(deadline);
    sample = clock::now() - start;
    timer.disarm();
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return std::min<duration>(samples[samples.size() / 2], cost_cap);
}

}  // namespace

duration near_kernel_timer_cost() noexcept {
  static const duration cost = measure();
  return cost;
}

}  // namespace chronopool::detail

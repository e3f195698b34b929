// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Records how late runs start (start − deadline) over a recent window.
//
// Every run writes one sample, so recording must be cheap and never block a
// worker: a fixed ring of relaxed atomics, written round-robin. A snapshot
// copies the ring and sorts the copy; samples overwritten mid-copy only blur
// the window, which is acceptable for statistics.
#pragma once

#include <chronopool/pool_stats.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace chronopool::detail {

class lateness_recorder {
 public:
  static constexpr std::size_t window = 1024;

  void record(std::chrono::nanoseconds lateness) noexcept {
    const std::uint64_t n = count_.fetch_add(1, std::memory_order_relaxed);
    samples_[n % window].store(lateness.count(), std::memory_order_relaxed);
  }

  lateness_summary summary() const;

 private:
  std::atomic<std::uint64_t> count_{0};
  std::array<std::atomic<std::int64_t>, window> samples_{};
};

}  // namespace chronopool::detail

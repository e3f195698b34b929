// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// How late a sleeping thread is woken after the time it asked for: the
// interrupt, the kernel's scheduler, the switch back (and for an
// io_context's native timer, its reactor); tens of microseconds on virtual
// machines. A thread that sleeps for a deadline nearer than that latency
// plus what arming the sleep costs runs later than one that waits on the
// CPU, so chronopool's waiters (a timer service's poll, a pool's leader)
// weigh it, as their own timed sleeps show it.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace chronopool::detail {

/// A moving average of observed wake-up latencies (over about the last
/// eight). Threads may observe concurrently: a lost update is one sample
/// less, nothing worse.
class wakeup_latency_average {
 public:
  /// What one observation counts for at most: one wake-up that came a
  /// scheduling quantum late (the thread preempted) must not make a waiter
  /// spin for milliseconds after it.
  static constexpr duration cap = std::chrono::microseconds(100);

  /// A sleep ended @p late after its time (clamped to [0, cap]; the first
  /// observation counts whole).
  void observe(duration late) noexcept {
    const auto sample = std::clamp(late, duration::zero(), cap).count();
    const auto old = average_.load(std::memory_order_relaxed);
    average_.store(old < 0 ? sample : old + (sample - old) / 8, std::memory_order_relaxed);
  }
  /// The average; zero until something was observed.
  duration get() const noexcept {
    const auto a = average_.load(std::memory_order_relaxed);
    return a < 0 ? duration::zero() : duration(a);
  }

 private:
  std::atomic<duration::rep> average_{-1};  // none observed yet
};

/// How long a function posted to a context from another thread takes to
/// start there, as a level that rises at once and falls slowly: a hand-off
/// that must be on time by then has to allow for the slow starts (a thread
/// asleep), not the average, which the quick ones (a thread that was awake)
/// pull down. Capped as above; starts at the cap until it has seen one.
class handoff_latency_level {
 public:
  static constexpr duration cap = wakeup_latency_average::cap;

  void observe(duration late) noexcept {
    const auto sample = std::clamp(late, duration::zero(), cap).count();
    const auto old = level_.load(std::memory_order_relaxed);
    // Down by a 64th of the gap per quicker start: a level a sleeping
    // thread set lasts for dozens of hand-offs to awake ones.
    const auto next = !seen_.load(std::memory_order_relaxed) || sample >= old ? sample : old - (old - sample) / 64;
    level_.store(next, std::memory_order_relaxed);
    seen_.store(true, std::memory_order_relaxed);
  }
  duration get() const noexcept { return duration(level_.load(std::memory_order_relaxed)); }

 private:
  std::atomic<duration::rep> level_{cap.count()};
  std::atomic<bool> seen_{false};
};

}  // namespace chronopool::detail

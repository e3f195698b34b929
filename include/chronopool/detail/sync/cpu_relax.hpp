// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One step of a busy wait.
#pragma once

#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace chronopool::detail {

/// Tells the core (and a hyperthread sibling) that this thread is only
/// polling.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

/// How long a busy wait runs before it offers its CPU (sched_yield) to
/// another runnable thread. The kernel often puts two of a context's threads
/// on one CPU: the one a hand-off just woke then preempts the one that holds
/// the due work, and a wait that spins on through its time slice keeps that
/// work waiting behind it.
inline constexpr std::chrono::microseconds spin_yield_interval{20};

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Taking a lock that is held for a moment without going to sleep for it.
//
// The delayed work queue's critical sections last well under a microsecond,
// but its takers and submitters take the lock at a high rate. A std::mutex
// puts the loser of a collision to sleep in the kernel at once, and its CPU
// goes idle; the holder then pays a futex wake-up on unlock (waking an idle
// CPU), microseconds by which the task it has just taken starts late.
// Retrying in user space for a bounded time first turns a short collision
// into a short wait, and leaves the sleep for a holder that is descheduled.
#pragma once

#include <chronopool/detail/sync/cpu_relax.hpp>

#include <chrono>
#include <mutex>

namespace chronopool::detail {

/// How long lock_spinning() retries before it blocks: longer than any
/// critical section of the queue that is not held up by the scheduler.
inline constexpr std::chrono::microseconds lock_spin_budget{20};

/// Acquires @p lock's mutex (not held yet), retrying for up to
/// lock_spin_budget before it blocks.
inline void lock_spinning(std::unique_lock<std::mutex>& lock) {
  if (lock.try_lock()) return;
  const auto give_up = std::chrono::steady_clock::now() + lock_spin_budget;
  do {
    for (int i = 0; i < 8; ++i) cpu_relax();
    if (lock.try_lock()) return;
  } while (std::chrono::steady_clock::now() < give_up);
  lock.lock();
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A mutex that spins for a moment before it sleeps. A timer shard's critical
// sections last tens of nanoseconds, but a thread that submits timers and the
// threads that fire them take the same lock at a high rate: with a plain
// std::mutex the loser of each collision sleeps in the kernel and the winner
// pays a futex wake-up on unlock, a microsecond or more each time. glibc's
// adaptive mutex retries in user space first (a bounded, tunable number of
// times), so a short collision costs a short wait. Elsewhere it is a
// std::mutex.
#pragma once

#include <mutex>

#if __has_include(<pthread.h>)
#include <pthread.h>  // before the test below: it defines the initializer
#endif

#if defined(__GLIBC__) && defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
#define CHRONOPOOL_ADAPTIVE_MUTEX 1
#else
#define CHRONOPOOL_ADAPTIVE_MUTEX 0
#endif

namespace chronopool::detail {

#if CHRONOPOOL_ADAPTIVE_MUTEX

class adaptive_mutex {
 public:
  adaptive_mutex() noexcept = default;
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;
  ~adaptive_mutex() { pthread_mutex_destroy(&m_); }

  // A default-initialised (not error-checking) mutex reports no errors a
  // correct caller can get, as std::mutex's lock() in practice.
  void lock() noexcept { pthread_mutex_lock(&m_); }
  bool try_lock() noexcept { return pthread_mutex_trylock(&m_) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&m_); }

 private:
  pthread_mutex_t m_ = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
};

#else

using adaptive_mutex = std::mutex;

#endif

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Small helpers shared by the pool unit tests: bounded waits only, so a broken
// pool fails a test instead of hanging it.
#pragma once

#include "../../support/bounded_wait.hpp"

#include "../../support/asio.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace pool_test {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// Generous bound for anything that "must happen" (CI: 2 cores, sanitizers).
inline constexpr std::chrono::seconds long_wait{10};

/// Polls @p pred every millisecond until it holds or @p timeout passes.
template <class Pred>
bool eventually(Pred pred, steady::duration timeout = long_wait) {
  return test_support::eventually(pred, timeout);
}

/// One completion handler's record: how often it ran, and its error.
struct recorded {
  int calls = 0;
  sys_ns::error_code ec;
};

/// A one-way gate: tasks wait on it (bounded), the test opens it.
class gate {
 public:
  // Notifies under the lock: a waiter that sees the gate open may destroy it
  // at once, so open() must not touch it after unlocking.
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  /// True when opened within @p timeout.
  bool wait(steady::duration timeout = long_wait) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }
  bool is_open() {
    std::lock_guard lock(mutex_);
    return open_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

/// Counts events and lets the test wait for a count (bounded).
class counter {
 public:
  void bump() {  // notifies under the lock, as gate::open()
    std::lock_guard lock(mutex_);
    ++n_;
    cv_.notify_all();
  }
  std::size_t value() {
    std::lock_guard lock(mutex_);
    return n_;
  }
  bool wait_for_at_least(std::size_t n, steady::duration timeout = long_wait) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return n_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t n_ = 0;
};

}  // namespace pool_test

#include <chronopool/scheduled_thread_pool.hpp>

#include <string>

namespace pool_test {

/// The pool's state as text, so Boost.Test can print it on failure.
inline std::string state_name(const chronopool::scheduled_thread_pool& p) { return std::string(to_string(p.state())); }
inline std::string state_name(chronopool::run_state s) { return std::string(to_string(s)); }

/// True when @p f became done within @p timeout.
inline bool ready_within(const chronopool::scheduled_future_base& f, steady::duration timeout = long_wait) {
  return f.wait_for(timeout) == std::future_status::ready;
}

}  // namespace pool_test

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Small helpers shared by the scheduling/futures/periodic tests.
//
// Boost.Test assertions are not thread-safe: pool threads only record into
// the objects below, and the test thread checks afterwards.
#pragma once

#include "../../support/bounded_wait.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace chronopool_test {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

/// Bound of every wait in these tests: long enough for a loaded CI machine
/// under a sanitizer, short enough that a broken pool fails instead of hanging.
inline constexpr auto wait_limit = std::chrono::seconds(5);

/// Fails the test (instead of hanging it) unless @p f is ready within wait_limit.
template <class F>
void require_ready(const F& f) {
  BOOST_REQUIRE(f.wait_for(wait_limit) == std::future_status::ready);
}

/// Polls @p pred until it holds or @p limit passes; returns its last value.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = wait_limit) {
  return test_support::eventually(pred, limit);
}

/// A one-way gate: tasks wait on it (bounded), the test opens it.
class gate {
 public:
  void open() {
    {
      std::lock_guard lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }
  /// True when the gate opened within @p limit.
  bool wait(std::chrono::milliseconds limit = wait_limit) const {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, limit, [&] { return open_; });
  }
  bool is_open() const {
    std::lock_guard lock(m_);
    return open_;
  }

 private:
  mutable std::mutex m_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

/// Opens a gate when it goes out of scope. Declare it after the pool so a
/// failing test releases blocked tasks before the pool's destructor joins.
class gate_opener {
 public:
  explicit gate_opener(gate& g) noexcept : g_(g) {}
  gate_opener(const gate_opener&) = delete;
  gate_opener& operator=(const gate_opener&) = delete;
  ~gate_opener() { g_.open(); }

 private:
  gate& g_;
};

/// A mutex-protected list that pool threads append to.
template <class T>
class recorder {
 public:
  void push(T v) {
    std::lock_guard lock(m_);
    items_.push_back(std::move(v));
  }
  std::vector<T> snapshot() const {
    std::lock_guard lock(m_);
    return items_;
  }
  std::size_t size() const {
    std::lock_guard lock(m_);
    return items_.size();
  }

 private:
  mutable std::mutex m_;
  std::vector<T> items_;
};

/// Milliseconds as a double, for readable failure messages.
template <class Rep, class Period>
double ms(std::chrono::duration<Rep, Period> d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace chronopool_test

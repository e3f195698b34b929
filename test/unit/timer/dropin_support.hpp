// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the drop-in suites share: the timer types they run against (Asio's
// and chronopool's), bounded runs, and a recorder for one handler's outcome.
// Every test of the suites is written against Asio's timer API alone and runs
// unchanged for each type, so Asio's behaviour is the reference for chronopool's.
#pragma once

#include "../../support/asio.hpp"
#include "timer_test_support.hpp"

#include <chronopool/steady_timer.hpp>
#include <chronopool/system_timer.hpp>

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <exception>
#include <future>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;

namespace {

using timer_types =
    boost::mpl::list<asio::steady_timer, chronopool::steady_timer, asio::system_timer, chronopool::system_timer>;

/// A moment on both clocks, comparable with either clock's time points (a
/// steady or a system timer's expiry) and measured from a steady start.
struct stamp {
  steady::time_point steady_at{};
  std::chrono::system_clock::time_point wall_at{};

  static stamp now() { return {steady::now(), std::chrono::system_clock::now()}; }
  friend bool operator>=(const stamp& s, steady::time_point t) { return s.steady_at >= t; }
  friend bool operator>=(const stamp& s, std::chrono::system_clock::time_point t) { return s.wall_at >= t; }
  friend bool operator<(const stamp& a, const stamp& b) { return a.steady_at < b.steady_at; }
  friend steady::duration operator-(const stamp& s, steady::time_point t) { return s.steady_at - t; }
  friend std::chrono::system_clock::duration operator-(const stamp& s, std::chrono::system_clock::time_point t) {
    return s.wall_at - t;
  }
};

/// What one completion handler saw.
struct outcome {
  int calls = 0;
  error_code ec;
  stamp at{};

  auto handler() {
    return [this](const error_code& e) {
      ++calls;
      ec = e;
      at = stamp::now();
    };
  }
};

/// A co_spawn completion token that rethrows the coroutine's exception out of run().
inline constexpr auto rethrow = [](const std::exception_ptr& e) {
  if (e) std::rethrow_exception(e);
};

}  // namespace

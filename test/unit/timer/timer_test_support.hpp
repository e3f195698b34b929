// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The names the timer tests share, and how long they wait for what must happen.
#pragma once

#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"

#include <chrono>

using namespace std::chrono_literals;
using sys_ns::error_code;
using steady = std::chrono::steady_clock;
using timer = chronopool::steady_timer;

/// Generous bound for anything that must happen (CI: 2 cores, sanitizers):
/// a limit on waiting, never a timing assertion.
inline constexpr auto long_wait = 10s;

/// A wait that must not complete during a test.
inline constexpr auto far_away = 1h;

/// io.run(), bounded: a broken timer fails the test instead of hanging it.
/// Returns whether run ended because the context ran out of work.
inline bool run_bounded(asio::io_context& io) {
  io.run_for(long_wait);
  return io.stopped();
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Bounded polling, shared by the test suites: a broken library fails a test
// instead of hanging it. Each suite wraps it with its own default bound.
#pragma once

#include <chrono>
#include <thread>

namespace test_support {

/// Polls @p pred every @p step until it holds or @p timeout has passed;
/// returns its last value.
template <class Pred>
bool eventually(Pred&& pred, std::chrono::steady_clock::duration timeout,
                std::chrono::steady_clock::duration step = std::chrono::milliseconds(1)) {
  const auto limit = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= limit) return pred();
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace test_support

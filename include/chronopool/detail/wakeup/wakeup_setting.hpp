// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The range a wake-up setting (a pool's or a context's slack, the poll
// window) may take, checked once for all of them.
#pragma once

#include <chrono>
#include <string_view>

namespace chronopool::detail {

/// Throws std::invalid_argument, naming @p what and @p value, unless @p value
/// lies within [0, 1 ms]: longer would be a coarser timer than the caller
/// asked for, not a wake-up's tolerance.
void check_wakeup_setting(std::string_view what, std::chrono::nanoseconds value);

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See detail/wakeup/wakeup_setting.hpp.
#include <chronopool/detail/wakeup/wakeup_setting.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <stdexcept>

namespace chronopool::detail {

void check_wakeup_setting(std::string_view what, std::chrono::nanoseconds value) {
  if (value < std::chrono::nanoseconds::zero() || value > std::chrono::milliseconds(1))
    throw std::invalid_argument(fmt::format("{} must be between 0 and 1 ms (was {})", what, value));
}

}  // namespace chronopool::detail

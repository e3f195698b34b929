// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::steady_timer — change one type name to move from Asio's timer.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>

#include <chrono>

namespace chronopool {

/// Drop-in for asio_ns::steady_timer.
using steady_timer = basic_scheduled_timer<std::chrono::steady_clock>;

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::system_timer — change one type name to move from Asio's system_timer.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>

#include <chrono>

namespace chronopool {

/// Drop-in for asio_ns::system_timer, whose waits follow steps of the
/// wall clock (see basic_scheduled_timer<std::chrono::system_clock>).
using system_timer = basic_scheduled_timer<std::chrono::system_clock>;

}  // namespace chronopool

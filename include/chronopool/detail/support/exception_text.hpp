// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One line of text for an exception that has nowhere else to go.
#pragma once

#include <exception>
#include <string>

namespace chronopool::detail {

/// what() of a std::exception; a fixed text for anything else.
std::string exception_text(const std::exception_ptr& error);

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Lets Boost.Test print chronopool::durable::error in failed comparisons.
#pragma once

#include <chronopool/durable/error.hpp>

#include <ostream>

namespace chronopool::durable {

inline std::ostream& operator<<(std::ostream& os, error e) {
  return os << make_error_code(e).message();
}

}  // namespace chronopool::durable

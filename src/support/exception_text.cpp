// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/detail/support/exception_text.hpp>

namespace chronopool::detail {

std::string exception_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace chronopool::detail

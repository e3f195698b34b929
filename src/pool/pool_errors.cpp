// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where errors no caller can see go: the error_handler option, or stderr.
#include <chronopool/detail/pool/pool_core.hpp>

#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/task_view.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace chronopool::detail {

void pool_core::report_error(std::exception_ptr error, const task_base& t) noexcept {
  try {
    if (options_.error_handler) {
      const task_view view(t);
      options_.error_handler(error, &view);
    } else {
      fmt::print(stderr, "chronopool: task #{} failed: {}\n", t.sequence(), exception_text(error));
    }
  } catch (...) {
    // An error handler that throws has nowhere left to report to.
  }
}

void pool_core::report_untied_error(std::exception_ptr error, const char* source) noexcept {
  try {
    if (options_.error_handler) {
      options_.error_handler(error, nullptr);
    } else {
      fmt::print(stderr, "chronopool: {} threw: {}\n", source, exception_text(error));
    }
  } catch (...) {
  }
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where errors no caller can see go: the error_handler option, or a log
// record for the pool's log handler (or the process-wide one).
#include <chronopool/detail/pool/pool_core.hpp>

#include <chronopool/detail/support/emit_log.hpp>
#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/log.hpp>
#include <chronopool/task_view.hpp>

#include <fmt/format.h>

#include <string>

namespace chronopool::detail {

void pool_core::report_error(std::exception_ptr error, const task_base& t) noexcept {
  try {
    if (options_.error_handler) {
      const task_view view(t);
      options_.error_handler(error, &view);
      return;
    }
    const std::string task = fmt::format("{}", t.sequence());
    const std::string message = fmt::format("task #{} failed: {}", task, exception_text(error));
    const log_field fields[] = {{"pool", options_.thread_name_prefix}, {"task", task}};
    emit_log(options_.log_handler, {log_severity::error, "pool", "task_failed", message, error, fields});
  } catch (...) {
    // An error handler that throws has nowhere left to report to.
  }
}

void pool_core::report_untied_error(std::exception_ptr error, const char* source, const char* event) noexcept {
  try {
    if (options_.error_handler) {
      options_.error_handler(error, nullptr);
      return;
    }
    const std::string message = fmt::format("{} threw: {}", source, exception_text(error));
    const log_field fields[] = {{"pool", options_.thread_name_prefix}};
    emit_log(options_.log_handler, {log_severity::error, "pool", event, message, error, fields});
  } catch (...) {
  }
}

}  // namespace chronopool::detail

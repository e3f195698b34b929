// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::log_record and the log handlers: where the library reports
/// what it cannot return to a caller.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace chronopool {

/// How much a log record matters, least first.
enum class log_severity : std::uint8_t {
  debug,    ///< detail for whoever diagnoses the library
  info,     ///< a normal event worth a line (a connection made)
  warning,  ///< something went wrong and was handled (a retry)
  error,    ///< work or an event was lost to the caller (an exception nobody reads)
};

/// The name of @p s in lower case ("debug", "info", "warning", "error").
std::string_view to_string(log_severity s) noexcept;

/// A name and a value a record carries beside its message, for structured
/// logs (for example {"task", "17"}).
struct log_field {
  std::string_view name;   ///< the field's name: lower case, words joined by '_'
  std::string_view value;  ///< its value as text
};

/// One report of the library. Every view refers to storage that lives only
/// during the handler's call: copy what you keep.
struct log_record {
  log_severity severity = log_severity::error;  ///< how much it matters
  /// What reports it: "pool", "periodic" (handlers on executors) or "durable".
  std::string_view component;
  /// A stable name of the kind of event, for filters and alerts, for example
  /// "task_failed", "hook_failed", "handler_failed".
  std::string_view event;
  /// One line for humans, without a trailing newline.
  std::string_view message;
  /// The exception behind the event, or null.
  std::exception_ptr error;
  /// Structured details (may be empty).
  std::span<const log_field> fields;
};

/// Receives log records. Called on whatever thread the event happened on,
/// possibly several at once: it must be thread-safe. An exception it throws
/// is swallowed (there is nowhere left to report it).
using log_handler = std::function<void(const log_record&)>;

/// Sets the process-wide handler, used wherever no more specific one is set
/// (scheduled_thread_pool_options::log_handler and the like). An empty handler restores the
/// default, write_log_line() to stderr. Safe to call at any time from any
/// thread; a record being delivered meanwhile goes to the old or the new one.
void set_log_handler(log_handler handler);

/// The text the default handler writes for @p record, without a newline:
/// `chronopool <component> <severity>: <message>`, then ` [name=value ...]`
/// when the record has fields.
std::string format_log_line(const log_record& record);

/// The default handler: format_log_line() and a newline, written to stderr
/// in one call (lines of concurrent records do not interleave).
void write_log_line(const log_record& record);

}  // namespace chronopool

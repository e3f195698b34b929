// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The process-wide log handler, the default line format, and delivery.
// See chronopool/log.hpp and detail/support/emit_log.hpp.
#include <chronopool/detail/support/emit_log.hpp>
#include <chronopool/log.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>

namespace chronopool {

namespace {

// A handler is copied out under the lock and called outside it, so a slow
// handler does not serialise the threads that log, and a handler may itself
// call set_log_handler().
struct process_handler {
  std::mutex mutex;
  std::shared_ptr<const log_handler> handler;  // null: write_log_line
};

process_handler& the_handler() {
  // Never destroyed: records may be logged during static destruction.
  static process_handler* const h = new process_handler;
  return *h;
}

}  // namespace

std::string_view to_string(log_severity s) noexcept {
  switch (s) {
    case log_severity::debug:
      return "debug";
    case log_severity::info:
      return "info";
    case log_severity::warning:
      return "warning";
    case log_severity::error:
      return "error";
  }
  return "unknown";
}

void set_log_handler(log_handler handler) {
  std::shared_ptr<const log_handler> next;
  if (handler) next = std::make_shared<const log_handler>(std::move(handler));
  process_handler& h = the_handler();
  const std::lock_guard lock(h.mutex);
  h.handler.swap(next);
  // The old handler (now in next) is released outside the lock.
}

std::string format_log_line(const log_record& record) {
  std::string line = fmt::format("chronopool {} {}: {}", record.component, to_string(record.severity), record.message);
  if (!record.fields.empty()) {
    line += " [";
    bool first = true;
    for (const log_field& f : record.fields) {
      if (!first) line += ' ';
      first = false;
      line += f.name;
      line += '=';
      line += f.value;
    }
    line += ']';
  }
  return line;
}

void write_log_line(const log_record& record) {
  std::string line = format_log_line(record);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

namespace detail {

void emit_log(const log_handler& local, const log_record& record) noexcept {
  try {
    if (local) {
      local(record);
      return;
    }
    emit_log(record);
  } catch (...) {
    // A handler that throws has nowhere left to report to.
  }
}

void emit_log(const log_record& record) noexcept {
  try {
    std::shared_ptr<const log_handler> handler;
    {
      process_handler& h = the_handler();
      const std::lock_guard lock(h.mutex);
      handler = h.handler;
    }
    if (handler)
      (*handler)(record);
    else
      write_log_line(record);
  } catch (...) {
  }
}

}  // namespace detail
}  // namespace chronopool

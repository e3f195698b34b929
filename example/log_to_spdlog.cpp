// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool's log records routed to spdlog: one process-wide handler maps
// the severity to spdlog's level and appends the structured fields. The
// library itself does not depend on spdlog; any logger fits the same way.
#include <chronopool/log.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <string>

namespace {

spdlog::level::level_enum to_spdlog(chronopool::log_severity s) {
  switch (s) {
    case chronopool::log_severity::debug:
      return spdlog::level::debug;
    case chronopool::log_severity::info:
      return spdlog::level::info;
    case chronopool::log_severity::warning:
      return spdlog::level::warn;
    case chronopool::log_severity::error:
      break;
  }
  return spdlog::level::err;
}

}  // namespace

int main() {
  auto logger = spdlog::stdout_logger_mt("chronopool");
  logger->set_pattern("[%l] %v");
  chronopool::set_log_handler([logger](const chronopool::log_record& r) {
    std::string fields;
    for (const chronopool::log_field& f : r.fields) fields += fmt::format(" {}={}", f.name, f.value);
    logger->log(to_spdlog(r.severity), "[{}:{}] {}{}", r.component, r.event, r.message, fields);
  });

  chronopool::scheduled_thread_pool_options options;
  options.thread_name_prefix = "reports";
  chronopool::scheduled_thread_pool pool(options);
  // A fire-and-forget task that fails: nobody holds a future for it, so the
  // pool logs it.
  pool.execute([] { throw std::runtime_error("disk full"); });
  pool.join();

  chronopool::set_log_handler({});  // back to one line on stderr
  logger->flush();
}

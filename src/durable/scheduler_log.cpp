// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See scheduler_log.hpp.
#include "scheduler_log.hpp"

#include <chronopool/detail/support/emit_log.hpp>
#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/durable/error.hpp>
#include <chronopool/log.hpp>

#include <fmt/format.h>

#include <string>

namespace chronopool::durable::detail {

bool is_refusal(const boost::system::error_code& ec) noexcept {
  return ec == error::auth_failed || ec == error::out_of_memory || ec == error::tls_failed ||
         ec == error::version_mismatch || ec == error::partitions_mismatch;
}

void link_log::failed(const scheduler_options& o, const boost::system::error_code& ec) {
  if (ec == last_) return;
  last_ = ec;
  const bool refused = is_refusal(ec);
  const std::string message = fmt::format("{} link: {}", link_, ec.message());
  const chronopool::log_field fields[] = {{"namespace", o.name_space}, {"link", link_}};
  chronopool::detail::emit_log(
      o.log_handler, {refused ? log_severity::error : log_severity::warning, "durable",
                      ec == error::auth_failed     ? "auth_failed"
                      : ec == error::out_of_memory ? "out_of_memory"
                      : ec == error::tls_failed    ? "tls_failed"
                      : ec == error::version_mismatch ? "version_mismatch"
                      : ec == error::partitions_mismatch ? "partitions_mismatch"
                                                   : "connection_failed",
                      message, nullptr, fields});
}

void link_log::opened(const scheduler_options& o) {
  if (!last_) return;
  last_ = {};
  const std::string message = fmt::format("{} link: connected", link_);
  const chronopool::log_field fields[] = {{"namespace", o.name_space}, {"link", link_}};
  chronopool::detail::emit_log(o.log_handler, {log_severity::info, "durable", "connected", message, nullptr, fields});
}

void log_control_loop_error(const scheduler_options& o, const std::exception& e) noexcept {
  try {
    const std::string message = fmt::format("control loop error: {}", e.what());
    const chronopool::log_field fields[] = {{"namespace", o.name_space}};
    chronopool::detail::emit_log(o.log_handler,
                                 {log_severity::error, "durable", "control_loop_error", message, nullptr, fields});
  } catch (...) {
  }
}

void log_handler_failed(const scheduler_options& o, const fire_context& ctx, std::exception_ptr error) noexcept {
  try {
    const std::string message =
        fmt::format("handler of task '{}' threw: {}", ctx.task, chronopool::detail::exception_text(error));
    const std::string attempt = fmt::format("{}", ctx.attempt);
    const chronopool::log_field fields[] = {{"namespace", o.name_space},
                                            {"schedule", ctx.schedule_id},
                                            {"fire", ctx.fire_id},
                                            {"attempt", attempt}};
    chronopool::detail::emit_log(o.log_handler,
                                 {log_severity::warning, "durable", "handler_failed", message, error, fields});
  } catch (...) {
  }
}

void log_dead_lettered(const scheduler_options& o, const claimed_fire& f, std::string_view error_text) noexcept {
  try {
    const std::string fire = fmt::format("{}@{}", f.id, f.due_ms);
    const std::string message =
        fmt::format("fire {} of task '{}' dead-lettered after {} attempts: {}", fire, f.task, f.attempt, error_text);
    const std::string attempt = fmt::format("{}", f.attempt);
    const chronopool::log_field fields[] = {
        {"namespace", o.name_space}, {"schedule", f.id}, {"fire", fire}, {"attempt", attempt}};
    chronopool::detail::emit_log(o.log_handler,
                                 {log_severity::warning, "durable", "dead_lettered", message, nullptr, fields});
  } catch (...) {
  }
}

void log_handler_timed_out(const scheduler_options& o, const claimed_fire& f, std::int64_t timeout_ms) noexcept {
  try {
    const std::string fire = fmt::format("{}@{}", f.id, f.due_ms);
    const std::string message = fmt::format("handler of task '{}' ran past its timeout of {} ms on fire {}: "
                                            "asked to stop, its fire given back",
                                            f.task, timeout_ms, fire);
    const std::string attempt = fmt::format("{}", f.attempt);
    const chronopool::log_field fields[] = {
        {"namespace", o.name_space}, {"schedule", f.id}, {"fire", fire}, {"attempt", attempt}};
    chronopool::detail::emit_log(o.log_handler,
                                 {log_severity::warning, "durable", "handler_timed_out", message, nullptr, fields});
  } catch (...) {
  }
}

void log_data_lost(const scheduler_options& o, std::string_view old_epoch, std::string_view new_epoch) noexcept {
  try {
    const std::string message = fmt::format(
        "{}: epoch {} is gone{}{}; fires claimed in it are not acknowledged, schedules created before it "
        "must be created again; fencing tokens keep growing",
        make_error_code(error::data_lost).message(), old_epoch, new_epoch.empty() ? "" : ", now ", new_epoch);
    const chronopool::log_field fields[] = {
        {"namespace", o.name_space}, {"old_epoch", old_epoch}, {"new_epoch", new_epoch}};
    chronopool::detail::emit_log(o.log_handler,
                                 {log_severity::error, "durable", "data_lost", message, nullptr, fields});
  } catch (...) {
  }
}

}  // namespace chronopool::durable::detail

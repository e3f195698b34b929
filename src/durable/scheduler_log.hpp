// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What a durable scheduler logs (chronopool/log.hpp), to
// scheduler_options::log_handler or else the process-wide handler.
// Connection trouble is logged when it changes, not at every retry.
#pragma once

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/fire_context.hpp>
#include <chronopool/durable/scheduler_options.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <exception>
#include <string_view>

namespace chronopool::durable::detail {

/// A link failed because it was refused (auth_failed, out_of_memory,
/// tls_failed): waiting will not help, an operator has to act. Operations
/// fail with it at once, it is retried at the slowest pace and logged as an
/// error.
bool is_refusal(const boost::system::error_code& ec) noexcept;

/// The log state of one link (the command link, the claim link...): what
/// was last said about it. Used on the control thread only.
class link_log {
 public:
  explicit link_log(std::string_view link) : link_(link) {}

  /// The link could not be opened, or was lost, with @p ec: logged when it
  /// differs from what was last logged for this link (refusals as errors,
  /// anything else as a warning).
  void failed(const scheduler_options& o, const boost::system::error_code& ec);
  /// The link is open: logged (info) when a failure had been logged.
  void opened(const scheduler_options& o);

 private:
  std::string_view link_;
  boost::system::error_code last_;
};

/// The control loop threw (it goes on serving the others).
void log_control_loop_error(const scheduler_options& o, const std::exception& e) noexcept;

/// A handler threw and no on_handler_error took the error.
void log_handler_failed(const scheduler_options& o, const fire_context& ctx, std::exception_ptr error) noexcept;

/// A fire's last allowed attempt failed with @p error_text: it is a dead
/// letter now (a warning, event "dead_lettered").
void log_dead_lettered(const scheduler_options& o, const claimed_fire& f, std::string_view error_text) noexcept;

/// A handler ran past its handler_options::timeout of @p timeout_ms and was
/// abandoned (a warning, event "handler_timed_out").
void log_handler_timed_out(const scheduler_options& o, const claimed_fire& f, std::int64_t timeout_ms) noexcept;

/// The namespace's epoch changed from @p old_epoch to @p new_epoch (empty:
/// not known yet, a fire's ack was refused): its data was lost (an error,
/// event "data_lost", message with error::data_lost's).
void log_data_lost(const scheduler_options& o, std::string_view old_epoch, std::string_view new_epoch) noexcept;

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Delivering a log record: to the handler of the component that reports it
// when it has one, otherwise to the process-wide handler (chronopool/log.hpp).
#pragma once

#include <chronopool/log.hpp>

namespace chronopool::detail {

/// Delivers @p record to @p local when it is set, otherwise to the
/// process-wide handler. Never throws: a handler's exception is swallowed.
void emit_log(const log_handler& local, const log_record& record) noexcept;

/// The same, to the process-wide handler only.
void emit_log(const log_record& record) noexcept;

}  // namespace chronopool::detail

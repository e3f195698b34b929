// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Names of threads as the operating system shows them (debuggers, top -H).
// A name is a diagnostic only: where threads cannot be named the calls do
// nothing, and nothing else depends on them. Each pool thread names itself
// once, when it starts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chronopool::detail::platform {

/// Names the calling thread @p name, cut to max_thread_name_length() bytes.
/// Failure is ignored (the name is only a diagnostic).
void set_current_thread_name(std::string_view name) noexcept;

/// The calling thread's name; empty where threads have no names.
std::string current_thread_name();

/// The longest name the system keeps, in bytes; 0 where threads cannot be
/// named (set_current_thread_name() then does nothing).
std::size_t max_thread_name_length() noexcept;

}  // namespace chronopool::detail::platform

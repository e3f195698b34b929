// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Thread names, portable fallback: standard C++ cannot name a thread, so
// threads keep the system's default name. Names are diagnostics only. See
// detail/platform/thread_naming.hpp.
#include <chronopool/detail/platform/thread_naming.hpp>

namespace chronopool::detail::platform {

void set_current_thread_name(std::string_view) noexcept {}

std::string current_thread_name() { return {}; }

std::size_t max_thread_name_length() noexcept { return 0; }

}  // namespace chronopool::detail::platform

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Process memory, portable fallback: standard C++ cannot read the resident
// set or the allocator's statistics, so every figure is 0 ("unavailable")
// and the peak cannot be reset. See detail/platform/process_memory.hpp.
#include <chronopool/detail/platform/process_memory.hpp>

namespace chronopool::detail::platform {

std::int64_t resident_bytes() { return 0; }

std::int64_t peak_resident_bytes() { return 0; }

bool reset_peak_resident() { return false; }

void trim_heap() noexcept {}

std::int64_t allocator_in_use_bytes() { return 0; }

std::int64_t heap_in_use_bytes() { return 0; }

}  // namespace chronopool::detail::platform

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Memory of this process, for the benchmarks and the soak test (the library
// itself does not call these). Every figure is in bytes, and 0 means
// "unavailable here": callers skip what they cannot measure rather than
// read 0 as a measurement.
//
// Peaks are process-wide, so a workload measures deltas: it trims the heap,
// resets the peak, takes a baseline, and reads the peak or current value
// later. Trimming matters because an allocator may keep freed memory mapped:
// the previous run's garbage would be counted as this run's baseline.
#pragma once

#include <cstdint>

namespace chronopool::detail::platform {

/// The resident set size; 0 when unavailable.
std::int64_t resident_bytes();
/// The peak resident set size since the last reset_peak_resident() (or the
/// process's start); 0 when unavailable.
std::int64_t peak_resident_bytes();
/// Resets the peak to the current resident set size. False when the system
/// refused or cannot: peaks then include earlier work.
bool reset_peak_resident();
/// Returns free heap memory to the system where the allocator can, so that
/// the resident set reflects live data; otherwise does nothing.
void trim_heap() noexcept;
/// Bytes malloc has handed out and not had back (all arenas, its own large
/// mappings included); 0 when the allocator does not say.
std::int64_t allocator_in_use_bytes();
/// allocator_in_use_bytes() plus the buffers chronopool maps for itself
/// (detail::mapped_bytes(), which malloc does not see); 0 when the allocator
/// does not say. Unlike the resident set it does not depend on whether freed
/// memory could be returned to the system, which fragmentation decides.
std::int64_t heap_in_use_bytes();

}  // namespace chronopool::detail::platform

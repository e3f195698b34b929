// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Memory of this process: resident set from /proc/self/status (Linux), heap
// in use from the allocator (glibc).
//
// Peaks are process-wide, so a workload measures deltas: it trims the heap,
// resets the high-water mark, takes a baseline, and reads the peak or current
// value later. Trimming matters because glibc keeps freed memory mapped: without
// it the previous run's garbage would be counted as this run's baseline and
// hide this run's growth.
#pragma once

#include <cstdint>

namespace bench::rss {

/// VmRSS in bytes (0 when unavailable).
std::int64_t current_bytes();
/// VmHWM (peak resident set since the last reset_peak) in bytes.
std::int64_t peak_bytes();
/// Resets VmHWM to the current RSS (writes 5 to /proc/self/clear_refs, Linux ≥ 4.0).
/// False when the kernel refused: peaks then include earlier runs.
bool reset_peak();
/// Returns free heap memory to the kernel (malloc_trim), so RSS reflects live data.
void trim();
/// Bytes the allocator has handed out and not had back (glibc mallinfo2:
/// in-use chunks of every arena plus mmapped blocks), plus the buffers
/// chronopool maps for itself (detail::mapped_bytes). Unlike RSS it does not
/// depend on whether freed memory could be returned to the kernel, which
/// fragmentation decides.
std::int64_t heap_in_use_bytes();

inline double to_mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace bench::rss

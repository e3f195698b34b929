// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Memory of this process, as the workloads name it: a thin layer over
// chronopool's one reader, detail/platform/process_memory.hpp (resident set
// and its peak from /proc/self/status, heap in use from glibc's mallinfo2
// plus chronopool's own mappings, on Linux; 0, "unavailable", elsewhere).
//
// Peaks are process-wide, so a workload measures deltas: it trims the heap,
// resets the high-water mark, takes a baseline, and reads the peak or current
// value later. Trimming matters because glibc keeps freed memory mapped: without
// it the previous run's garbage would be counted as this run's baseline and
// hide this run's growth.
#pragma once

#include <chronopool/detail/platform/process_memory.hpp>

#include <cstdint>

namespace bench::rss {

/// The resident set (VmRSS) in bytes (0 when unavailable).
inline std::int64_t current_bytes() { return chronopool::detail::platform::resident_bytes(); }
/// The peak resident set (VmHWM) since the last reset_peak, in bytes (0 when unavailable).
inline std::int64_t peak_bytes() { return chronopool::detail::platform::peak_resident_bytes(); }
/// Resets the peak to the current resident set (Linux 4.0 and later).
/// False when refused: peaks then include earlier runs.
inline bool reset_peak() { return chronopool::detail::platform::reset_peak_resident(); }
/// Returns free heap memory to the kernel (malloc_trim), so RSS reflects live data.
inline void trim() { chronopool::detail::platform::trim_heap(); }
/// Bytes the allocator has handed out and not had back, plus the buffers
/// chronopool maps for itself (0 when unavailable). Unlike RSS it does not
/// depend on whether freed memory could be returned to the kernel, which
/// fragmentation decides.
inline std::int64_t heap_in_use_bytes() { return chronopool::detail::platform::heap_in_use_bytes(); }

inline double to_mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace bench::rss

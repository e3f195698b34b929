// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The resident set size of this process, from /proc/self/statm (Linux).
#pragma once

#include <cstddef>
#include <cstdio>
#include <unistd.h>

namespace soak {

/// Resident memory in bytes, or 0 when it cannot be read.
inline std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0;
  unsigned long resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

inline double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace soak

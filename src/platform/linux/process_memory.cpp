// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Process memory on Linux with glibc: VmRSS and VmHWM from /proc/self/status,
// the peak reset through /proc/self/clear_refs (Linux 4.0 and later),
// malloc_trim and mallinfo2. See detail/platform/process_memory.hpp.
#include <chronopool/detail/platform/process_memory.hpp>
#include <chronopool/detail/queue/mapped_buffer.hpp>

#include <malloc.h>

#include <fstream>
#include <string>

namespace chronopool::detail::platform {
namespace {

// A "Key:   123 kB" line of /proc/self/status, in bytes; 0 when absent.
std::int64_t status_field_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) == 0) {
      try {
        return std::stoll(line.substr(prefix.size())) * 1024;
      } catch (...) {
        return 0;
      }
    }
  }
  return 0;
}

}  // namespace

std::int64_t resident_bytes() { return status_field_bytes("VmRSS"); }

std::int64_t peak_resident_bytes() { return status_field_bytes("VmHWM"); }

bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

void trim_heap() noexcept { ::malloc_trim(0); }

std::int64_t allocator_in_use_bytes() {
  const struct mallinfo2 mi = ::mallinfo2();
  return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd);
}

std::int64_t heap_in_use_bytes() {
  const std::int64_t allocator = allocator_in_use_bytes();
  if (allocator == 0) return 0;
  return allocator + static_cast<std::int64_t>(mapped_bytes());
}

}  // namespace chronopool::detail::platform

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "rss.hpp"

#include <chronopool/detail/queue/mapped_buffer.hpp>

#include <malloc.h>

#include <fstream>
#include <string>

namespace bench::rss {
namespace {

std::int64_t status_field_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) == 0) return std::stoll(line.substr(prefix.size()));
  }
  return 0;
}

}  // namespace

std::int64_t current_bytes() { return status_field_kib("VmRSS") * 1024; }
std::int64_t peak_bytes() { return status_field_kib("VmHWM") * 1024; }

bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

void trim() { malloc_trim(0); }

std::int64_t heap_in_use_bytes() {
  const struct mallinfo2 mi = mallinfo2();
  // chronopool maps its far tier's large buffers itself: malloc does not see them.
  return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd + chronopool::detail::mapped_bytes());
}

}  // namespace bench::rss

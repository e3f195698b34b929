// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Redis's own CPU time, for the durable benches' per-operation costs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chronopool::bench_durable {

/// Redis's CPU time so far (used_cpu_user + used_cpu_sys of INFO cpu), read
/// with redis-cli: what a phase cost the server, whatever the load of the
/// machine (wall-clock rates on a shared machine swing with it).
inline double server_cpu_s(std::uint16_t port) {
  const std::string cmd = "redis-cli -p " + std::to_string(port) + " INFO cpu";
  std::FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return 0;
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) text += buf;
  ::pclose(f);
  double total = 0;
  for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
    const auto at = text.find(field);
    if (at != std::string::npos) total += std::strtod(text.c_str() + at + std::strlen(field), nullptr);
  }
  return total;
}

}  // namespace chronopool::bench_durable

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the durable benches read from a redis-server's INFO: its own CPU time
// (per-operation costs) and the memory its data set holds (per-schedule size).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace chronopool::bench_durable {

/// The text of `INFO <section>` on the server at @p port, read with
/// redis-cli; empty if it could not be run.
inline std::string server_info(std::uint16_t port, const char* section) {
  const std::string cmd = "redis-cli -p " + std::to_string(port) + " INFO " + section;
  std::FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return {};
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) text += buf;
  ::pclose(f);
  return text;
}

/// The number after "<field>:" in @p text, 0 when it is not there.
inline double info_number(const std::string& text, const char* field) {
  const std::string key = std::string("\n") + field + ":";
  const auto at = ("\n" + text).find(key);
  if (at == std::string::npos) return 0;
  return std::strtod(text.c_str() + at + key.size() - 1, nullptr);
}

/// Redis's CPU time so far (used_cpu_user + used_cpu_sys): what a phase cost
/// the server, whatever the load of the machine (wall-clock rates on a
/// shared machine swing with it).
inline double server_cpu_s(std::uint16_t port) {
  const std::string text = server_info(port, "cpu");
  return info_number(text, "used_cpu_user") + info_number(text, "used_cpu_sys");
}

/// The bytes Redis's allocator holds (used_memory): a data set's growth is
/// the difference of two readings.
inline double server_memory_bytes(std::uint16_t port) { return info_number(server_info(port, "memory"), "used_memory"); }

}  // namespace chronopool::bench_durable

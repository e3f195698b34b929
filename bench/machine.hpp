// What the numbers were measured on: printed above the table and stored in
// the JSON, so a result is never read without its context.
#pragma once

#include <string>

namespace bench {

struct machine_info {
  unsigned cores = 0;     // std::thread::hardware_concurrency
  std::string cpu;        // "model name" from /proc/cpuinfo
  std::string compiler;   // __VERSION__
  std::string boost;      // BOOST_LIB_VERSION
  std::string build;      // NDEBUG or not, sanitizers
  std::string date;       // UTC, ISO 8601
};

machine_info describe_machine();

/// The 1, 5 and 15 minute load averages from /proc/loadavg ("?" if unreadable).
std::string load_average();

}  // namespace bench

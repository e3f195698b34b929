#include "machine.hpp"

#include <chronopool/detail/sanitizers.hpp>

#include <boost/version.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace bench {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string build_type() {
#ifdef NDEBUG
  std::string b = "release (NDEBUG)";
#else
  std::string b = "debug (NDEBUG not defined: assertions on)";
#endif
  if (CHRONOPOOL_ADDRESS_SANITIZER) b += ", AddressSanitizer";
  if (CHRONOPOOL_THREAD_SANITIZER) b += ", ThreadSanitizer";
  return b;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

machine_info describe_machine() {
  return {std::thread::hardware_concurrency(), cpu_model(), __VERSION__, BOOST_LIB_VERSION, build_type(), utc_now()};
}

spin_floor measure_spin_floor(double how_long_s) {
  using clock = std::chrono::steady_clock;
  constexpr std::int64_t bound_ns = 10'000;
  spin_floor f;
  std::int64_t stalls = 0, longest = 0, excess = 0;
  const auto t0 = clock::now();
  const auto end = t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(how_long_s));
  auto prev = t0;
  for (;;) {
    const auto t = clock::now();
    const std::int64_t gap = std::chrono::duration_cast<std::chrono::nanoseconds>(t - prev).count();
    prev = t;
    // A deadline in the first (gap - bound) of a stall is noticed more than
    // the bound late: summed, that share of the time is the share of
    // uniform deadlines that are.
    if (gap > bound_ns) {
      ++stalls;
      excess += gap - bound_ns;
    }
    longest = std::max(longest, gap);
    if (t >= end) break;
  }
  f.seconds = std::chrono::duration<double>(prev - t0).count();
  f.stalls_over_10us = static_cast<double>(stalls) / f.seconds;
  f.longest_us = static_cast<double>(longest) / 1e3;
  f.late_over_10us_pct = static_cast<double>(excess) / 1e9 / f.seconds * 100;
  return f;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "?";
  return one + " " + five + " " + fifteen;
}

}  // namespace bench

#include "machine.hpp"

#include <boost/version.hpp>

#include <chrono>
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
#if defined(__SANITIZE_ADDRESS__)
  b += ", AddressSanitizer";
#endif
#if defined(__SANITIZE_THREAD__)
  b += ", ThreadSanitizer";
#endif
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

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "?";
  return one + " " + five + " " + fifteen;
}

}  // namespace bench

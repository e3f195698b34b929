// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "machine.hpp"

#include <chronopool/detail/support/sanitizers.hpp>

#include <boost/version.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

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

namespace {

using clock = std::chrono::steady_clock;

// A deadline is "late" when it is noticed more than this after it passed.
constexpr std::int64_t bound_ns = 10'000;

std::int64_t ns_of(clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

// Where a thread reading the clock would notice a deadline more than the
// bound late: the first (gap - bound) of each of its stalls.
struct blind_stretch {
  std::int64_t from, to;  // ns on the clock
};

struct spin_record {
  double seconds = 0;
  std::int64_t stalls = 0, longest = 0, excess = 0;
  std::vector<blind_stretch> blind;  // in time order
};

spin_record spin_until(clock::time_point end) {
  spin_record r;
  r.blind.reserve(1 << 16);  // a few hundred stalls a second: no allocation while spinning
  const auto t0 = clock::now();
  auto prev = t0;
  for (;;) {
    const auto t = clock::now();
    const std::int64_t gap = ns_of(t - prev);
    // A deadline in the first (gap - bound) of a stall is noticed more than
    // the bound late: summed, that share of the time is the share of
    // uniform deadlines that are.
    if (gap > bound_ns) {
      ++r.stalls;
      r.excess += gap - bound_ns;
      if (r.blind.size() < r.blind.capacity()) {
        r.blind.push_back({ns_of(prev.time_since_epoch()), ns_of(t.time_since_epoch()) - bound_ns});
      }
    }
    prev = t;
    r.longest = std::max(r.longest, gap);
    if (t >= end) break;
  }
  r.seconds = std::chrono::duration<double>(prev - t0).count();
  return r;
}

// The stretches blind in both @p a and @p b (each in time order, disjoint).
std::vector<blind_stretch> both_blind(const std::vector<blind_stretch>& a, const std::vector<blind_stretch>& b) {
  std::vector<blind_stretch> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t from = std::max(a[i].from, b[j].from), to = std::min(a[i].to, b[j].to);
    if (from < to) out.push_back({from, to});
    if (a[i].to < b[j].to) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

clock::time_point after(double seconds) {
  return clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

spin_floor measure_spin_floor(double how_long_s, unsigned threads) {
  spin_floor f;
  const spin_record one = spin_until(after(how_long_s));
  f.seconds = one.seconds;
  f.stalls_over_10us = static_cast<double>(one.stalls) / f.seconds;
  f.longest_us = static_cast<double>(one.longest) / 1e3;
  f.late_over_10us_pct = static_cast<double>(one.excess) / 1e9 / f.seconds * 100;

  // T threads at once: each starts once all are up, and spins to one end.
  threads = std::max(threads, 1u);
  std::vector<spin_record> records(threads);
  std::atomic<unsigned> ready{0};
  std::atomic<std::int64_t> end_ns{0};
  auto body = [&](unsigned k) {
    if (ready.fetch_add(1) + 1 == threads) end_ns.store(ns_of(after(how_long_s).time_since_epoch()));
    std::int64_t e = 0;
    while ((e = end_ns.load()) == 0) {
    }
    records[k] = spin_until(clock::time_point(std::chrono::duration_cast<clock::duration>(std::chrono::nanoseconds(e))));
  };
  std::vector<std::thread> others;
  for (unsigned k = 1; k < threads; ++k) others.emplace_back(body, k);
  body(0);
  for (auto& t : others) t.join();
  std::vector<blind_stretch> all = records[0].blind;
  for (unsigned k = 1; k < threads; ++k) all = both_blind(all, records[k].blind);
  std::int64_t blind_ns = 0;
  for (const auto& s : all) blind_ns += s.to - s.from;
  f.threads_together = threads;
  f.stalled_together_per_s = static_cast<double>(all.size()) / records[0].seconds;
  f.late_for_all_pct = static_cast<double>(blind_ns) / 1e9 / records[0].seconds * 100;
  return f;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "?";
  return one + " " + five + " " + fifteen;
}

}  // namespace bench

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "driver.hpp"

#include "rss.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

namespace bench {
namespace {

/// One line on stderr per run, rewritten in place on a terminal, so a long
/// run shows where it is without burying the table.
class progress {
 public:
  explicit progress(std::size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  ~progress() {
    if (tty_) fmt::print(stderr, "\r\033[K");
  }
  void show(const bench_case& c, const char* phase, variant v) {
    ++done_;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    fmt::print(stderr, "{}[{:6.1f}s {:3}/{}] {} {} {} {}{}", tty_ ? "\r\033[K" : "", secs, done_, total_,
               c.workload, c.label, phase, name(v), tty_ ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

std::vector<case_result> run_cases(const std::vector<bench_case>& cases, const options& o) {
  std::size_t total = 0;
  for (const auto& c : cases) total += c.variants.size() * static_cast<std::size_t>(o.reps + 1);
  progress bar(total);

  std::vector<case_result> results;
  for (const auto& c : cases) {
    case_result cr{&c, std::vector<std::vector<run_result>>(c.variants.size())};
    for (variant v : c.variants) {
      bar.show(c, "warm-up", v);
      (void)c.run(v);
    }
    std::vector<std::size_t> order(c.variants.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    for (int rep = 0; rep < o.reps; ++rep) {
      // Alternate: Asio first on even repetitions, chronopool first on odd ones.
      std::vector<std::size_t> this_order = order;
      if (rep % 2 != 0)
        for (std::size_t i = 0; i + 1 < this_order.size(); i += 2) std::swap(this_order[i], this_order[i + 1]);
      for (std::size_t i : this_order) {
        bar.show(c, fmt::format("rep {}/{}", rep + 1, o.reps).c_str(), c.variants[i]);
        cr.runs[i].push_back(c.run(c.variants[i]));
      }
    }
    results.push_back(std::move(cr));
    rss::trim();  // give the last case's garbage back before the next one measures RSS
  }
  return results;
}

}  // namespace bench

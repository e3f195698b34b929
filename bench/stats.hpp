// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Order statistics for the benchmark: percentiles of samples, and the
// median / min / max summary of a figure across repetitions.
#pragma once

#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace bench {

/// The @p q quantile (0..1) of @p sorted (ascending, non-empty), by the
/// nearest-rank rule: the smallest sample with at least q of the samples at or
/// below it. No interpolation, so a reported p99.9 is a latency that happened.
template <class T>
T quantile_sorted(const std::vector<T>& sorted, double q) {
  const auto n = sorted.size();
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sorted[rank - 1];
}

/// The lateness figures the timing workloads report, in µs, from @p sorted_ns
/// (lateness in ns, ascending, non-empty): p50, p99, p99.9 and the maximum.
inline std::vector<figure> lateness_figures(const std::vector<std::int64_t>& sorted_ns) {
  auto us = [&](double q) { return static_cast<double>(quantile_sorted(sorted_ns, q)) / 1e3; };
  return {{"lateness p50 us", us(0.50)},
          {"lateness p99 us", us(0.99)},
          {"lateness p99.9 us", us(0.999)},
          {"lateness max us", static_cast<double>(sorted_ns.back()) / 1e3}};
}

/// Median of a small sample (the repetitions of one figure); the mean of the
/// two middle values when the count is even.
inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 != 0 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

struct summary {
  double median = NAN;
  double min = NAN;
  double max = NAN;
};

inline summary summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {median(v), *lo, *hi};
}

/// (quantile, value) pairs over a grid that is dense in the tail: every 0.5 %
/// up to 99 %, then the 99.5/99.9/99.95/99.99/99.999 % points and the maximum.
/// Enough for a CDF plot without storing a million samples per repetition.
template <class T>
std::vector<std::pair<double, T>> cdf_points(const std::vector<T>& sorted) {
  std::vector<std::pair<double, T>> out;
  if (sorted.empty()) return out;
  for (int i = 0; i <= 198; ++i) {
    const double q = i / 200.0;
    out.emplace_back(q, q == 0.0 ? sorted.front() : quantile_sorted(sorted, q));
  }
  for (double q : {0.995, 0.999, 0.9995, 0.9999, 0.99999}) out.emplace_back(q, quantile_sorted(sorted, q));
  out.emplace_back(1.0, sorted.back());
  return out;
}

}  // namespace bench

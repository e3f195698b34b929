// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/detail/pool/lateness_recorder.hpp>

#include <algorithm>
#include <vector>

namespace chronopool::detail {

lateness_summary lateness_recorder::summary() const {
  lateness_summary out;
  out.count = count_.load(std::memory_order_relaxed);
  out.window = static_cast<std::size_t>(std::min<std::uint64_t>(out.count, window));
  if (out.window == 0) return out;
  std::vector<std::int64_t> v(out.window);
  for (std::size_t i = 0; i < out.window; ++i) v[i] = samples_[i].load(std::memory_order_relaxed);
  std::sort(v.begin(), v.end());
  // Nearest-rank percentiles.
  auto rank = [&](double q) {
    const auto r = static_cast<std::size_t>(q * static_cast<double>(v.size()) + 0.999999);
    return std::chrono::nanoseconds(v[std::clamp<std::size_t>(r, 1, v.size()) - 1]);
  };
  out.p50 = rank(0.50);
  out.p99 = rank(0.99);
  out.max = std::chrono::nanoseconds(v.back());
  return out;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::latency_histogram — a log-linear histogram of durations that
/// merges across pools, services and processes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool {

namespace detail {
class histogram_shard;
}

/// Counts of durations in log-linear buckets, HdrHistogram's idea: values
/// below 128 ns have a bucket each; above, every power of two is cut into 64
/// equal buckets, so a bucket is never wider than 1/64 of its lower bound
/// and a quantile, reported as its bucket's midpoint, is within 1/128
/// (0.8 %) of a value recorded. Any value of a nanosecond count fits;
/// negative values count as 0. Memory grows with the range of values seen,
/// not with their number.
///
/// A value type: copy it, merge() others into it (from other threads,
/// pools or processes: to_bytes() / from_bytes() carry it across), and read
/// it. The library's recorders hand these out as snapshots.
///
/// @par Thread Safety
/// Distinct objects: safe. Shared objects: unsafe (as any value type).
class latency_histogram {
 public:
  /// One bucket with a count: values in [lower, upper).
  struct bucket {
    std::chrono::nanoseconds lower;  ///< the smallest value it holds
    std::chrono::nanoseconds upper;  ///< one past the largest value it holds
    std::uint64_t count;             ///< values recorded in it
  };

  /// Buckets of values below 2^7 ns, one per nanosecond.
  static constexpr unsigned exact_below = 128;
  /// Buckets per power of two above exact_below.
  static constexpr unsigned buckets_per_octave = 64;
  /// Every bucket index a non-negative 64-bit value can have.
  static constexpr std::size_t bucket_count = 3712;

  /// The bucket index of @p v nanoseconds (v ≥ 0).
  static constexpr std::size_t index_of(std::uint64_t v) noexcept {
    if (v < exact_below) return static_cast<std::size_t>(v);
    const unsigned msb = 63u - static_cast<unsigned>(__builtin_clzll(v));
    const unsigned shift = msb - 6u;
    return static_cast<std::size_t>(shift) * buckets_per_octave + static_cast<std::size_t>(v >> shift);
  }
  /// The smallest value of bucket @p index (< bucket_count).
  static constexpr std::uint64_t lower_of(std::size_t index) noexcept {
    if (index < exact_below) return index;
    const std::size_t shift = index / buckets_per_octave - 1;
    return static_cast<std::uint64_t>(index % buckets_per_octave + buckets_per_octave) << shift;
  }
  /// The width of bucket @p index.
  static constexpr std::uint64_t width_of(std::size_t index) noexcept {
    return index < exact_below ? 1 : std::uint64_t{1} << (index / buckets_per_octave - 1);
  }

  /// Empty.
  latency_histogram() = default;

  /// Counts @p value (@p n times); a negative value counts as 0. Throws
  /// std::bad_alloc when the buckets must grow and cannot.
  void record(std::chrono::nanoseconds value, std::uint64_t n = 1);
  /// Adds every count of @p other to this one.
  void merge(const latency_histogram& other);

  /// Values recorded.
  std::uint64_t count() const noexcept { return count_; }
  /// Their sum (saturating at the largest nanosecond count).
  std::chrono::nanoseconds sum() const noexcept { return std::chrono::nanoseconds(static_cast<std::int64_t>(sum_)); }
  /// The smallest value recorded; 0 when empty.
  std::chrono::nanoseconds min() const noexcept;
  /// The largest value recorded; 0 when empty.
  std::chrono::nanoseconds max() const noexcept { return std::chrono::nanoseconds(static_cast<std::int64_t>(max_)); }
  /// sum() / count(); 0 when empty.
  std::chrono::nanoseconds mean() const noexcept;
  /// The value at quantile @p q (0 ≤ q ≤ 1), by nearest rank (the value of
  /// rank ceil(q × count()), at least 1): min() and max() exactly for the
  /// first and last ranks, otherwise the midpoint of the rank's bucket, kept
  /// within [min(), max()]. 0 when empty. Throws
  /// std::invalid_argument naming @p q unless 0 ≤ q ≤ 1.
  std::chrono::nanoseconds quantile(double q) const;
  /// The buckets with a count, lowest first.
  std::vector<bucket> buckets() const;

  /// A compact binary form (varints; independent of the host's byte
  /// order), for sending to another process.
  std::string to_bytes() const;
  /// The histogram to_bytes() made. Throws std::invalid_argument when
  /// @p bytes is not one (naming what is wrong).
  static latency_histogram from_bytes(std::string_view bytes);

  /// Equal counts in every bucket, and equal sum, min and max.
  friend bool operator==(const latency_histogram& a, const latency_histogram& b) noexcept;

 private:
  friend class detail::histogram_shard;
  // Recorders' snapshots: counts of one bucket, then the totals they kept.
  void add_counts(std::size_t index, std::uint64_t n);
  void add_totals(std::uint64_t count, std::uint64_t sum_ns, std::uint64_t min_ns, std::uint64_t max_ns) noexcept;

  std::vector<std::uint64_t> counts_;  // up to the highest bucket with a count
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace chronopool

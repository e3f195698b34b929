// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Concurrent recording into latency_histogram buckets (chronopool/latency_histogram.hpp).
//
// A recorder has one shard per writer (a pool thread, a timer shard) plus a
// shared one for anyone else. A writer that owns its shard records with
// plain relaxed loads and stores, no read-modify-write, so recording costs a
// few nanoseconds; the shared shard uses atomic adds. A snapshot reads every
// shard with relaxed loads and merges them: a value recorded meanwhile may
// be in it or not, and its bucket and totals may disagree by that value,
// which statistics tolerate. Buckets are allocated in octaves (64 counters)
// when a value first lands in one, so memory follows the range of values,
// not the bucket count; a value whose octave cannot be allocated is counted
// in dropped() instead.
#pragma once

#include <chronopool/latency_histogram.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace chronopool::detail {

class histogram_shard {
 public:
  histogram_shard() = default;
  ~histogram_shard();
  histogram_shard(const histogram_shard&) = delete;
  histogram_shard& operator=(const histogram_shard&) = delete;

  /// Records @p v; only one thread at a time may call it on this shard.
  void record_exclusive(std::chrono::nanoseconds v) noexcept {
    const std::uint64_t n = non_negative(v);
    std::atomic<std::uint64_t>* c = counter(n);
    if (c == nullptr) {
      dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
    c->store(c->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    sum_.store(sum_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    if (n > max_.load(std::memory_order_relaxed)) max_.store(n, std::memory_order_relaxed);
    if (n < min_.load(std::memory_order_relaxed)) min_.store(n, std::memory_order_relaxed);
  }

  /// Records @p v from any thread.
  void record_shared(std::chrono::nanoseconds v) noexcept;

  /// Adds what this shard holds to @p h.
  void add_to(latency_histogram& h) const;
  /// Values that could not be recorded (no memory for their octave).
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::size_t octaves = 57;  // octave 0: buckets [0, 128); octave k ≥ 1: 64 buckets
  static constexpr std::size_t octave_of(std::size_t index) noexcept {
    return index < latency_histogram::exact_below ? 0 : index / latency_histogram::buckets_per_octave - 1;
  }
  static constexpr std::size_t offset_in_octave(std::size_t index) noexcept {
    return index < latency_histogram::exact_below ? index : index % latency_histogram::buckets_per_octave;
  }
  static std::uint64_t non_negative(std::chrono::nanoseconds v) noexcept {
    return v.count() < 0 ? 0 : static_cast<std::uint64_t>(v.count());
  }

  /// The counter of @p v's bucket, its octave allocated if need be; null
  /// when that allocation failed.
  std::atomic<std::uint64_t>* counter(std::uint64_t v) noexcept {
    const std::size_t index = latency_histogram::index_of(v);
    std::atomic<std::uint64_t>* octave = octaves_[octave_of(index)].load(std::memory_order_acquire);
    if (octave == nullptr) [[unlikely]] octave = allocate_octave(octave_of(index));
    return octave == nullptr ? nullptr : octave + offset_in_octave(index);
  }
  std::atomic<std::uint64_t>* allocate_octave(std::size_t k) noexcept;

  std::atomic<std::atomic<std::uint64_t>*> octaves_[octaves]{};
  std::atomic<std::uint64_t> sum_{0};
  std::atomic<std::uint64_t> min_{UINT64_MAX};
  std::atomic<std::uint64_t> max_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

/// A shard per writer and one shared shard.
class histogram_recorder {
 public:
  /// A recorder with @p writers exclusive shards.
  explicit histogram_recorder(std::size_t writers);

  /// Records @p v in the shard of @p writer, which only that writer uses
  /// (one thread at a time); a @p writer out of range records in the shared one.
  void record(std::size_t writer, std::chrono::nanoseconds v) noexcept {
    if (writer < writers_)
      shards_[writer].record_exclusive(v);
    else
      shared_.record_shared(v);
  }
  /// Records @p v in the shared shard, from any thread.
  void record_shared(std::chrono::nanoseconds v) noexcept { shared_.record_shared(v); }

  /// Every shard merged.
  latency_histogram snapshot() const;
  /// Values that could not be recorded, over every shard.
  std::uint64_t dropped() const noexcept;

 private:
  std::size_t writers_;
  std::unique_ptr<histogram_shard[]> shards_;
  histogram_shard shared_;
};

}  // namespace chronopool::detail

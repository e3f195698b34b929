// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See detail/support/histogram_recorder.hpp.
#include <chronopool/detail/support/histogram_recorder.hpp>

#include <new>

namespace chronopool::detail {

histogram_shard::~histogram_shard() {
  for (auto& o : octaves_) delete[] o.load(std::memory_order_relaxed);
}

std::atomic<std::uint64_t>* histogram_shard::allocate_octave(std::size_t k) noexcept {
  const std::size_t size = k == 0 ? latency_histogram::exact_below : latency_histogram::buckets_per_octave;
  auto* fresh = new (std::nothrow) std::atomic<std::uint64_t>[size]();
  if (fresh == nullptr) return nullptr;
  std::atomic<std::uint64_t>* expected = nullptr;
  // Two shared writers may race to allocate: one wins, the other frees its own.
  if (octaves_[k].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel, std::memory_order_acquire))
    return fresh;
  delete[] fresh;
  return expected;
}

void histogram_shard::record_shared(std::chrono::nanoseconds v) noexcept {
  const std::uint64_t n = non_negative(v);
  std::atomic<std::uint64_t>* c = counter(n);
  if (c == nullptr) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  c->fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(n, std::memory_order_relaxed);
  for (std::uint64_t m = max_.load(std::memory_order_relaxed);
       n > m && !max_.compare_exchange_weak(m, n, std::memory_order_relaxed);) {
  }
  for (std::uint64_t m = min_.load(std::memory_order_relaxed);
       n < m && !min_.compare_exchange_weak(m, n, std::memory_order_relaxed);) {
  }
}

void histogram_shard::add_to(latency_histogram& h) const {
  std::uint64_t count = 0;
  std::size_t lowest = 0;
  std::size_t highest = 0;
  for (std::size_t k = 0; k < octaves; ++k) {
    const std::atomic<std::uint64_t>* octave = octaves_[k].load(std::memory_order_acquire);
    if (octave == nullptr) continue;
    const std::size_t size = k == 0 ? latency_histogram::exact_below : latency_histogram::buckets_per_octave;
    const std::size_t first = k == 0 ? 0 : (k + 1) * latency_histogram::buckets_per_octave;
    for (std::size_t i = 0; i < size; ++i) {
      const std::uint64_t n = octave[i].load(std::memory_order_relaxed);
      if (n == 0) continue;
      h.add_counts(first + i, n);
      if (count == 0) lowest = first + i;
      highest = first + i;
      count += n;
    }
  }
  if (count == 0) return;
  // A value recorded during the reads may be in its bucket but not yet in
  // min_ or max_ (or the other way round): keep both inside the buckets read.
  const std::uint64_t low_floor = latency_histogram::lower_of(lowest);
  const std::uint64_t low_ceiling = low_floor + latency_histogram::width_of(lowest) - 1;
  const std::uint64_t high_floor = latency_histogram::lower_of(highest);
  const std::uint64_t high_ceiling = high_floor + latency_histogram::width_of(highest) - 1;
  std::uint64_t min = min_.load(std::memory_order_relaxed);
  std::uint64_t max = max_.load(std::memory_order_relaxed);
  if (min < low_floor || min > low_ceiling) min = low_floor;
  if (max < high_floor || max > high_ceiling) max = high_ceiling;
  h.add_totals(count, sum_.load(std::memory_order_relaxed), min, max);
}

histogram_recorder::histogram_recorder(std::size_t writers)
    : writers_(writers), shards_(std::make_unique<histogram_shard[]>(writers)) {}

latency_histogram histogram_recorder::snapshot() const {
  latency_histogram h;
  for (std::size_t i = 0; i < writers_; ++i) shards_[i].add_to(h);
  shared_.add_to(h);
  return h;
}

std::uint64_t histogram_recorder::dropped() const noexcept {
  std::uint64_t n = shared_.dropped();
  for (std::size_t i = 0; i < writers_; ++i) n += shards_[i].dropped();
  return n;
}

}  // namespace chronopool::detail

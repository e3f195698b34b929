// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::latency_histogram: reading, merging and the binary form.
#include <chronopool/latency_histogram.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace chronopool {

namespace {

constexpr std::uint64_t max_ns = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out) || out > max_ns) return max_ns;
  return out;
}

// The binary form: a magic byte and a version, then count, sum, min, max
// and the number of non-empty buckets, then (index gap, count) pairs, all
// unsigned LEB128 varints.
constexpr unsigned char magic = 0xC7;
constexpr unsigned char version = 1;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

class reader {
 public:
  explicit reader(std::string_view bytes) : bytes_(bytes) {}

  std::uint64_t varint(const char* what) {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size())
        throw std::invalid_argument(std::string("chronopool: latency_histogram::from_bytes: truncated in ") + what);
      const auto byte = static_cast<unsigned char>(bytes_[pos_++]);
      v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw std::invalid_argument(std::string("chronopool: latency_histogram::from_bytes: overlong varint in ") + what);
  }
  unsigned char byte(const char* what) {
    if (pos_ == bytes_.size())
      throw std::invalid_argument(std::string("chronopool: latency_histogram::from_bytes: truncated in ") + what);
    return static_cast<unsigned char>(bytes_[pos_++]);
  }
  bool done() const noexcept { return pos_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace

void latency_histogram::record(std::chrono::nanoseconds value, std::uint64_t n) {
  if (n == 0) return;
  const std::uint64_t v = value.count() < 0 ? 0 : static_cast<std::uint64_t>(value.count());
  add_counts(index_of(v), n);
  std::uint64_t product = 0;
  const std::uint64_t total = __builtin_mul_overflow(v, n, &product) ? max_ns : product;
  add_totals(n, total, v, v);
}

void latency_histogram::add_counts(std::size_t index, std::uint64_t n) {
  if (index >= counts_.size()) counts_.resize(index + 1, 0);
  counts_[index] += n;
}

void latency_histogram::add_totals(std::uint64_t count, std::uint64_t sum_ns, std::uint64_t min_ns,
                                   std::uint64_t max_ns_seen) noexcept {
  if (count == 0) return;
  count_ += count;
  sum_ = add_saturating(sum_, sum_ns);
  min_ = std::min(min_, min_ns);
  max_ = std::max(max_, max_ns_seen);
}

void latency_histogram::merge(const latency_histogram& other) {
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  add_totals(other.count_, other.sum_, other.min_, other.max_);
}

std::chrono::nanoseconds latency_histogram::min() const noexcept {
  return std::chrono::nanoseconds(count_ == 0 ? 0 : static_cast<std::int64_t>(min_));
}

std::chrono::nanoseconds latency_histogram::mean() const noexcept {
  return std::chrono::nanoseconds(count_ == 0 ? 0 : static_cast<std::int64_t>(sum_ / count_));
}

std::chrono::nanoseconds latency_histogram::quantile(double q) const {
  if (!(q >= 0.0 && q <= 1.0))  // also rejects NaN
    throw std::invalid_argument("chronopool: latency_histogram::quantile: q must be in [0, 1], got " +
                                std::to_string(q));
  if (count_ == 0) return std::chrono::nanoseconds(0);
  // Nearest rank: the smallest value with at least ceil(q × count) values at
  // or below it (rank 1 for q = 0).
  const auto wanted = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<long double>(count_))));
  if (wanted == 1) return min();  // the extremes are known exactly
  if (wanted >= count_) return max();
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= wanted) {
      const std::uint64_t mid = lower_of(i) + (width_of(i) - 1) / 2;
      return std::chrono::nanoseconds(static_cast<std::int64_t>(std::clamp(mid, min_, max_)));
    }
  }
  return max();  // counts and count_ disagree only if a recorder raced; the largest is safe
}

std::vector<latency_histogram::bucket> latency_histogram::buckets() const {
  std::vector<bucket> out;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const std::uint64_t lo = lower_of(i);
    const std::uint64_t hi = std::min(max_ns, lo + width_of(i));
    out.push_back({std::chrono::nanoseconds(static_cast<std::int64_t>(lo)),
                   std::chrono::nanoseconds(static_cast<std::int64_t>(hi)), counts_[i]});
  }
  return out;
}

std::string latency_histogram::to_bytes() const {
  std::string out;
  out.push_back(static_cast<char>(magic));
  out.push_back(static_cast<char>(version));
  put_varint(out, count_);
  put_varint(out, sum_);
  put_varint(out, count_ == 0 ? 0 : min_);
  put_varint(out, max_);
  const auto nonzero = static_cast<std::uint64_t>(std::count_if(counts_.begin(), counts_.end(),
                                                                [](std::uint64_t c) { return c != 0; }));
  put_varint(out, nonzero);
  std::size_t previous = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    put_varint(out, i - previous);
    put_varint(out, counts_[i]);
    previous = i;
  }
  return out;
}

latency_histogram latency_histogram::from_bytes(std::string_view bytes) {
  reader in(bytes);
  if (in.byte("the header") != magic)
    throw std::invalid_argument("chronopool: latency_histogram::from_bytes: not a latency_histogram (bad magic byte)");
  if (const unsigned v = in.byte("the header"); v != version)
    throw std::invalid_argument("chronopool: latency_histogram::from_bytes: unknown version " + std::to_string(v));
  latency_histogram h;
  const std::uint64_t count = in.varint("the count");
  const std::uint64_t sum = in.varint("the sum");
  const std::uint64_t min = in.varint("the minimum");
  const std::uint64_t max = in.varint("the maximum");
  const std::uint64_t nonzero = in.varint("the bucket count");
  if (nonzero > bucket_count)
    throw std::invalid_argument("chronopool: latency_histogram::from_bytes: " + std::to_string(nonzero) +
                                " buckets, more than " + std::to_string(bucket_count));
  std::uint64_t total = 0;
  std::size_t index = 0;
  for (std::uint64_t b = 0; b < nonzero; ++b) {
    const std::uint64_t gap = in.varint("a bucket index");
    const std::uint64_t n = in.varint("a bucket count");
    if (gap > bucket_count || index + gap >= bucket_count || (b > 0 && gap == 0) || n == 0)
      throw std::invalid_argument("chronopool: latency_histogram::from_bytes: bucket " + std::to_string(b) +
                                  " is out of order or out of range");
    index += static_cast<std::size_t>(gap);
    h.add_counts(index, n);
    total += n;
  }
  if (!in.done()) throw std::invalid_argument("chronopool: latency_histogram::from_bytes: bytes left after the buckets");
  if (total != count || sum > max_ns || max > max_ns || (count != 0 && min > max))
    throw std::invalid_argument("chronopool: latency_histogram::from_bytes: totals do not match the buckets");
  if (count != 0) h.add_totals(count, sum, min, max);
  return h;
}

bool operator==(const latency_histogram& a, const latency_histogram& b) noexcept {
  if (a.count_ != b.count_ || a.sum_ != b.sum_ || a.min() != b.min() || a.max_ != b.max_) return false;
  const std::size_t n = std::max(a.counts_.size(), b.counts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = i < a.counts_.size() ? a.counts_[i] : 0;
    const std::uint64_t y = i < b.counts_.size() ? b.counts_[i] : 0;
    if (x != y) return false;
  }
  return true;
}

}  // namespace chronopool

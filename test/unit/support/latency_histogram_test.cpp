// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::latency_histogram: buckets, quantiles against exact ones
// computed from the sorted samples, merging, the binary form, bad input.
#include <chronopool/latency_histogram.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using chronopool::latency_histogram;
using std::chrono::nanoseconds;

namespace {

// The nearest-rank quantile of sorted @p v, computed without the histogram.
std::int64_t exact_quantile(const std::vector<std::int64_t>& v, double q) {
  // ceil(q × n) in long double, as documented (in double, 0.9999 × 200000
  // rounds up past 199980).
  const auto rank =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * static_cast<long double>(v.size()))));
  return v[rank - 1];
}

std::vector<std::int64_t> lognormal_samples(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(10.0, 2.5);  // median ~22 us, long tail
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(std::min(dist(rng), 9.0e18));
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(latency_histogram_suite)

BOOST_AUTO_TEST_CASE(every_value_lands_in_a_bucket_that_holds_it) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 0; v < 70'000; ++v) values.push_back(v);
  for (int i = 0; i < 200'000; ++i) values.push_back(rng() >> (rng() % 63 + 1));
  values.push_back(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  std::size_t previous_index = 0;
  std::uint64_t previous_value = 0;
  for (const std::uint64_t v : values) {
    const std::size_t i = latency_histogram::index_of(v);
    BOOST_TEST_REQUIRE(i < latency_histogram::bucket_count);
    const std::uint64_t lo = latency_histogram::lower_of(i);
    const std::uint64_t w = latency_histogram::width_of(i);
    BOOST_TEST_REQUIRE(lo <= v, "v=" << v);
    BOOST_TEST_REQUIRE(v - lo < w, "v=" << v);
    // A bucket is at most 1/64 of its lower bound wide (exact below 128).
    BOOST_TEST_REQUIRE((v < 128 ? w == 1 : w * 64 <= lo), "v=" << v);
    if (v >= previous_value) BOOST_TEST_REQUIRE(i >= previous_index);  // monotone
    previous_value = v;
    previous_index = i;
  }
  BOOST_TEST(latency_histogram::index_of(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ==
             latency_histogram::bucket_count - 1);
}

BOOST_AUTO_TEST_CASE(quantiles_are_within_one_part_in_128_of_the_exact_ones) {
  auto samples = lognormal_samples(200'000, 11);
  latency_histogram h;
  for (const auto s : samples) h.record(nanoseconds(s));
  std::sort(samples.begin(), samples.end());
  for (const double q : {0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const std::int64_t exact = exact_quantile(samples, q);
    const std::int64_t got = h.quantile(q).count();
    BOOST_TEST(std::abs(static_cast<double>(got - exact)) <= static_cast<double>(exact) / 128.0 + 1.0,
               "q=" << q << " exact=" << exact << " got=" << got);
  }
  BOOST_TEST(h.quantile(0.0).count() == samples.front());  // min and max are exact
  BOOST_TEST(h.quantile(1.0).count() == samples.back());
  BOOST_TEST(h.count() == samples.size());
  long double sum = 0;
  for (const auto s : samples) sum += static_cast<long double>(s);
  BOOST_TEST(static_cast<long double>(h.sum().count()) == sum);
  BOOST_TEST(h.min().count() == samples.front());
  BOOST_TEST(h.max().count() == samples.back());
  BOOST_TEST(h.mean().count() == static_cast<std::int64_t>(sum / static_cast<long double>(samples.size())));
}

BOOST_AUTO_TEST_CASE(small_values_are_exact_and_negative_ones_count_as_zero) {
  latency_histogram h;
  for (int v = 0; v < 100; ++v) h.record(nanoseconds(v));
  h.record(nanoseconds(-5));
  BOOST_TEST(h.count() == 101u);
  BOOST_TEST(h.min().count() == 0);
  BOOST_TEST(h.quantile(0.5).count() == 49);  // rank 51 of 0,0,1,...,99
  h.record(nanoseconds(1000), 3);
  BOOST_TEST(h.count() == 104u);
  const auto b = h.buckets();
  BOOST_TEST(b.front().lower.count() == 0);
  BOOST_TEST(b.front().count == 2u);  // the 0 and the negative value
  BOOST_TEST(b.back().count == 3u);
  BOOST_TEST((b.back().lower.count() <= 1000 && 1000 < b.back().upper.count()));
}

BOOST_AUTO_TEST_CASE(an_empty_histogram_reads_as_zero) {
  const latency_histogram h;
  BOOST_TEST(h.count() == 0u);
  BOOST_TEST(h.min().count() == 0);
  BOOST_TEST(h.max().count() == 0);
  BOOST_TEST(h.mean().count() == 0);
  BOOST_TEST(h.quantile(0.99).count() == 0);
  BOOST_TEST(h.buckets().empty());
  BOOST_TEST((latency_histogram::from_bytes(h.to_bytes()) == h));
}

BOOST_AUTO_TEST_CASE(merging_equals_recording_everything_in_one) {
  const auto a = lognormal_samples(50'000, 1);
  const auto b = lognormal_samples(30'000, 2);
  latency_histogram ha, hb, all;
  for (const auto s : a) ha.record(nanoseconds(s)), all.record(nanoseconds(s));
  for (const auto s : b) hb.record(nanoseconds(s)), all.record(nanoseconds(s));
  latency_histogram merged = ha;
  merged.merge(hb);
  BOOST_TEST((merged == all));
  latency_histogram other_order = hb;
  other_order.merge(ha);
  BOOST_TEST((other_order == all));
  merged.merge(latency_histogram{});
  BOOST_TEST((merged == all));
  BOOST_TEST(!(ha == all));
}

BOOST_AUTO_TEST_CASE(the_binary_form_round_trips_and_merges_across_processes) {
  const auto a = lognormal_samples(20'000, 3);
  latency_histogram h;
  for (const auto s : a) h.record(nanoseconds(s));
  h.record(nanoseconds(std::numeric_limits<std::int64_t>::max()));
  const std::string bytes = h.to_bytes();
  BOOST_TEST(bytes.size() < 4096u);  // sparse: only buckets with a count
  const latency_histogram back = latency_histogram::from_bytes(bytes);
  BOOST_TEST((back == h));
  BOOST_TEST(back.quantile(0.99) == h.quantile(0.99));
}

BOOST_AUTO_TEST_CASE(malformed_bytes_are_rejected_with_what_is_wrong) {
  latency_histogram h;
  for (int v : {5, 500, 50'000}) h.record(nanoseconds(v));
  const std::string good = h.to_bytes();
  auto rejects = [](std::string bytes, const std::string& words) {
    try {
      (void)latency_histogram::from_bytes(bytes);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(words) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR("accepted malformed bytes (expected: " << words << ")");
  };
  rejects("", "truncated");
  rejects(good.substr(0, good.size() - 1), "truncated");
  std::string bad_magic = good;
  bad_magic[0] = 'x';
  rejects(bad_magic, "magic");
  std::string bad_version = good;
  bad_version[1] = 9;
  rejects(bad_version, "version 9");
  rejects(good + '\0', "bytes left");
  std::string wrong_count = good;
  wrong_count[2] = 4;  // count 3 -> 4
  rejects(wrong_count, "totals");
}

BOOST_AUTO_TEST_CASE(a_quantile_outside_0_1_is_rejected_naming_q) {
  latency_histogram h;
  h.record(nanoseconds(1));
  for (const double q : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      (void)h.quantile(q);
      BOOST_ERROR("accepted q=" << q);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find("q must be in [0, 1]") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

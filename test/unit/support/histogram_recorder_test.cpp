// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail::histogram_recorder: writers on their own shards and on the shared
// one, snapshots taken while they record.
#include <chronopool/detail/support/histogram_recorder.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

using chronopool::latency_histogram;
using chronopool::detail::histogram_recorder;
using std::chrono::nanoseconds;

namespace {

std::vector<std::int64_t> samples_for(unsigned seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() >> (rng() % 40 + 24));
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(histogram_recorder_suite)

BOOST_AUTO_TEST_CASE(a_snapshot_equals_one_histogram_of_every_value) {
  constexpr std::size_t writers = 4;
  constexpr std::size_t shared_writers = 2;
  constexpr std::size_t per_thread = 50'000;
  histogram_recorder r(writers);
  latency_histogram expected;
  std::vector<std::vector<std::int64_t>> work;
  for (unsigned t = 0; t < writers + shared_writers; ++t) {
    work.push_back(samples_for(t + 1, per_thread));
    for (const auto v : work.back()) expected.record(nanoseconds(v));
  }
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> last_seen{0};
  bool snapshots_grow = true;
  std::thread reader([&] {
    // Snapshots during recording: their counts never go backwards.
    while (!done.load()) {
      const std::uint64_t n = r.snapshot().count();
      if (n < last_seen.load()) snapshots_grow = false;
      last_seen = n;
    }
  });
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < writers + shared_writers; ++t)
    threads.emplace_back([&, t] {
      for (const auto v : work[t]) {
        if (t < writers)
          r.record(t, nanoseconds(v));
        else
          r.record_shared(nanoseconds(v));
      }
    });
  for (auto& t : threads) t.join();
  done = true;
  reader.join();
  BOOST_TEST(snapshots_grow);
  const latency_histogram got = r.snapshot();
  BOOST_TEST(got.count() == expected.count());
  BOOST_TEST((got == expected));
  BOOST_TEST(r.dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(a_writer_out_of_range_records_in_the_shared_shard) {
  histogram_recorder r(1);
  r.record(0, nanoseconds(10));
  r.record(7, nanoseconds(20));  // no shard 7: shared
  r.record(7, nanoseconds(-3));  // negative: counted as 0
  const auto h = r.snapshot();
  BOOST_TEST(h.count() == 3u);
  BOOST_TEST(h.min().count() == 0);
  BOOST_TEST(h.max().count() == 20);
  BOOST_TEST(h.sum().count() == 30);
}

BOOST_AUTO_TEST_CASE(a_recorder_with_no_values_snapshots_empty) {
  histogram_recorder r(3);
  BOOST_TEST(r.snapshot().count() == 0u);
  BOOST_TEST(r.snapshot().buckets().empty());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// pool_stats: the failed, rejected and cancelled counters and the lateness
// and run-time histograms, including what threads that retired recorded.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::ready_within;

BOOST_AUTO_TEST_SUITE(pool_stats_counters)

BOOST_AUTO_TEST_CASE(a_task_that_throws_counts_as_failed_and_completed) {
  scheduled_thread_pool pool(2);
  auto ok = pool.submit([] { return 1; });
  auto bad = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  BOOST_REQUIRE(ready_within(ok));
  BOOST_REQUIRE(ready_within(bad));
  BOOST_REQUIRE(pool_test::eventually([&] { return pool.stats().completed_task_count == 2; }));
  const auto s = pool.stats();
  BOOST_TEST(s.failed_task_count == 1u);
  BOOST_TEST(s.rejected_task_count == 0u);
  BOOST_TEST(s.cancelled_task_count == 0u);
}

BOOST_AUTO_TEST_CASE(a_cancelled_task_counts_as_cancelled_and_a_rejected_one_as_rejected_only) {
  scheduled_thread_pool_options o;
  o.max_queued = 1;
  o.rejection = chronopool::rejection_policy::discard;
  scheduled_thread_pool pool(o);
  auto far = pool.schedule(1h, [] {});
  auto dropped = pool.schedule(1h, [] {});  // the queue is full: discarded
  BOOST_TEST(dropped.cancelled());
  BOOST_TEST(far.cancel(false));
  const auto s = pool.stats();
  BOOST_TEST(s.rejected_task_count == 1u);
  BOOST_TEST(s.cancelled_task_count == 1u);
  BOOST_TEST(s.failed_task_count == 0u);
}

BOOST_AUTO_TEST_CASE(a_rejection_handler_that_discards_counts_a_rejection) {
  scheduled_thread_pool pool(1);
  pool.set_rejection_handler([](chronopool::rejected_task& r) { r.discard(); });
  pool.shutdown();
  auto f = pool.schedule(1ms, [] {});
  BOOST_TEST(f.cancelled());
  const auto s = pool.stats();
  BOOST_TEST(s.rejected_task_count == 1u);
  BOOST_TEST(s.cancelled_task_count == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pool_stats_histograms)

BOOST_AUTO_TEST_CASE(every_run_is_in_the_lateness_and_run_time_histograms) {
  scheduled_thread_pool pool(2);
  constexpr int n = 50;
  std::vector<scheduled_future<void>> fs;
  for (int i = 0; i < n; ++i) fs.push_back(pool.schedule(std::chrono::milliseconds(i % 5), [] {}));
  fs.push_back(pool.submit([] { std::this_thread::sleep_for(20ms); }));
  for (auto& f : fs) BOOST_REQUIRE(ready_within(f));
  BOOST_REQUIRE(pool_test::eventually([&] { return pool.stats().completed_task_count == n + 1; }));
  const auto s = pool.stats();
  BOOST_TEST(s.lateness_histogram.count() == n + 1u);
  BOOST_TEST(s.run_time_histogram.count() == n + 1u);
  // The sleeping task ran at least 20 ms; max is exact.
  BOOST_TEST(s.run_time_histogram.max() >= std::chrono::nanoseconds(20ms));
  BOOST_TEST(s.lateness.count == n + 1u);
  BOOST_TEST(s.lateness.window == n + 1u);
  BOOST_TEST(s.lateness.max == s.lateness_histogram.max());
  BOOST_TEST(s.lateness.p99 == s.lateness_histogram.quantile(0.99));
  BOOST_TEST(s.lateness.p50 <= s.lateness.p99);
}

BOOST_AUTO_TEST_CASE(what_a_retired_thread_recorded_stays_in_the_histograms) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.allow_core_thread_timeout = true;
  o.keep_alive = 5ms;
  scheduled_thread_pool pool(o);
  for (int round = 0; round < 3; ++round) {
    auto f = pool.submit([] {});
    BOOST_REQUIRE(ready_within(f));
    // The thread retires after keep_alive; the next submission starts
    // another one, which reaps the first.
    BOOST_REQUIRE(pool_test::eventually([&] { return pool.pool_size() == 0; }));
  }
  auto last = pool.submit([] {});
  BOOST_REQUIRE(ready_within(last));
  BOOST_REQUIRE(pool_test::eventually([&] { return pool.stats().completed_task_count == 4; }));
  const auto s = pool.stats();
  BOOST_TEST(s.largest_pool_size == 1u);
  BOOST_TEST(s.lateness_histogram.count() == 4u);
  BOOST_TEST(s.run_time_histogram.count() == 4u);
}

BOOST_AUTO_TEST_CASE(histograms_of_two_pools_merge) {
  scheduled_thread_pool a(1);
  scheduled_thread_pool b(1);
  auto fa = a.submit([] {});
  auto fb1 = b.submit([] {});
  auto fb2 = b.submit([] {});
  BOOST_REQUIRE(ready_within(fa));
  BOOST_REQUIRE(ready_within(fb1));
  BOOST_REQUIRE(ready_within(fb2));
  BOOST_REQUIRE(pool_test::eventually([&] { return a.stats().completed_task_count == 1 && b.stats().completed_task_count == 2; }));
  auto merged = a.stats().lateness_histogram;
  merged.merge(b.stats().lateness_histogram);
  BOOST_TEST(merged.count() == 3u);
}

BOOST_AUTO_TEST_CASE(the_one_line_form_shows_the_counters_and_both_histograms) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  BOOST_REQUIRE(ready_within(f));
  BOOST_REQUIRE(pool_test::eventually([&] { return pool.stats().completed_task_count == 1; }));
  const std::string line = fmt::format("{}", pool.stats());
  BOOST_TEST(line.find("failed=1 rejected=0 cancelled=0") != std::string::npos, line);
  BOOST_TEST(line.find("lateness(n=1)") != std::string::npos, line);
  BOOST_TEST(line.find("run(n=1)") != std::string::npos, line);
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 46: a durable scheduler's stats() carry the claim lag of every fire
// it claimed (Redis's time at the claim minus the due time) and the run time
// of every handler it started.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

BOOST_AUTO_TEST_SUITE(durable_fire_histograms)

// Fires due 3 s before the scheduler starts are claimed at least 3 s late;
// handlers that sleep 20 ms run at least that long.
BOOST_AUTO_TEST_CASE(claim_lag_and_run_time_are_recorded_per_fire) {
  dt::pool_fixture f;
  std::atomic<int> ran{0};
  constexpr int fires = 5;
  {
    cd::scheduler s(f.pool.get_executor(), dt::fast_options(f.ns, dt::test_redis_options()));
    s.register_handler("job", [&](const cd::fire_context&) {
      std::this_thread::sleep_for(20ms);
      ++ran;
    });
    const auto due = std::chrono::system_clock::now() - 3s;
    for (int i = 0; i < fires; ++i)
      s.async_schedule_at("late" + std::to_string(i), "job", "", due, boost::asio::use_future).get();
    const cd::scheduler_stats before = s.stats();
    BOOST_TEST(before.claim_lag_histogram.count() == 0u);
    BOOST_TEST(before.run_time_histogram.count() == 0u);
    s.start();
    BOOST_TEST_REQUIRE(dt::wait_until([&] { return s.stats().acked == static_cast<std::uint64_t>(fires); }));

    const cd::scheduler_stats st = s.stats();
    BOOST_TEST(ran.load() == fires);
    BOOST_TEST(st.claimed == static_cast<std::uint64_t>(fires));
    BOOST_TEST(st.claim_lag_histogram.count() == st.claimed);
    // Due times are kept in whole milliseconds, rounded up.
    BOOST_TEST((st.claim_lag_histogram.min() >= nanoseconds(3s - 1ms)), st.claim_lag_histogram.min().count());
    BOOST_TEST((st.claim_lag_histogram.max() < nanoseconds(60s)), st.claim_lag_histogram.max().count());
    // Redis's milliseconds: every lag is a whole number of them.
    BOOST_TEST(st.claim_lag_histogram.sum().count() % 1'000'000 == 0);
    BOOST_TEST(st.run_time_histogram.count() == static_cast<std::uint64_t>(fires));
    BOOST_TEST((st.run_time_histogram.min() >= nanoseconds(20ms)), st.run_time_histogram.min().count());
    s.stop();
  }
}

BOOST_AUTO_TEST_SUITE_END()

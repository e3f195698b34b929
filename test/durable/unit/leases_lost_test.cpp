// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: stats().leases_lost counts only fires whose lease really was
// lost, not fires whose extension was answered "stale" because their
// acknowledgement had just been applied.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::system::error_code;
using dt::fast_options;
using dt::wait_until;

BOOST_FIXTURE_TEST_SUITE(durable_leases_lost, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(leases_lost_counts_only_fires_whose_lease_really_was_lost) {
  // Short leases extended every 10 ms while fires finish all the time: some
  // extensions are sent just after their fire's ack and answered "stale".
  // Those fires were acknowledged, not lost. A lease that really is lost
  // (the control thread stalled past it) shows up as a rejected ack too, so
  // the two counters must agree.
  auto o = fast_options(ns, dt::test_redis_options());
  o.lease = 30ms;
  o.max_in_flight = 64;
  o.claim_batch = 64;
  std::atomic<int> ran{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const cd::fire_context&) {
    std::this_thread::sleep_for(std::chrono::microseconds(200 + (ran.fetch_add(1) % 7) * 300));
  });
  s.start();
  for (int i = 0; i < 48; ++i)
    s.async_schedule_at_fixed_rate("r" + std::to_string(i), "job", "", 0ms, 3ms, {}, boost::asio::use_future).get();
  std::this_thread::sleep_for(4s);
  // Stopped before cancelling: an extension of a fire whose schedule was
  // cancelled under it is answered "stale" too, and rightly counts as lost.
  s.stop();
  const auto st = s.stats();
  cd::scheduler client(pool.get_executor(), o);
  for (int i = 0; i < 48; ++i) client.async_cancel("r" + std::to_string(i), boost::asio::use_future).get();
  BOOST_TEST_MESSAGE("acked " << st.acked << ", extended " << st.extended << ", leases_lost " << st.leases_lost
                              << ", stale_acks " << st.stale_acks);
  BOOST_TEST(st.acked > 500u);
  BOOST_TEST(st.leases_lost == st.stale_acks);
}

BOOST_AUTO_TEST_SUITE_END()

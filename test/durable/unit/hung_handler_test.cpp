// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: a hung handler does not hold its lease for ever. Without a
// handler_options::timeout, scheduler_options::max_run_time bounds it:
// past it the lease is no longer extended but given back as a failed
// attempt, and the fire runs again.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <atomic>
#include <chrono>
#include <future>
#include <string>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::fast_options;
using dt::wait_until;

BOOST_FIXTURE_TEST_SUITE(durable_hung_handler, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(a_hung_handler_gives_its_fire_back_after_max_run_time) {
  auto o = fast_options(ns, dt::test_redis_options());
  o.lease = 300ms;  // extended every 100 ms while the handler runs
  o.max_run_time = 800ms;
  o.log_handler = [](const chronopool::log_record&) {};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  std::atomic<int> returned{0};
  {
    cd::scheduler s(pool.get_executor(), o);
    s.register_handler("job", [&](const cd::fire_context&) {
      if (calls.fetch_add(1) == 0) released.wait();  // hangs, deaf to its stop token
      returned.fetch_add(1);
    });
    s.start();
    s.async_schedule("hang", "job", "", 0ms, boost::asio::use_future).get();
    // Runs again: the hung run's lease was given back, not extended for ever.
    BOOST_TEST(wait_until([&] { return calls.load() >= 2; }, 10s), "calls " << calls.load());
    BOOST_TEST(s.stats().timed_out == 1u);
    release.set_value();
    // The timed-out run is no longer the scheduler's: stop() does not wait
    // for it, so the test does, before the locals it uses go.
    BOOST_TEST(wait_until([&] { return returned.load() == calls.load(); }, 10s));
  }
}

BOOST_AUTO_TEST_CASE(a_negative_max_run_time_is_refused_with_its_value) {
  auto o = fast_options(ns, dt::test_redis_options());
  o.max_run_time = std::chrono::milliseconds(-5);
  try {
    cd::scheduler s(pool.get_executor(), o);
    BOOST_FAIL("a negative max_run_time was accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("max_run_time must not be negative, got -5 ms") != std::string::npos,
               e.what());
  }
}

BOOST_AUTO_TEST_SUITE_END()

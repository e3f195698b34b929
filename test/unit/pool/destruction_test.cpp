// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Destroying a pool from inside one of its own tasks: the destructor cannot
// join the thread it runs on, so it detaches the threads, which keep the
// pool's machinery alive until they leave. Defined behaviour, no leak.
#include "pool_test_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <future>
#include <memory>

using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(destruction)

BOOST_AUTO_TEST_CASE(a_pool_destroyed_by_its_own_task_cancels_the_rest_and_does_not_crash) {
  for (int round = 0; round < 20; ++round) {
    auto* pool = new chronopool::scheduled_thread_pool(2);
    auto later = pool->schedule(1h, [] { return 1; });
    std::promise<void> submitted, destroyed;
    auto destroyed_future = destroyed.get_future();
    pool->submit([pool, &destroyed, gate = submitted.get_future().share()] {
      gate.wait();  // the submitting thread has left submit()
      delete pool;
      destroyed.set_value();
    });
    submitted.set_value();
    BOOST_REQUIRE(destroyed_future.wait_for(pool_test::long_wait) == std::future_status::ready);
    BOOST_TEST(later.cancelled());  // what never started was cancelled, not left hanging
  }
}

BOOST_AUTO_TEST_SUITE_END()

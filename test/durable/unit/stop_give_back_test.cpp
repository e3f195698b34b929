// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: stop() (and so the destructor) gives back at once the fires it
// claimed whose handlers had not started, so another process runs them
// without waiting a full lease, and none of them starts after the
// scheduler's destructor returned.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::fast_options;
using dt::wait_until;

BOOST_AUTO_TEST_SUITE(durable_stop_give_back)

BOOST_AUTO_TEST_CASE(stop_gives_back_unstarted_fires_at_once_and_none_starts_after_the_destructor) {
  const std::string ns = dt::unique_namespace();
  auto o = fast_options(ns, dt::test_redis_options());
  o.lease = 30s;  // far longer than the test waits: only a give-back lets b run them
  o.stop_timeout = 300ms;
  o.claim_batch = 16;
  // One worker, held by the first fire: the others wait, claimed, in its queue.
  chronopool::scheduled_thread_pool pool_a(1);
  chronopool::scheduled_thread_pool pool_b(2);
  std::promise<void> first_started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started_a{0};
  std::atomic<bool> destroyed{false};
  std::atomic<int> started_after_destructor{0};
  std::atomic<int> ran_b{0};
  constexpr int fires = 6;
  {
    std::optional<cd::scheduler> a;
    a.emplace(pool_a.get_executor(), o);
    a->register_handler("job", [&](const cd::fire_context&) {
      if (destroyed) ++started_after_destructor;
      if (started_a.fetch_add(1) == 0) {
        first_started.set_value();
        released.wait();  // hangs, deaf to its stop token
      }
    });
    for (int i = 0; i < fires; ++i)
      a->async_schedule("j" + std::to_string(i), "job", "", 0ms, boost::asio::use_future).get();
    a->start();
    BOOST_TEST_REQUIRE((first_started.get_future().wait_for(10s) == std::future_status::ready));
    BOOST_TEST_REQUIRE(wait_until([&] { return a->stats().claimed == static_cast<std::uint64_t>(fires); }));
    a->stop();  // waits stop_timeout for the hung one, gives back the rest
    BOOST_TEST(a->stats().given_back == static_cast<std::uint64_t>(fires - 1));
    a.reset();
    destroyed = true;
  }
  cd::scheduler b(pool_b.get_executor(), o);
  b.register_handler("job", [&](const cd::fire_context&) { ++ran_b; });
  b.start();
  // The five that never started run at once elsewhere, not after 30 s.
  BOOST_TEST(wait_until([&] { return ran_b.load() >= fires - 1; }, 5s), "b ran " << ran_b.load());
  release.set_value();
  pool_a.shutdown();
  pool_a.join();  // runs whatever a left queued on its worker
  BOOST_TEST(started_after_destructor.load() == 0);
  BOOST_TEST(started_a.load() == 1);
  BOOST_TEST(b.stats().given_back == 0u);
  for (int i = 0; i < fires; ++i) b.async_cancel("j" + std::to_string(i), boost::asio::use_future).get();
  b.stop();
  pool_b.shutdown();
  pool_b.join();
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A flood against the max_queued bound: several producers submit far more
// work than the queue may hold while the pool's only thread is held busy.
// The queue must never exceed the bound (memory stays flat however hard the
// flood), every submission must be accounted for by the rejection policy,
// and once the thread is released everything accepted must run.
#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace bdata = boost::unit_test::data;
using namespace std::chrono_literals;
using chronopool::rejection_policy;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;

// Named, not anonymous: the data-driven test case is a template, and
// -Wsubobject-linkage objects to its lambdas capturing internal types.
namespace max_queued_flood_test {

constexpr std::size_t bound = 64;
constexpr int producers = 4;
constexpr int per_producer = 5000;

/// What one producer saw.
struct producer_ledger {
  int threw = 0;             // rejected_execution (abort)
  int ran_by_caller = 0;     // caller_runs: ran on the producer's own thread
  std::vector<scheduled_future<int>> futures;
};

}  // namespace max_queued_flood_test

using namespace max_queued_flood_test;

BOOST_AUTO_TEST_SUITE(max_queued_flood)

// policy_index: 0 abort, 1 caller_runs, 2 discard, 3 discard_oldest.
BOOST_DATA_TEST_CASE(the_bound_holds_under_a_flood, bdata::make({0, 1, 2, 3}), policy_index) {
  const auto policy = static_cast<rejection_policy>(policy_index);
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.max_queued = bound;
  o.rejection = policy;
  scheduled_thread_pool pool(o);

  std::atomic<bool> release{false};
  auto blocker = pool.submit([&] {
    while (!release.load()) std::this_thread::sleep_for(100us);
    return -1;
  });
  while (pool.active_count() == 0) std::this_thread::sleep_for(100us);

  std::atomic<int> runs{0};
  std::atomic<std::size_t> max_seen{0};
  std::atomic<bool> flooding{true};
  std::thread sampler([&] {
    while (flooding.load()) {
      const std::size_t q = pool.queued_count();
      std::size_t m = max_seen.load();
      while (q > m && !max_seen.compare_exchange_weak(m, q)) {
      }
    }
  });
  std::vector<producer_ledger> ledgers(producers);
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        producer_ledger& mine = ledgers[static_cast<std::size_t>(p)];
        const auto me = std::this_thread::get_id();
        for (int i = 0; i < per_producer; ++i) {
          try {
            // Alternate due-now and far deadlines: discard_oldest then drops
            // both kinds.
            auto task = [&runs, me, &mine] {
              runs.fetch_add(1);
              if (std::this_thread::get_id() == me) ++mine.ran_by_caller;
              return 1;
            };
            mine.futures.push_back(i % 2 == 0 ? pool.submit(task) : pool.schedule(i % 4 == 1 ? 1ms : 50ms, task));
          } catch (const chronopool::rejected_execution&) {
            ++mine.threw;
          }
        }
      });
  }
  flooding.store(false);
  sampler.join();
  BOOST_TEST(max_seen.load() <= bound);
  BOOST_TEST(pool.queued_count() <= bound);

  release.store(true);
  BOOST_REQUIRE(blocker.wait_for(10s) == std::future_status::ready);
  int accepted = 0, cancelled = 0, threw = 0, by_caller = 0;
  for (auto& l : ledgers) {
    threw += l.threw;
    by_caller += l.ran_by_caller;
    for (auto& f : l.futures) {
      BOOST_REQUIRE(f.wait_for(10s) == std::future_status::ready);
      if (f.cancelled()) {
        ++cancelled;
      } else {
        BOOST_TEST(f.get() == 1);
        ++accepted;
      }
    }
  }
  const int total = producers * per_producer;
  BOOST_TEST_MESSAGE(chronopool::to_string(pool.stats()));
  BOOST_TEST_MESSAGE("policy " << policy_index << ": " << total << " submitted, " << accepted << " ran, " << by_caller
                               << " of them on the caller, " << cancelled << " cancelled, " << threw
                               << " rejected; queue peak " << max_seen.load() << " of " << bound);
  BOOST_TEST(accepted + cancelled + threw == total);  // every submission accounted for once
  BOOST_TEST(runs.load() == accepted);                // and nothing ran that was not accepted
  switch (policy) {
    case rejection_policy::abort:
      BOOST_TEST(threw > 0);
      BOOST_TEST(cancelled == 0);
      break;
    case rejection_policy::caller_runs:
      BOOST_TEST(threw == 0);
      BOOST_TEST(cancelled == 0);
      BOOST_TEST(by_caller > 0);  // back-pressure: the producers did the work
      break;
    case rejection_policy::discard:
    case rejection_policy::discard_oldest:
      BOOST_TEST(threw == 0);
      BOOST_TEST(cancelled > 0);
      break;
  }
  pool.join();
  BOOST_TEST(pool.queued_count() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

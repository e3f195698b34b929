// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One pool scenario (one-shots, equal deadlines, a fixed-rate task, a task
// queued from a run) on the real clock and on a manual one: the same order
// of runs, and on the manual clock each run at exactly its deadline; with
// one thread the manual trace is the same on every run, with three the
// runs still come deadline by deadline.
#include "pool_test_support.hpp"

#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

struct run {
  std::string what;
  std::chrono::nanoseconds at;  // the pool's now() at the run, from the scenario's start
};

class trace_recorder {
 public:
  void add(std::string what, std::chrono::nanoseconds at) {
    const std::lock_guard lock(mutex_);
    runs_.push_back({std::move(what), at});
  }
  std::vector<run> take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(runs_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<run> runs_;
};

std::vector<std::string> names(const std::vector<run>& runs) {
  std::vector<std::string> out;
  for (const run& r : runs) out.push_back(r.what);
  return out;
}

std::vector<std::chrono::nanoseconds> times(const std::vector<run>& runs) {
  std::vector<std::chrono::nanoseconds> out;
  for (const run& r : runs) out.push_back(r.at);
  return out;
}

/// The scenario on @p threads threads, on a manual clock or the real one;
/// returns the runs in the order they started.
std::vector<run> scenario(bool manual, std::size_t threads) {
  trace_recorder rec;
  std::promise<void> chained;  // the task queued from a run has run
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = threads;
  o.use_manual_clock = manual;
  chronopool::scheduled_thread_pool pool(o);
  const steady::time_point start = pool.now();
  const auto note = [&](std::string what) { return [&, what] { rec.add(what, pool.now() - start); }; };
  std::vector<chronopool::scheduled_future<void>> futures;
  futures.push_back(pool.schedule(start + 60ms - pool.now(), note("c@60")));
  futures.push_back(pool.schedule_at(start + 20ms, note("a1@20")));
  futures.push_back(pool.schedule_at(start + 20ms, note("a2@20")));
  futures.push_back(pool.schedule_at(start + 20ms, note("a3@20")));
  futures.push_back(pool.schedule_at(start + 45ms, [&] {
    rec.add("b@45", pool.now() - start);
    pool.execute_at(start + 70ms, [&] {
      rec.add("chained@70", pool.now() - start);
      chained.set_value();
    });
  }));
  chronopool::periodic_options five;
  five.max_runs = 5;
  futures.push_back(pool.schedule_at_fixed_rate(start + 10ms, 15ms, note("tick"), five));  // 10 25 40 55 70
  if (manual) {
    chronopool::manual_clock_of(pool).advance(start + 100ms - pool.now());
  } else {
    for (auto& f : futures) BOOST_REQUIRE(f.wait_for(pool_test::long_wait) == std::future_status::ready);
    BOOST_REQUIRE(chained.get_future().wait_for(pool_test::long_wait) == std::future_status::ready);
  }
  for (auto& f : futures) BOOST_TEST(f.done());
  return rec.take();
}

// By (deadline, submission sequence). A periodic task keeps the sequence of
// its submission (Java's rule), so at 70 ms its run comes before the task
// queued at 45 ms; at 20 ms the three one-shots run in submission order.
const std::vector<std::string> expected_order{"tick", "a1@20", "a2@20", "a3@20", "tick", "tick",
                                              "b@45", "tick", "c@60", "tick",  "chained@70"};
const std::vector<std::chrono::nanoseconds> expected_times{10ms, 20ms, 20ms, 20ms, 25ms, 40ms,
                                                           45ms, 55ms, 60ms, 70ms, 70ms};

}  // namespace

BOOST_AUTO_TEST_SUITE(pool_manual_clock_trace_suite)

BOOST_AUTO_TEST_CASE(real_and_manual_clocks_give_the_same_order_and_the_manual_one_exact_times) {
  const std::vector<run> real = scenario(false, 1);
  const std::vector<run> manual = scenario(true, 1);
  BOOST_TEST(names(real) == expected_order, boost::test_tools::per_element());
  BOOST_TEST(names(manual) == expected_order, boost::test_tools::per_element());
  BOOST_TEST(times(manual) == expected_times, boost::test_tools::per_element());
  // The real clock's runs came no earlier than their deadlines.
  const std::vector<std::chrono::nanoseconds> real_times = times(real);
  for (std::size_t k = 0; k < real_times.size() && k < expected_times.size(); ++k)
    BOOST_TEST((real_times[k] >= expected_times[k]));
}

BOOST_AUTO_TEST_CASE(one_thread_gives_the_same_trace_bit_for_bit_on_every_run) {
  const std::vector<run> first = scenario(true, 1);
  for (int k = 0; k < 5; ++k) {
    const std::vector<run> again = scenario(true, 1);
    BOOST_TEST(names(again) == names(first), boost::test_tools::per_element());
    BOOST_TEST(times(again) == times(first), boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(three_threads_run_deadline_by_deadline_at_exact_times) {
  for (int k = 0; k < 5; ++k) {
    const std::vector<run> runs = scenario(true, 3);
    BOOST_TEST(times(runs) == expected_times, boost::test_tools::per_element());
    std::vector<std::string> sorted = names(runs);
    std::vector<std::string> expected = expected_order;
    std::sort(sorted.begin(), sorted.end());
    std::sort(expected.begin(), expected.end());
    BOOST_TEST(sorted == expected, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()

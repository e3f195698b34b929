// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Auto-advance of a pool's manual clock without a driver: an idle pool runs
// its delayed tasks at once, each at exactly its deadline; the time never
// jumps while a task runs or is due (posted work included); the same trace
// on every run with one thread; a driver call still steps exactly; and the
// option's bad input is refused.
#include "pool_test_support.hpp"

#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;

namespace manual_auto_pool {

using steady = std::chrono::steady_clock;

chronopool::scheduled_thread_pool_options auto_options(std::size_t threads) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = threads;
  o.use_manual_clock = true;
  o.manual_clock_auto_advance = true;
  return o;
}

/// What ran, and when by the pool's clock (relative to the start).
struct run_record {
  std::string what;
  std::chrono::nanoseconds at;
  bool operator==(const run_record&) const = default;
};

std::ostream& operator<<(std::ostream& os, const run_record& r) { return os << r.what << "@" << r.at.count() << "ns"; }

/// Written by the pool's threads, read once the pool has terminated.
class run_log {
 public:
  void add(std::string what, std::chrono::nanoseconds at) {
    const std::lock_guard lock(mutex_);
    records_.push_back({std::move(what), at});
  }
  std::vector<run_record> take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(records_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<run_record> records_;
};

/// One thread, auto-advance, no driver: delayed tasks at mixed and equal
/// deadlines, one that queues more, and immediate work. Submitted with
/// auto-advance off: the test's thread is outside the pool, which, idle
/// between two submissions, would jump between them.
std::vector<run_record> run_pool_scenario() {
  chronopool::scheduled_thread_pool_options o = auto_options(1);
  o.manual_clock_auto_advance = false;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  run_log log;
  const auto note = [&](std::string what) { log.add(std::move(what), clock.now() - start); };
  pool.schedule(3s, [&] { note("a"); });
  pool.schedule(1s, [&] {
    note("b");
    pool.execute([&] { note("b-posted"); });
    pool.schedule(1s, [&] { note("c"); });  // at 2 s
  });
  pool.schedule(3s, [&] { note("a2"); });  // FIFO after a
  auto last = pool.schedule(10min, [&] { note("d"); });
  for (int i = 0; i < 3; ++i) pool.execute([&, i] { note("now" + std::to_string(i)); });
  clock.auto_advance(true);  // everything is queued: from here on the pool alone moves the time
  // d is the last to come due; its note is written before its future is.
  BOOST_REQUIRE(last.wait_for(pool_test::long_wait) == std::future_status::ready);
  return log.take();
}

}  // namespace manual_auto_pool

BOOST_AUTO_TEST_SUITE(pool_manual_clock_auto_suite)

using manual_auto_pool::steady;

BOOST_AUTO_TEST_CASE(an_idle_pool_runs_a_10_minute_task_without_advance) {
  chronopool::scheduled_thread_pool pool(manual_auto_pool::auto_options(2));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  BOOST_TEST(clock.auto_advance());
  const steady::time_point start = clock.now();
  auto f = pool.schedule(10min, [&] { return clock.now(); });
  BOOST_REQUIRE(f.wait_for(pool_test::long_wait) == std::future_status::ready);
  BOOST_TEST((f.get() - start == 10min));  // exactly its deadline
  BOOST_TEST(clock.auto_advances() == 1u);
  BOOST_TEST((clock.now() - start == 10min));  // and no further: nothing else is queued
}

BOOST_AUTO_TEST_CASE(auto_advance_is_off_by_default_and_turns_on_later) {
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.use_manual_clock = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  BOOST_TEST(!clock.auto_advance());
  const steady::time_point start = clock.now();
  auto f = pool.schedule(1h, [&] { return clock.now(); });
  // Off: the idle pool keeps the time (a real wait, which may only pass).
  BOOST_TEST((f.wait_for(20ms) == std::future_status::timeout));
  BOOST_TEST((clock.now() == start));
  clock.auto_advance(true);  // the idle pool jumps at once
  BOOST_REQUIRE(f.wait_for(pool_test::long_wait) == std::future_status::ready);
  BOOST_TEST((f.get() - start == 1h));
}

BOOST_AUTO_TEST_CASE(no_jump_while_a_task_runs_on_another_thread) {
  // Two threads: while one runs a task, the other is idle with a task due
  // in a minute. The time must not move until the running task ends: a
  // jump too early shows as that task seeing the minute passed, or the
  // later task running while the first still ran.
  chronopool::scheduled_thread_pool pool(manual_auto_pool::auto_options(2));
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  pool_test::gate release;
  std::atomic<bool> first_running{true};
  auto first = pool.submit([&] {
    release.wait();
    const steady::duration seen = clock.now() - start;
    first_running.store(false);
    return seen;
  });
  auto later = pool.schedule(1min, [&] { return std::make_pair(clock.now() - start, first_running.load()); });
  // Give the idle thread every chance to jump wrongly (a slow machine only
  // makes the test weaker, never wrong).
  BOOST_TEST((later.wait_for(50ms) == std::future_status::timeout));
  BOOST_TEST((clock.now() == start));
  release.open();
  BOOST_REQUIRE(first.wait_for(pool_test::long_wait) == std::future_status::ready);
  BOOST_TEST((first.get() == steady::duration::zero()));
  BOOST_REQUIRE(later.wait_for(pool_test::long_wait) == std::future_status::ready);
  const auto [at, overlapped] = later.get();
  BOOST_TEST((at == 1min));
  BOOST_TEST(!overlapped);
}

BOOST_AUTO_TEST_CASE(no_jump_while_posted_work_is_due) {
  // One thread: a chain of 1,000 functions, each posting the next. One is
  // always due, so the time must stay until the chain ends. The chain and
  // the later task are queued before auto-advance is on (the test's thread
  // is outside the pool, which would jump between two submissions).
  std::atomic<int> left{1000};
  std::atomic<int> moved_seen{0};
  std::promise<void> chain_done;
  std::function<void()> link;  // outlives the pool: its last copy runs on a pool thread
  chronopool::scheduled_thread_pool_options o = manual_auto_pool::auto_options(1);
  o.manual_clock_auto_advance = false;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  link = [&] {
    if (clock.now() != start) moved_seen.fetch_add(1);
    if (left.fetch_sub(1) > 1) {
      pool.execute(link);
    } else {
      chain_done.set_value();
    }
  };
  auto later = pool.schedule(10ms, [&] { return std::make_pair(clock.now() - start, left.load()); });
  pool.execute(link);
  clock.auto_advance(true);
  BOOST_REQUIRE(later.wait_for(pool_test::long_wait) == std::future_status::ready);
  BOOST_REQUIRE(chain_done.get_future().wait_for(pool_test::long_wait) == std::future_status::ready);
  const auto [at, left_then] = later.get();
  BOOST_TEST((at == 10ms));
  BOOST_TEST(left_then == 0);
  BOOST_TEST(moved_seen.load() == 0);
}

BOOST_AUTO_TEST_CASE(the_same_trace_on_every_run_with_one_thread) {
  const std::vector<manual_auto_pool::run_record> first = manual_auto_pool::run_pool_scenario();
  const std::vector<manual_auto_pool::run_record> expected{
      {"now0", 0s}, {"now1", 0s}, {"now2", 0s}, {"b", 1s}, {"b-posted", 1s},
      {"c", 2s},    {"a", 3s},    {"a2", 3s},   {"d", 10min}};
  BOOST_TEST(first == expected, boost::test_tools::per_element());
  for (int i = 0; i < 5; ++i)
    BOOST_TEST(manual_auto_pool::run_pool_scenario() == first, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_driver_call_steps_exactly_while_auto_advance_is_on) {
  // Auto-advance waits while the driver moves the time: advance(5 s) leaves
  // a task due at 10 s unrun; once the call returns the idle pool jumps.
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.use_manual_clock = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  std::atomic<int> ran{0};
  pool.schedule(10s, [&] { ran.fetch_add(1); });
  clock.advance(5s);
  BOOST_TEST(ran.load() == 0);
  BOOST_TEST((clock.now() - start == 5s));
  clock.auto_advance(true);
  BOOST_TEST(pool_test::eventually([&] { return ran.load() == 1; }));
  BOOST_TEST((clock.now() - start == 10s));
}

BOOST_AUTO_TEST_CASE(auto_advance_without_a_manual_clock_is_refused) {
  chronopool::scheduled_thread_pool_options o;
  o.manual_clock_auto_advance = true;  // use_manual_clock left false
  try {
    chronopool::scheduled_thread_pool pool(o);
    BOOST_FAIL("a pool was made with manual_clock_auto_advance and no manual clock");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("manual_clock_auto_advance is true") != std::string::npos, what);
    BOOST_TEST(what.find("use_manual_clock is false") != std::string::npos, what);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Pool sizing: on-demand threads, prestart, resizing, core size 0, core
// thread timeout; waits from pool threads; workers surviving errors.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::long_wait;
using pool_test::ready_within;
using pool_test::steady;

namespace {

/// Counts the pool's thread starts and stops through its hooks.
struct thread_probe {
  std::atomic<int> starts{0};
  std::atomic<int> stops{0};
  void install(scheduled_thread_pool_options& o) {
    o.on_thread_start = [this](std::size_t) { starts.fetch_add(1); };
    o.on_thread_stop = [this](std::size_t) { stops.fetch_add(1); };
  }
};

std::chrono::nanoseconds process_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

long long ms(std::chrono::nanoseconds d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(sizing)

BOOST_AUTO_TEST_CASE(threads_start_on_demand_up_to_the_core_size) {
  thread_probe threads;
  pool_test::gate release;  // outlives the pool's threads
  pool_test::counter started;
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  threads.install(o);
  scheduled_thread_pool pool(o);
  BOOST_TEST(pool.pool_size() == 0u);
  BOOST_TEST(pool.largest_pool_size() == 0u);
  BOOST_TEST(pool.core_pool_size() == 3u);

  auto blocking = [&] {
    started.bump();
    return release.wait();
  };
  std::vector<scheduled_future<bool>> futures;
  for (std::size_t i = 1; i <= 3; ++i) {
    futures.push_back(pool.submit(blocking));
    BOOST_REQUIRE(started.wait_for_at_least(i));  // runs beside the blocked ones: a new thread
    BOOST_TEST(pool.pool_size() == i);
    BOOST_TEST(pool.largest_pool_size() == i);
    BOOST_TEST(pool_test::eventually([&] { return pool.active_count() == i; }));
  }
  // At the core size, more work queues instead of starting threads.
  futures.push_back(pool.submit(blocking));
  futures.push_back(pool.submit(blocking));
  std::this_thread::sleep_for(30ms);
  BOOST_TEST(started.value() == 3u);
  BOOST_TEST(pool.pool_size() == 3u);
  BOOST_TEST(pool.queued_count() == 2u);
  BOOST_TEST(threads.starts.load() == 3);
  const auto s = pool.stats();
  BOOST_TEST(s.pool_size == 3u);
  BOOST_TEST(s.core_pool_size == 3u);
  BOOST_TEST(s.largest_pool_size == 3u);
  BOOST_TEST(s.active_count == 3u);
  BOOST_TEST(s.queued_count == 2u);

  release.open();
  for (const auto& f : futures) {
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(f.get());
  }
  // Core threads do not time out by default.
  std::this_thread::sleep_for(60ms);
  BOOST_TEST(pool.pool_size() == 3u);
  BOOST_TEST(threads.stops.load() == 0);
  BOOST_TEST(pool.largest_pool_size() == 3u);
  BOOST_TEST(pool_test::eventually([&] { return pool.completed_task_count() == 5u; }));
}

BOOST_AUTO_TEST_CASE(prestart_core_threads) {
  thread_probe threads;
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  threads.install(o);
  scheduled_thread_pool pool(o);
  BOOST_TEST(pool.prestart_core_threads() == 3u);
  BOOST_TEST(pool.pool_size() == 3u);
  BOOST_TEST(pool_test::eventually([&] { return threads.starts.load() == 3; }));
  BOOST_TEST(pool.prestart_core_threads() == 0u);
  BOOST_TEST(!pool.prestart_core_thread());
  BOOST_TEST(pool.pool_size() == 3u);

  pool.set_core_pool_size(4);  // nothing queued: no thread needed yet
  BOOST_TEST(pool.pool_size() == 3u);
  BOOST_TEST(pool.prestart_core_thread());
  BOOST_TEST(!pool.prestart_core_thread());
  BOOST_TEST(pool.pool_size() == 4u);
  BOOST_TEST(pool.largest_pool_size() == 4u);
  BOOST_TEST(pool_test::eventually([&] { return threads.starts.load() == 4; }));

  auto f = pool.submit([] { return 5; });
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == 5);
  BOOST_TEST(pool.pool_size() == 4u);
  pool.join();
  BOOST_TEST(pool.pool_size() == 0u);
  BOOST_TEST(threads.stops.load() == 4);
  BOOST_TEST(!pool.prestart_core_thread());  // terminated: no more threads
  BOOST_TEST(pool.prestart_core_threads() == 0u);
  BOOST_TEST(pool.pool_size() == 0u);
}

BOOST_AUTO_TEST_CASE(set_core_pool_size_grows_and_shrinks) {
  thread_probe threads;
  pool_test::gate release;  // outlives the pool's threads
  pool_test::counter started;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.keep_alive = 20ms;
  threads.install(o);
  scheduled_thread_pool pool(o);

  auto blocking = [&] {
    started.bump();
    return release.wait();
  };
  std::vector<scheduled_future<bool>> futures;
  for (int i = 0; i < 3; ++i) futures.push_back(pool.submit(blocking));
  BOOST_REQUIRE(started.wait_for_at_least(1));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(started.value() == 1u);
  BOOST_TEST(pool.queued_count() == 2u);

  // Growing starts threads for the queued work.
  pool.set_core_pool_size(3);
  BOOST_TEST(pool.core_pool_size() == 3u);
  BOOST_REQUIRE(started.wait_for_at_least(3));
  BOOST_TEST(pool.pool_size() == 3u);
  BOOST_TEST(pool.largest_pool_size() == 3u);

  release.open();
  for (const auto& f : futures) BOOST_REQUIRE(ready_within(f));

  // Shrinking retires the idle surplus after keep_alive; the core stays.
  pool.set_core_pool_size(1);
  BOOST_TEST(pool.core_pool_size() == 1u);
  BOOST_TEST(pool.stats().core_pool_size == 1u);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 1u; }));
  BOOST_TEST(pool_test::eventually([&] { return threads.stops.load() == 2; }));
  std::this_thread::sleep_for(100ms);
  BOOST_TEST(pool.pool_size() == 1u);
  BOOST_TEST(threads.stops.load() == 2);
  BOOST_TEST(pool.largest_pool_size() == 3u);

  auto f = pool.submit([] { return 1; });
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == 1);
}

BOOST_AUTO_TEST_CASE(shrinking_while_busy_retires_threads_once_idle) {
  std::atomic<int> runs{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.keep_alive = 10ms;
  scheduled_thread_pool pool(o);
  BOOST_TEST(pool.prestart_core_threads() == 3u);
  std::vector<scheduled_future<void>> futures;
  for (int i = 0; i < 200; ++i) futures.push_back(pool.schedule(std::chrono::microseconds(i * 100), [&] { runs.fetch_add(1); }));
  pool.set_core_pool_size(1);
  for (const auto& f : futures) BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(runs.load() == 200);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 1u; }));
}

BOOST_AUTO_TEST_CASE(invalid_core_pool_size_throws) {
  constexpr std::size_t max = scheduled_thread_pool::max_core_pool_size;
  static_assert(max == 4096);
  scheduled_thread_pool pool(2);
  BOOST_CHECK_THROW(pool.set_core_pool_size(max + 1), std::invalid_argument);
  BOOST_CHECK_THROW(pool.set_core_pool_size(static_cast<std::size_t>(-1)), std::invalid_argument);
  BOOST_TEST(pool.core_pool_size() == 2u);
  BOOST_CHECK_NO_THROW(pool.set_core_pool_size(max));  // allowed; no work, so no threads
  BOOST_TEST(pool.core_pool_size() == max);
  BOOST_TEST(pool.pool_size() == 0u);
  pool.set_core_pool_size(2);
  BOOST_CHECK_THROW(scheduled_thread_pool{max + 1}, std::invalid_argument);
  scheduled_thread_pool_options o;
  o.core_pool_size = max + 1;
  BOOST_CHECK_THROW(scheduled_thread_pool{o}, std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(invalid_core_pool_size_message_names_the_parameter_and_the_value) {
  constexpr std::size_t max = scheduled_thread_pool::max_core_pool_size;
  // The constructor and set_core_pool_size() give the same message.
  const std::string expected = "chronopool: core_pool_size 4097 exceeds the maximum of 4096";
  auto message_of = [](auto call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no exception)";
  };
  scheduled_thread_pool pool(2);
  BOOST_TEST(message_of([&] { pool.set_core_pool_size(max + 1); }) == expected);
  BOOST_TEST(message_of([&] { scheduled_thread_pool p(max + 1); }) == expected);
  scheduled_thread_pool_options o;
  o.core_pool_size = max + 1;
  BOOST_TEST(message_of([&] { scheduled_thread_pool p(o); }) == expected);
  const std::string huge = std::to_string(static_cast<std::size_t>(-1));
  BOOST_TEST(message_of([&] { pool.set_core_pool_size(static_cast<std::size_t>(-1)); }).find(huge) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(core_size_zero_runs_work_on_one_thread_that_retires) {
  thread_probe threads;
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 0;
  o.keep_alive = 20ms;
  threads.install(o);
  scheduled_thread_pool pool(o);
  BOOST_TEST(pool.pool_size() == 0u);

  auto first = pool.submit([] { return 1; });
  BOOST_REQUIRE(ready_within(first));
  BOOST_TEST(first.get() == 1);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));
  BOOST_TEST(threads.starts.load() == 1);
  BOOST_TEST(pool_test::eventually([&] { return threads.stops.load() == 1; }));

  // A burst runs one task at a time, on one thread.
  std::vector<scheduled_future<std::thread::id>> futures;
  for (int i = 0; i < 20; ++i) {
    futures.push_back(pool.schedule(std::chrono::milliseconds(i % 3), [&] {
      const int now = in_flight.fetch_add(1) + 1;
      int seen = max_in_flight.load();
      while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(200us);
      in_flight.fetch_sub(1);
      return std::this_thread::get_id();
    }));
  }
  for (const auto& f : futures) BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(max_in_flight.load() == 1);
  BOOST_TEST(pool.largest_pool_size() == 1u);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));
  BOOST_TEST(pool.core_pool_size() == 0u);

  pool.join();
  BOOST_TEST(pool.is_terminated());
  BOOST_TEST(threads.starts.load() == threads.stops.load());
}

BOOST_AUTO_TEST_CASE(core_size_zero_with_a_far_task_does_not_spin) {
  thread_probe threads;
  std::atomic<int> before_execute{0};
  std::atomic<steady::rep> ran_at{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 0;
  o.keep_alive = 1ms;  // a thread that polled its keep_alive would wake 1000 times a second
  threads.install(o);
  o.before_execute = [&](const chronopool::task_view&) { before_execute.fetch_add(1); };
  scheduled_thread_pool pool(o);

  constexpr auto delay = 300ms;
  const auto wall0 = steady::now();
  const auto cpu0 = process_cpu_time();
  const auto deadline = wall0 + delay;
  auto f = pool.schedule_at(deadline, [&] { ran_at.store(steady::now().time_since_epoch().count()); });
  std::size_t max_pool_size = 0;
  while (f.wait_for(5ms) != std::future_status::ready && steady::now() - wall0 < long_wait)
    max_pool_size = std::max(max_pool_size, pool.pool_size());
  const auto cpu = process_cpu_time() - cpu0;
  const auto wall = steady::now() - wall0;
  BOOST_REQUIRE(f.done());
  BOOST_TEST(ran_at.load() >= deadline.time_since_epoch().count(), "ran before its deadline");
  BOOST_TEST(before_execute.load() == 1);
  BOOST_TEST(max_pool_size <= 1u);
  BOOST_TEST(threads.starts.load() <= 2, "threads started: " << threads.starts.load());
  BOOST_TEST_MESSAGE("cpu " << ms(cpu) << " ms over " << ms(wall) << " ms wall, " << threads.starts.load()
                            << " thread start(s)");
  BOOST_TEST((cpu < wall * 4 / 10), "cpu " << ms(cpu) << " ms over " << ms(wall) << " ms: the waiting thread spins");
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));
}

BOOST_AUTO_TEST_CASE(allow_core_thread_timeout_retires_core_threads) {
  thread_probe threads;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.keep_alive = 20ms;
  threads.install(o);
  scheduled_thread_pool pool(o);
  BOOST_TEST(!pool.allows_core_thread_timeout());
  BOOST_TEST(pool.prestart_core_threads() == 2u);
  std::this_thread::sleep_for(80ms);
  BOOST_TEST(pool.pool_size() == 2u);

  pool.allow_core_thread_timeout(true);
  BOOST_TEST(pool.allows_core_thread_timeout());
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));
  BOOST_TEST(pool_test::eventually([&] { return threads.stops.load() == 2; }));

  // Work still runs: threads start again on demand, then retire again.
  auto f = pool.submit([] { return 3; });
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == 3);
  BOOST_TEST(threads.starts.load() >= 3);
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));

  // Turned off again, core threads stay.
  pool.allow_core_thread_timeout(false);
  BOOST_TEST(pool.prestart_core_threads() == 2u);
  std::this_thread::sleep_for(80ms);
  BOOST_TEST(pool.pool_size() == 2u);
}

BOOST_AUTO_TEST_CASE(allow_core_thread_timeout_option) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.keep_alive = 10ms;
  o.allow_core_thread_timeout = true;
  scheduled_thread_pool pool(o);
  BOOST_TEST(pool.allows_core_thread_timeout());
  std::vector<scheduled_future<int>> futures;
  for (int i = 0; i < 4; ++i) futures.push_back(pool.submit([i] { return i; }));
  for (const auto& f : futures) BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(pool_test::eventually([&] { return pool.pool_size() == 0u; }));
}

namespace {
enum class wait_outcome { no_throw, deadlock_error, other_system_error, other_exception };

template <class F>
wait_outcome classify(F&& f) {
  try {
    f();
    return wait_outcome::no_throw;
  } catch (const std::system_error& e) {
    return e.code() == std::errc::resource_deadlock_would_occur ? wait_outcome::deadlock_error
                                                                 : wait_outcome::other_system_error;
  } catch (...) {
    return wait_outcome::other_exception;
  }
}
}  // namespace

BOOST_AUTO_TEST_CASE(blocking_waits_from_a_pool_thread_throw) {
  scheduled_thread_pool pool(1);
  BOOST_TEST(!pool.running_in_this_thread());
  struct report {
    bool in_pool_thread = false;
    wait_outcome zero_wait = wait_outcome::other_exception;
    bool zero_wait_result = true;
    bool negative_wait_result = true;
    wait_outcome timed_wait = wait_outcome::no_throw;
    wait_outcome join = wait_outcome::no_throw;
  };
  auto f = pool.submit([&pool] {
    report r;
    r.in_pool_thread = pool.running_in_this_thread();
    r.zero_wait = classify([&] { r.zero_wait_result = pool.wait_for_termination(0ms); });
    r.negative_wait_result = pool.wait_for_termination(-1s);
    r.timed_wait = classify([&] { pool.wait_for_termination(1s); });
    r.join = classify([&] { pool.join(); });
    return r;
  });
  BOOST_REQUIRE(ready_within(f));
  const report& r = f.get();
  BOOST_TEST(r.in_pool_thread);
  BOOST_TEST((r.zero_wait == wait_outcome::no_throw));
  BOOST_TEST(!r.zero_wait_result);
  BOOST_TEST(!r.negative_wait_result);
  BOOST_TEST((r.timed_wait == wait_outcome::deadlock_error));
  BOOST_TEST((r.join == wait_outcome::deadlock_error));
  pool.join();  // from outside: fine
  BOOST_TEST(pool.is_terminated());
}

BOOST_AUTO_TEST_CASE(waiting_for_another_pool_from_a_pool_thread_is_fine) {
  scheduled_thread_pool a(1);
  scheduled_thread_pool b(1);
  auto f = b.submit([&a] {
    bool in_a = a.running_in_this_thread();
    const wait_outcome w = classify([&] { a.wait_for_termination(10ms); });
    return std::make_pair(in_a, w);
  });
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(!f.get().first);
  BOOST_TEST((f.get().second == wait_outcome::no_throw));
}

BOOST_AUTO_TEST_CASE(a_worker_survives_a_throwing_task) {
  thread_probe threads;
  std::atomic<int> handled{0};
  std::atomic<std::thread::id> thrower{};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  threads.install(o);
  o.error_handler = [&](std::exception_ptr, const chronopool::task_view*) { handled.fetch_add(1); };
  scheduled_thread_pool pool(o);

  auto failing = pool.submit([&]() -> int {
    thrower.store(std::this_thread::get_id());
    throw std::runtime_error("boom");
  });
  BOOST_REQUIRE(ready_within(failing));
  BOOST_TEST(!failing.cancelled());
  BOOST_CHECK_THROW(failing.get(), std::runtime_error);
  BOOST_TEST(handled.load() == 0);  // the future reports it

  auto odd = pool.submit([] { throw 42; });
  BOOST_REQUIRE(ready_within(odd));
  BOOST_CHECK_THROW(odd.get(), int);

  pool.execute([] { throw std::logic_error("fire and forget"); });
  BOOST_TEST(pool_test::eventually([&] { return handled.load() == 1; }));

  auto next = pool.submit([] { return std::this_thread::get_id(); });
  BOOST_REQUIRE(ready_within(next));
  BOOST_TEST((next.get() == thrower.load()));
  BOOST_TEST(pool.pool_size() == 1u);
  BOOST_TEST(threads.starts.load() == 1);
  BOOST_TEST(threads.stops.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

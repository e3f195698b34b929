// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One-shot scheduling: submit / schedule / schedule_at, results, ordering,
// delays (negative, huge), and the scheduled_future handle itself.
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;

namespace {

struct custom_error : std::runtime_error {
  explicit custom_error(int c) : std::runtime_error("custom"), code(c) {}
  int code;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(one_shot)

BOOST_AUTO_TEST_CASE(submit_returns_int) {
  scheduled_thread_pool pool(2);
  scheduled_future<int> f = pool.submit([] { return 6 * 7; });
  BOOST_CHECK(f.valid());
  BOOST_CHECK(!f.is_periodic());
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), 42);
  BOOST_CHECK(f.done());
  BOOST_CHECK(!f.cancelled());
  // get() may be called again and returns the same object.
  BOOST_CHECK_EQUAL(&f.get(), &f.get());
}

BOOST_AUTO_TEST_CASE(submit_returns_string) {
  scheduled_thread_pool pool(1);
  std::string suffix = "pool";
  auto f = pool.submit([suffix] { return "chrono" + suffix; });
  static_assert(std::is_same_v<decltype(f), scheduled_future<std::string>>);
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), "chronopool");
}

BOOST_AUTO_TEST_CASE(move_only_result_and_callable) {
  scheduled_thread_pool pool(1);
  auto owned = std::make_unique<int>(7);
  // A move-only callable returning a move-only result, read through get()'s reference.
  auto f = pool.submit([p = std::move(owned)] { return std::make_unique<int>(*p * 6); });
  static_assert(std::is_same_v<decltype(f), scheduled_future<std::unique_ptr<int>>>);
  require_ready(f);
  const std::unique_ptr<int>& r = f.get();
  BOOST_REQUIRE(r);
  BOOST_CHECK_EQUAL(*r, 42);
  auto copy = f;
  BOOST_CHECK_EQUAL(copy.get().get(), r.get());  // one shared result, not a copy
}

BOOST_AUTO_TEST_CASE(submit_void) {
  scheduled_thread_pool pool(1);
  std::atomic<int> ran{0};
  scheduled_future<void> f = pool.submit([&] { ran.fetch_add(1); });
  require_ready(f);
  BOOST_CHECK_NO_THROW(f.get());
  BOOST_CHECK_EQUAL(ran.load(), 1);
  BOOST_CHECK(f.done());
}

BOOST_AUTO_TEST_CASE(execute_runs_fire_and_forget) {
  scheduled_thread_pool pool(1);
  std::promise<std::thread::id> where;
  auto got = where.get_future();
  pool.execute([&] { where.set_value(std::this_thread::get_id()); });
  BOOST_REQUIRE(got.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK(got.get() != std::this_thread::get_id());
}

BOOST_AUTO_TEST_CASE(result_outlives_the_pool) {
  scheduled_future<std::string> f;
  {
    scheduled_thread_pool pool(1);
    f = pool.submit([] { return std::string(1000, 'x'); });
    require_ready(f);
  }
  BOOST_CHECK_EQUAL(f.get().size(), 1000U);
}

BOOST_AUTO_TEST_CASE(schedule_respects_delay) {
  scheduled_thread_pool pool(2);
  const auto t0 = steady::now();
  auto f_ms = pool.schedule(40ms, [] { return steady::now(); });
  auto f_us = pool.schedule(std::chrono::microseconds(30'000), [] { return steady::now(); });
  auto f_dbl = pool.schedule(std::chrono::duration<double, std::milli>(35.5), [] { return steady::now(); });
  require_ready(f_ms);
  require_ready(f_us);
  require_ready(f_dbl);
  BOOST_TEST_INFO("ms: " << ms(f_ms.get() - t0) << " us: " << ms(f_us.get() - t0) << " dbl: " << ms(f_dbl.get() - t0));
  BOOST_CHECK(f_ms.get() - t0 >= 40ms);
  BOOST_CHECK(f_us.get() - t0 >= 30ms);
  BOOST_CHECK(f_dbl.get() - t0 >= 35ms);
  BOOST_CHECK(f_ms.get() - t0 < wait_limit);
}

BOOST_AUTO_TEST_CASE(delay_reports_time_left) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(1h, [] {});
  const auto left = f.delay();
  BOOST_CHECK(left <= 1h);
  BOOST_CHECK(left > 59min);
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel());
}

BOOST_AUTO_TEST_CASE(schedule_at_steady_clock) {
  scheduled_thread_pool pool(1);
  const auto t0 = steady::now();
  const auto at = t0 + 30ms;
  auto f = pool.schedule_at(at, [] { return steady::now(); });
  // A coarser duration type on the same clock.
  const auto at_ms = std::chrono::time_point_cast<std::chrono::milliseconds>(t0) + 40ms;
  auto g = pool.schedule_at(at_ms, [] { return steady::now(); });
  require_ready(f);
  require_ready(g);
  BOOST_TEST_INFO("f started " << ms(f.get() - t0) << " ms after t0");
  BOOST_CHECK(f.get() >= at);
  BOOST_CHECK(g.get() >= at_ms);
}

BOOST_AUTO_TEST_CASE(schedule_at_system_clock) {
  scheduled_thread_pool pool(1);
  const auto sys_at = std::chrono::system_clock::now() + 40ms;
  const auto t0 = steady::now();
  auto f = pool.schedule_at(sys_at, [] { return steady::now(); });
  require_ready(f);
  const auto elapsed = f.get() - t0;
  BOOST_TEST_INFO("elapsed " << ms(elapsed) << " ms");
  // The conversion to steady time happens once at submission; allow a little
  // slack for the time between reading the two clocks.
  BOOST_CHECK(elapsed >= 35ms);
  BOOST_CHECK(elapsed < wait_limit);
}

BOOST_AUTO_TEST_CASE(schedule_at_past_system_time_runs_now) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_at(std::chrono::system_clock::now() - 1h, [] { return 5; });
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), 5);
}

BOOST_AUTO_TEST_CASE(fifo_among_equal_deadlines) {
  gate g;
  recorder<int> order;
  scheduled_thread_pool pool(1);
  gate_opener opener(g);
  // Hold the only thread so every task below is queued before any runs.
  auto blocker = pool.submit([&] { return g.wait(); });
  const auto at = steady::now();
  constexpr int n = 200;
  std::vector<scheduled_future<void>> fs;
  for (int i = 0; i < n; ++i) fs.push_back(pool.schedule_at(at, [&order, i] { order.push(i); }));
  g.open();
  for (auto& f : fs) require_ready(f);
  BOOST_CHECK(blocker.get());
  const auto seen = order.snapshot();
  BOOST_REQUIRE_EQUAL(seen.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) BOOST_CHECK_EQUAL(seen[static_cast<std::size_t>(i)], i);
}

BOOST_AUTO_TEST_CASE(fifo_among_submits) {
  gate g;
  recorder<int> order;
  scheduled_thread_pool pool(1);
  gate_opener opener(g);
  auto blocker = pool.submit([&] { return g.wait(); });
  constexpr int n = 100;
  std::vector<scheduled_future<void>> fs;
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      fs.push_back(pool.submit([&order, i] { order.push(i); }));
    } else {
      pool.execute([&order, i] { order.push(i); });
    }
  }
  g.open();
  BOOST_REQUIRE(eventually([&] { return order.size() == static_cast<std::size_t>(n); }));
  BOOST_CHECK(blocker.get());
  const auto seen = order.snapshot();
  for (int i = 0; i < n; ++i) BOOST_CHECK_EQUAL(seen[static_cast<std::size_t>(i)], i);
}

BOOST_AUTO_TEST_CASE(deadline_order_despite_reverse_submission) {
  gate g;
  recorder<int> order;
  scheduled_thread_pool pool(1);
  gate_opener opener(g);
  auto blocker = pool.submit([&] { return g.wait(); });
  const auto base = steady::now();
  constexpr int n = 50;
  std::vector<scheduled_future<void>> fs;
  for (int i = n - 1; i >= 0; --i) {
    fs.push_back(pool.schedule_at(base + std::chrono::microseconds(100) * i, [&order, i] { order.push(i); }));
  }
  // Let every deadline pass while the thread is held, then release it: the
  // queue alone decides the order.
  std::this_thread::sleep_until(base + std::chrono::microseconds(100) * n + 1ms);
  g.open();
  for (auto& f : fs) require_ready(f);
  BOOST_CHECK(blocker.get());
  const auto seen = order.snapshot();
  BOOST_REQUIRE_EQUAL(seen.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) BOOST_CHECK_EQUAL(seen[static_cast<std::size_t>(i)], i);
}

BOOST_AUTO_TEST_CASE(deadline_order_with_real_delays) {
  recorder<int> order;
  scheduled_thread_pool pool(1);
  auto c = pool.schedule(60ms, [&] { order.push(3); });
  auto b = pool.schedule(30ms, [&] { order.push(2); });
  auto a = pool.schedule(1ms, [&] { order.push(1); });
  require_ready(c);
  require_ready(b);
  require_ready(a);
  BOOST_CHECK(order.snapshot() == (std::vector<int>{1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(exception_rethrown_by_get) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([]() -> int { throw custom_error(17); });
  require_ready(f);
  BOOST_CHECK(f.done());
  BOOST_CHECK(!f.cancelled());
  for (int i = 0; i < 2; ++i) {  // every get() rethrows the same error
    try {
      (void)f.get();
      BOOST_ERROR("get() did not throw");
    } catch (const custom_error& e) {
      BOOST_CHECK_EQUAL(e.code, 17);
    }
  }
  auto v = pool.schedule(1ms, [] { throw std::out_of_range("void task"); });
  require_ready(v);
  BOOST_CHECK_THROW(v.get(), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(stop_token_callables) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([](std::stop_token st) { return st.stop_possible() && !st.stop_requested(); });
  static_assert(std::is_same_v<decltype(f), scheduled_future<bool>>);
  std::atomic<bool> possible{false};
  auto v = pool.schedule(1ms, [&](std::stop_token st) { possible = st.stop_possible(); });
  static_assert(std::is_same_v<decltype(v), scheduled_future<void>>);
  auto at = pool.schedule_at(steady::now(), [](const std::stop_token& st) { return st.stop_possible() ? 1 : 0; });
  require_ready(f);
  require_ready(v);
  require_ready(at);
  BOOST_CHECK(f.get());
  BOOST_CHECK(possible.load());
  BOOST_CHECK_EQUAL(at.get(), 1);
}

BOOST_AUTO_TEST_CASE(empty_callables_throw_invalid_argument) {
  scheduled_thread_pool pool(1);
  int (*null_fn)() = nullptr;
  std::function<int()> empty_fn;
  std::function<void(std::stop_token)> empty_stop_fn;
  BOOST_CHECK_THROW(pool.submit(null_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.submit(empty_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.submit(empty_stop_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.execute(empty_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.execute(null_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule(10ms, empty_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule(10ms, null_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at(steady::now(), empty_fn), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at(std::chrono::system_clock::now(), null_fn), std::invalid_argument);
  // Nothing was queued or counted.
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(pool.task_count(), 0U);
  // A non-empty function pointer and std::function are fine.
  int (*fn)() = [] { return 3; };
  std::function<int()> sfn = [] { return 4; };
  auto a = pool.submit(fn);
  auto b = pool.submit(sfn);
  require_ready(a);
  require_ready(b);
  BOOST_CHECK_EQUAL(a.get() + b.get(), 7);
}

BOOST_AUTO_TEST_CASE(negative_delay_runs_now) {
  scheduled_thread_pool pool(1);
  const auto t0 = steady::now();
  auto f = pool.schedule(-1h, [] { return steady::now(); });
  auto g = pool.schedule(std::chrono::nanoseconds::min(), [] { return 2; });
  auto h = pool.schedule(std::chrono::duration<double>(-1e300), [] { return 3; });
  auto k = pool.schedule_at(steady::now() - 1h, [] { return 4; });
  BOOST_CHECK(f.delay() <= 0ns);
  require_ready(f);
  require_ready(g);
  require_ready(h);
  require_ready(k);
  BOOST_CHECK(f.get() >= t0);
  BOOST_CHECK_EQUAL(g.get() + h.get() + k.get(), 9);
}

BOOST_AUTO_TEST_CASE(earliest_representable_deadline_runs_now) {
  // The most overdue deadline there is: runs at once, and the lateness the
  // pool records for it saturates instead of overflowing (it is never negative).
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_at(steady::time_point::min(), [] { return 4; });
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), 4);
  BOOST_REQUIRE(eventually([&] { return pool.stats().lateness.count == 1; }));
  const auto l = pool.stats().lateness;
  BOOST_TEST_INFO("p50 " << l.p50.count() << " ns, max " << l.max.count() << " ns");
  BOOST_CHECK(l.p50 >= 0ns);
  BOOST_CHECK(l.max >= 0ns);
}

BOOST_AUTO_TEST_CASE(huge_delays_never_run_and_do_not_block_others) {
  recorder<int> order;
  std::atomic<int> never_ran{0};
  scheduled_thread_pool pool(1);
  std::vector<scheduled_future<void>> nevers;
  nevers.push_back(pool.schedule(std::chrono::hours::max(), [&] { ++never_ran; }));
  nevers.push_back(pool.schedule(std::chrono::days::max(), [&] { ++never_ran; }));
  nevers.push_back(pool.schedule(std::chrono::nanoseconds::max(), [&] { ++never_ran; }));
  nevers.push_back(pool.schedule(std::chrono::duration<double>(1e300), [&] { ++never_ran; }));
  nevers.push_back(pool.schedule_at(steady::time_point::max(), [&] { ++never_ran; }));
  auto far_sys = pool.schedule_at(std::chrono::system_clock::time_point::max(), [&] { ++never_ran; });

  for (auto& f : nevers) {
    BOOST_CHECK(f.delay() == steady::duration::max());
  }
  BOOST_CHECK(far_sys.delay() > 24h * 365 * 100);

  // Later work still runs, in deadline order, around the "never" entries.
  auto c = pool.schedule(40ms, [&] { order.push(3); });
  auto b = pool.schedule(20ms, [&] { order.push(2); });
  auto a = pool.submit([&] { order.push(1); });
  auto d = pool.schedule(std::chrono::hours(24 * 365), [&] { ++never_ran; });
  require_ready(c);
  require_ready(b);
  require_ready(a);
  BOOST_CHECK(order.snapshot() == (std::vector<int>{1, 2, 3}));
  for (auto& f : nevers) {
    BOOST_CHECK(f.wait_for(1ms) == std::future_status::timeout);
    BOOST_CHECK(!f.done());
  }
  BOOST_CHECK(!far_sys.done());
  BOOST_CHECK(!d.done());
  BOOST_CHECK_EQUAL(never_ran.load(), 0);
  BOOST_CHECK_EQUAL(pool.queued_count(), nevers.size() + 2);
  // The pool's destructor must not wait for them.
}

BOOST_AUTO_TEST_CASE(future_copy_semantics_and_identity) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return 1; });
  auto g = pool.submit([] { return 2; });
  scheduled_future<int> copy = f;
  BOOST_CHECK(copy == f);
  BOOST_CHECK(copy.id() == f.id());
  BOOST_CHECK(!(f == g));
  BOOST_CHECK(f.id() != g.id());
  BOOST_CHECK(f.id() != chronopool::task_id{});
  BOOST_CHECK(std::hash<chronopool::task_id>{}(f.id()) == std::hash<chronopool::task_id>{}(copy.id()));
  scheduled_future<int> assigned;
  BOOST_CHECK(!(assigned == f));
  assigned = g;
  BOOST_CHECK(assigned == g);
  require_ready(f);
  require_ready(g);
  // Copies refer to the same task: both report done and the same value.
  BOOST_CHECK(copy.done());
  BOOST_CHECK_EQUAL(copy.get(), 1);
  BOOST_CHECK_EQUAL(assigned.get(), 2);
  // Moving leaves the source invalid and the target equal to the original.
  scheduled_future<int> moved = std::move(copy);
  BOOST_CHECK(moved == f);
  BOOST_CHECK(!copy.valid());  // NOLINT(bugprone-use-after-move): documented state
  // Distinct live tasks have distinct ids.
  std::unordered_set<chronopool::task_id> ids;
  std::vector<scheduled_future<void>> fs;
  for (int i = 0; i < 50; ++i) {
    fs.push_back(pool.submit([] {}));
    ids.insert(fs.back().id());
  }
  BOOST_CHECK_EQUAL(ids.size(), fs.size());
  for (auto& x : fs) require_ready(x);
}

BOOST_AUTO_TEST_CASE(default_constructed_future) {
  scheduled_future<int> f;
  scheduled_future<void> v;
  BOOST_CHECK(!f.valid());
  BOOST_CHECK(!v.valid());
  BOOST_CHECK(f.id() == chronopool::task_id{});
  BOOST_CHECK(!f.done());
  BOOST_CHECK(!f.cancelled());
  BOOST_CHECK(!f.is_periodic());
  BOOST_CHECK(!f.cancel());
  BOOST_CHECK(!f.cancel(true));
  try {
    (void)f.get();
    BOOST_ERROR("get() on a default-constructed future did not throw");
  } catch (const std::future_error& e) {
    BOOST_CHECK(e.code() == std::future_errc::no_state);
  }
  BOOST_CHECK_THROW(v.get(), std::future_error);
  BOOST_CHECK_THROW(f.wait(), std::future_error);
  BOOST_CHECK_THROW((void)f.wait_for(1ms), std::future_error);
  BOOST_CHECK_THROW((void)f.wait_until(steady::now()), std::future_error);
  BOOST_CHECK_THROW((void)f.delay(), std::future_error);
  scheduled_future<int> other;
  BOOST_CHECK(f == other);  // both refer to no task
}

BOOST_AUTO_TEST_CASE(wait_for_timeout_then_ready) {
  gate g;
  scheduled_thread_pool pool(1);
  gate_opener opener(g);
  auto f = pool.submit([&] {
    (void)g.wait();
    return 9;
  });
  BOOST_CHECK(f.wait_for(20ms) == std::future_status::timeout);
  BOOST_CHECK(f.wait_until(steady::now() + 5ms) == std::future_status::timeout);
  BOOST_CHECK(f.wait_until(std::chrono::system_clock::now() + 5ms) == std::future_status::timeout);
  BOOST_CHECK(f.wait_for(0ms) == std::future_status::timeout);
  BOOST_CHECK(f.wait_for(-1s) == std::future_status::timeout);
  BOOST_CHECK(!f.done());
  g.open();
  BOOST_REQUIRE(f.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK(f.wait_for(0ms) == std::future_status::ready);
  BOOST_CHECK(f.wait_until(steady::time_point::min()) == std::future_status::ready);
  BOOST_CHECK_EQUAL(f.get(), 9);
}

BOOST_AUTO_TEST_CASE(get_blocks_until_result) {
  scheduled_thread_pool pool(1);
  const auto t0 = steady::now();
  auto f = pool.schedule(30ms, [] { return std::string("late"); });
  BOOST_CHECK_EQUAL(f.get(), "late");  // blocks; the task is bounded by its 30 ms delay
  BOOST_CHECK(steady::now() - t0 >= 30ms);
  f.wait();  // returns at once once done
  BOOST_CHECK(f.done());
}

BOOST_AUTO_TEST_SUITE_END()

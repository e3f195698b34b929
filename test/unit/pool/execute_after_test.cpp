// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// execute_after / execute_at: fire-and-forget delayed work.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using chronopool::rejected_execution;
using chronopool::rejection_policy;
using chronopool::rejection_reason;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::long_wait;
using pool_test::steady;

namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(execute_after)

BOOST_AUTO_TEST_CASE(runs_once_after_its_delay) {
  scheduled_thread_pool pool(2);
  pool_test::counter ran;
  std::atomic<steady::rep> ran_at{0};
  const auto submitted = steady::now();
  pool.execute_after(30ms, [&] {
    ran_at.store(steady::now().time_since_epoch().count());
    ran.bump();
  });
  BOOST_REQUIRE(ran.wait_for_at_least(1));
  BOOST_TEST((steady::time_point(steady::duration(ran_at.load())) - submitted >= 30ms));
  // Once: nothing is left queued and it did not run again.
  BOOST_TEST(pool_test::eventually([&] { return pool.queued_count() == 0u && pool.active_count() == 0u; }));
  BOOST_TEST(ran.value() == 1u);
}

BOOST_AUTO_TEST_CASE(execute_at_takes_any_clock) {
  scheduled_thread_pool pool(1);
  pool_test::counter ran;
  pool.execute_at(steady::now() + 1ms, [&] { ran.bump(); });
  pool.execute_at(std::chrono::system_clock::now() + 1ms, [&] { ran.bump(); });
  pool.execute_at(std::chrono::time_point<steady, std::chrono::duration<double>>(steady::now()), [&] { ran.bump(); });
  BOOST_TEST(ran.wait_for_at_least(3));
}

BOOST_AUTO_TEST_CASE(negative_delay_is_now_and_hours_max_is_never) {
  scheduled_thread_pool pool(1);
  pool_test::counter ran;
  std::atomic<int> never_ran{0};
  pool.execute_after(std::chrono::hours::max(), [&] { never_ran.fetch_add(1); });
  pool.execute_at(steady::time_point::max(), [&] { never_ran.fetch_add(1); });
  pool.execute_after(-1h, [&] { ran.bump(); });
  pool.execute_after(std::chrono::nanoseconds::min(), [&] { ran.bump(); });
  BOOST_TEST(ran.wait_for_at_least(2));
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 2u);
  for (const auto& p : pending) BOOST_TEST((p.deadline() == steady::time_point::max()));
  BOOST_TEST(never_ran.load() == 0);
}

// Work with equal deadlines runs in submission order (one thread: the runs
// are serialised, so the order they record is the order they ran in).
BOOST_AUTO_TEST_CASE(equal_deadlines_run_in_submission_order) {
  scheduled_thread_pool pool(1);
  pool_test::gate release;
  pool_test::counter started;
  pool.execute([&] {
    started.bump();
    release.wait();
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));
  std::mutex m;
  std::vector<int> order;
  pool_test::counter ran;
  const auto when = steady::now() + 2ms;
  constexpr int n = 50;
  for (int i = 0; i < n; ++i) {
    auto record = [&, i] {
      {
        std::lock_guard lock(m);
        order.push_back(i);
      }
      ran.bump();
    };
    if (i % 2 == 0) {
      pool.execute_at(when, record);
    } else {
      pool.execute_after(when - steady::now(), record);  // a later steady deadline only if time moved on
    }
  }
  release.open();
  BOOST_REQUIRE(ran.wait_for_at_least(n));
  std::lock_guard lock(m);
  // The odd ones may have a later deadline than `when` (now moved on), so
  // check FIFO among the even ones, which share one deadline exactly.
  std::vector<int> evens;
  for (int i : order)
    if (i % 2 == 0) evens.push_back(i);
  BOOST_REQUIRE(evens.size() == static_cast<std::size_t>(n / 2));
  for (std::size_t k = 0; k < evens.size(); ++k) BOOST_TEST(evens[k] == static_cast<int>(2 * k));
}

BOOST_AUTO_TEST_CASE(errors_go_to_the_error_handler) {
  std::mutex m;
  std::vector<std::string> errors;
  std::vector<bool> had_task;
  pool_test::counter reported;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.error_handler = [&](std::exception_ptr e, const chronopool::task_view* task) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      std::lock_guard lock(m);
      errors.emplace_back(ex.what());
      had_task.push_back(task != nullptr && !task->is_periodic());
    }
    reported.bump();
  };
  scheduled_thread_pool pool(o);
  pool.execute_after(1ms, [] { throw std::runtime_error("boom after"); });
  pool.execute_at(steady::now(), [] { throw std::runtime_error("boom at"); });
  BOOST_REQUIRE(reported.wait_for_at_least(2));
  std::lock_guard lock(m);
  BOOST_TEST(errors.size() == 2u);
  BOOST_TEST((std::count(errors.begin(), errors.end(), "boom after") == 1));
  BOOST_TEST((std::count(errors.begin(), errors.end(), "boom at") == 1));
  for (bool b : had_task) BOOST_TEST(b);
}

// Rejected after shutdown as execute() is: abort throws (reason shutdown),
// the other policies drop it; it never runs and its callable is destroyed.
BOOST_DATA_TEST_CASE(rejected_after_shutdown_under_each_policy, bdata::make({0, 1, 2, 3}), policy_index) {
  const auto policy = static_cast<rejection_policy>(policy_index);
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.rejection = policy;
  scheduled_thread_pool pool(o);
  pool.shutdown();
  std::atomic<int> runs{0};
  auto payload = std::make_shared<int>(0);
  auto after = [&] { pool.execute_after(1ms, [&runs, payload] { runs.fetch_add(1); }); };
  auto at = [&] { pool.execute_at(steady::now(), [&runs, payload] { runs.fetch_add(1); }); };
  for (const auto& call : {std::function<void()>(after), std::function<void()>(at)}) {
    if (policy == rejection_policy::abort) {
      try {
        call();
        BOOST_ERROR("not rejected");
      } catch (const rejected_execution& e) {
        BOOST_TEST((e.reason() == rejection_reason::shutdown));
        BOOST_TEST(std::string(e.what()).find("execute_a") != std::string::npos);
      }
    } else {
      BOOST_CHECK_NO_THROW(call());
    }
  }
  BOOST_TEST(payload.use_count() == 1, "the refused callable must be destroyed");
  BOOST_TEST(pool.wait_for_termination(long_wait));
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(empty_callable_is_refused_naming_the_call) {
  scheduled_thread_pool pool(1);
  std::function<void()> empty;
  try {
    pool.execute_after(1ms, empty);
    BOOST_ERROR("accepted an empty callable");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("execute_after") != std::string::npos);
  }
  try {
    pool.execute_at(steady::now(), empty);
    BOOST_ERROR("accepted an empty callable");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("execute_at") != std::string::npos);
  }
  BOOST_TEST(pool.queued_count() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

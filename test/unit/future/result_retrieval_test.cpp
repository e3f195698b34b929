// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Getting a result out of a scheduled_future: by reference from an lvalue
// handle, by value from an rvalue one, and moved out once by take().
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using namespace chronopool_test;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;

namespace {

bool already_retrieved(const std::future_error& e) { return e.code() == std::future_errc::future_already_retrieved; }

}  // namespace

BOOST_AUTO_TEST_SUITE(result_retrieval)

BOOST_AUTO_TEST_CASE(get_on_a_temporary_future_returns_the_value_not_a_reference_into_the_task) {
  scheduled_thread_pool pool(1);
  static_assert(std::is_same_v<decltype(pool.submit([] { return 1; }).get()), int>);
  static_assert(std::is_same_v<decltype(std::declval<scheduled_future<int>&>().get()), const int&>);
  // The temporary future is the last handle of its task once the worker has
  // let go: a reference into the task would dangle (ASan: heap-use-after-free).
  const auto& v = pool.submit([] { return std::vector<int>(1000, 7); }).get();
  BOOST_TEST(v.size() == 1000u);
  BOOST_TEST(v[999] == 7);
}

BOOST_AUTO_TEST_CASE(a_move_only_result_is_moved_out_by_get_on_an_rvalue) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return std::make_unique<int>(42); });
  auto other = f;
  std::unique_ptr<int> p = std::move(f).get();
  BOOST_REQUIRE(p);
  BOOST_TEST(*p == 42);
  // Retrieved: every handle now says so instead of handing out a null pointer.
  BOOST_CHECK_EXCEPTION(other.get(), std::future_error, already_retrieved);
  BOOST_CHECK_EXCEPTION(other.take(), std::future_error, already_retrieved);
  BOOST_CHECK_EXCEPTION(std::move(other).get(), std::future_error, already_retrieved);
}

BOOST_AUTO_TEST_CASE(take_moves_the_result_out_once) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return std::make_unique<int>(7); });
  std::unique_ptr<int> p = f.take();
  BOOST_REQUIRE(p);
  BOOST_TEST(*p == 7);
  BOOST_CHECK_EXCEPTION(f.take(), std::future_error, already_retrieved);
  BOOST_CHECK_EXCEPTION(f.get(), std::future_error, already_retrieved);
  BOOST_TEST(f.done());  // still done and not cancelled: only the value is gone
  BOOST_TEST(!f.cancelled());
}

BOOST_AUTO_TEST_CASE(take_of_a_copyable_result_leaves_a_retrieved_state_too) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return std::string(100, 'x'); });
  auto g = f;
  BOOST_TEST(f.take() == std::string(100, 'x'));
  BOOST_CHECK_EXCEPTION(g.get(), std::future_error, already_retrieved);
  BOOST_CHECK_EXCEPTION(std::move(g).get(), std::future_error, already_retrieved);
}

BOOST_AUTO_TEST_CASE(get_on_an_rvalue_copies_while_another_handle_exists) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return std::vector<int>(10, 3); });
  auto g = f;
  std::vector<int> v = std::move(f).get();
  BOOST_TEST(v == std::vector<int>(10, 3));
  BOOST_TEST(g.get() == std::vector<int>(10, 3));  // not moved from under g
}

BOOST_AUTO_TEST_CASE(take_rethrows_the_tasks_error_and_reports_cancellation) {
  scheduled_thread_pool pool(1);
  auto failing = pool.submit([]() -> std::unique_ptr<int> { throw std::runtime_error("boom"); });
  BOOST_CHECK_THROW(failing.take(), std::runtime_error);
  BOOST_CHECK_THROW(std::move(failing).get(), std::runtime_error);
  auto far = pool.schedule(1h, [] { return std::make_unique<int>(1); });
  BOOST_REQUIRE(far.cancel());
  BOOST_CHECK_THROW(far.take(), chronopool::task_cancelled);
}

BOOST_AUTO_TEST_CASE(of_concurrent_takes_through_copies_exactly_one_gets_the_value) {
  scheduled_thread_pool pool(1);
  for (int round = 0; round < 50; ++round) {
    auto f = pool.submit([] { return std::make_unique<int>(5); });
    require_ready(f);
    constexpr int takers = 4;
    std::atomic<int> ready{0};
    std::atomic<int> got{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < takers; ++i) {
      threads.emplace_back([&, copy = f, rvalue = (i % 2 == 0)]() mutable {
        ready.fetch_add(1);
        while (ready.load() < takers) std::this_thread::yield();
        try {
          std::unique_ptr<int> p = rvalue ? std::move(copy).get() : copy.take();
          if (p && *p == 5) got.fetch_add(1);
        } catch (const std::future_error& e) {
          if (already_retrieved(e)) refused.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    BOOST_TEST(got.load() == 1);
    BOOST_TEST(refused.load() == takers - 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()

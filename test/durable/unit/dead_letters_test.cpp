// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43, item 1: dead letters can be listed, re-driven (the fire runs
// again, here with a fixed handler) and deleted.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::dead_letters;
using dt::fast_options;
using dt::wait_until;

namespace {

cd::scheduler_options failing_fast(const std::string& ns) {
  auto o = fast_options(ns, dt::test_redis_options());
  o.failure.max_attempts = 2;
  o.failure.initial_backoff = 10ms;
  return o;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_dead_letters, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(a_redriven_one_shot_runs_again_with_its_fire_id_once_the_handler_is_fixed) {
  std::atomic<bool> fixed{false};
  std::atomic<int> ok_runs{0};
  cd::scheduler s(pool.get_executor(), failing_fast(ns));
  std::string ok_fire, ok_payload;
  s.register_handler("job", [&](const cd::fire_context& c) {
    if (!fixed) throw std::runtime_error("bug 17");
    ok_fire = c.fire_id;
    ok_payload = c.payload;
    ++ok_runs;
  });
  s.start();
  s.async_schedule("once", "job", "the payload", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return dead_letters(s).size() == 1u; }));
  const auto d = dead_letters(s)[0];
  BOOST_TEST(d.attempts == 2u);
  BOOST_TEST(d.last_error == "bug 17");
  fixed = true;
  const auto id = s.async_redrive_dead_letter(d.fire_id, boost::asio::use_future).get();
  BOOST_TEST(id == "once");  // the one-shot's id was free again
  BOOST_TEST_REQUIRE(wait_until([&] { return ok_runs.load() == 1; }));
  BOOST_TEST(ok_fire == d.fire_id);
  BOOST_TEST(ok_payload == "the payload");
  BOOST_TEST(dead_letters(s).empty());
  // Re-driving it again: there is no such dead letter any more.
  BOOST_TEST(s.async_redrive_dead_letter(d.fire_id, boost::asio::use_future).get().empty());
  std::this_thread::sleep_for(100ms);
  BOOST_TEST(ok_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_redriven_fire_of_a_periodic_schedule_runs_beside_it_under_its_fire_id) {
  std::atomic<bool> fixed{false};
  std::mutex m;
  cd::scheduler s(pool.get_executor(), failing_fast(ns));
  std::vector<std::string> ran;  // schedule ids of successful runs
  s.register_handler("job", [&](const cd::fire_context& c) {
    if (!fixed) throw std::runtime_error("not yet");
    std::lock_guard lk(m);
    ran.push_back(c.schedule_id);
  });
  s.start();
  s.async_schedule_at_fixed_rate("rate", "job", "", 0ms, 1h, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return dead_letters(s).size() == 1u; }));
  const auto d = dead_letters(s)[0];
  fixed = true;
  const auto id = s.async_redrive_dead_letter(d.fire_id, boost::asio::use_future).get();
  BOOST_TEST(id == d.fire_id);  // "rate" itself moved on to its next occurrence, an hour away
  BOOST_TEST_REQUIRE(wait_until([&] {
    std::lock_guard lk(m);
    return ran.size() == 1u;
  }));
  BOOST_TEST(ran[0] == d.fire_id);
  s.async_cancel("rate", boost::asio::use_future).get();
}

BOOST_AUTO_TEST_CASE(a_dead_letter_can_be_deleted) {
  cd::scheduler s(pool.get_executor(), failing_fast(ns));
  s.start();
  s.async_schedule("gone", "nobody", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return dead_letters(s).size() == 1u; }));
  const auto fire = dead_letters(s)[0].fire_id;
  BOOST_TEST(s.async_delete_dead_letter(fire, boost::asio::use_future).get());
  BOOST_TEST(!s.async_delete_dead_letter(fire, boost::asio::use_future).get());
  BOOST_TEST(dead_letters(s).empty());
}

BOOST_AUTO_TEST_SUITE_END()

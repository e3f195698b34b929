// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: re-creating a schedule with identical parameters at each deploy
// (replace = true, the same start) keeps its state instead of re-running an
// occurrence that already completed, and schedule_options::update changes a
// schedule in place keeping its position (what ran stays ran).
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"

#include <chronopool/durable/detail/function_calls.hpp>

#include <atomic>
#include <chrono>
#include <string>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::fast_options;
using dt::wait_until;

namespace {

// A field of schedule `id` as Redis keeps it ("" when absent).
std::string field(const cd::scheduler_options& o, const std::string& id, const std::string& name) {
  dt::sync_redis redis(o.redis);
  const auto ks = dt::keys_of(o, id);
  auto v = redis.exec({"HGET", ks.prefix() + "s:" + id, name});
  return v.is_text() ? v.str : std::string{};
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_update_in_place, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(three_deploys_with_replace_run_a_completed_fire_once) {
  auto o = fast_options(ns, dt::test_redis_options());
  std::atomic<int> runs{0};
  std::atomic<int> sentinels{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const cd::fire_context&) { ++runs; });
  s.register_handler("sentinel", [&](const cd::fire_context&) { ++sentinels; });
  s.start();
  const auto start = std::chrono::system_clock::now();
  cd::schedule_options replace;
  replace.replace = true;
  const auto deploy = [&] {
    s.async_schedule_at_fixed_rate("daily", "job", "v1", start, 1h, replace, boost::asio::use_future).get();
  };
  deploy();
  BOOST_TEST_REQUIRE(wait_until([&] { return runs.load() == 1; }));
  for (int i = 2; i <= 3; ++i) {
    deploy();
    // A one-shot due now runs after anything due before it was claimed.
    s.async_schedule("sentinel" + std::to_string(i), "sentinel", "", 0ms, boost::asio::use_future).get();
    BOOST_TEST_REQUIRE(wait_until([&] { return sentinels.load() == i - 1; }));
  }
  BOOST_TEST(!wait_until([&] { return runs.load() > 1; }, 300ms));
  BOOST_TEST(runs.load() == 1, "the fire of the first deploy ran " << runs.load() << " times");
  BOOST_TEST(field(o, "daily", "fires") == "1");
  s.async_cancel("daily", boost::asio::use_future).get();
}

BOOST_AUTO_TEST_CASE(update_changes_a_schedule_in_place_keeping_its_position) {
  auto o = fast_options(ns, dt::test_redis_options());
  std::atomic<int> runs{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const cd::fire_context&) { ++runs; });
  s.start();
  const auto start = std::chrono::system_clock::now();
  const auto first_due =
      s.async_schedule_at_fixed_rate("u", "job", "v1", start, 1h, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return runs.load() == 1 && field(o, "u", "fires") == "1"; }));
  const std::string next_due = field(o, "u", "due");
  // A new payload and period, and a start that would re-run it: kept where it is.
  cd::schedule_options update;
  update.update = true;
  const auto due = s.async_schedule_at_fixed_rate("u", "job", "v2", start - 1min, 2h, update,
                                                  boost::asio::use_future)
                       .get();
  BOOST_TEST(field(o, "u", "payload") == "v2");
  BOOST_TEST(field(o, "u", "period") == "7200000");
  BOOST_TEST(field(o, "u", "due") == next_due);
  BOOST_TEST((due == first_due + 1h));
  BOOST_TEST(field(o, "u", "fires") == "1");
  BOOST_TEST(!wait_until([&] { return runs.load() > 1; }, 300ms));
  // Without an existing schedule, update creates one.
  s.async_schedule_at_fixed_rate("fresh", "job", "", start + 1h, 1h, update, boost::asio::use_future).get();
  BOOST_TEST(field(o, "fresh", "task") == "job");
  s.async_cancel("u", boost::asio::use_future).get();
  s.async_cancel("fresh", boost::asio::use_future).get();
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: async_upsert_schedules when the connection is lost mid-bulk.
// The calls sent but never answered are reported "not confirmed" (they may
// have been applied), those never sent "not written"; upserting everything
// again afterwards, with update, leaves every schedule there once.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "stall_proxy.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace bulk_lost_cd = chronopool::durable;
namespace bulk_lost_dt = chronopool::durable::test;
using namespace std::chrono_literals;

// 2600 fixed-rate schedules: six calls of up to 500, four in flight at once.
std::vector<bulk_lost_cd::schedule_spec> bulk_lost_specs(bool update) {
  std::vector<bulk_lost_cd::schedule_spec> specs(2600);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto& s = specs[i];
    s.id = "bulk-" + std::to_string(i);
    s.task = "job";
    s.kind = bulk_lost_cd::schedule_kind::fixed_rate;
    s.delay = 1h;
    s.period = 1h;
    s.options.update = update;
  }
  return specs;
}

using bulk_lost_outcome = std::pair<boost::system::error_code, std::vector<bulk_lost_cd::upsert_result>>;

// Starts the upsert; its future (not use_future's: an exception_ptr
// crossing threads is a false race under TSan).
std::future<bulk_lost_outcome> bulk_lost_upsert(bulk_lost_cd::scheduler& s, bool update) {
  auto done = std::make_shared<std::promise<bulk_lost_outcome>>();
  auto result = done->get_future();
  s.async_upsert_schedules(bulk_lost_specs(update),
                           [done](boost::system::error_code ec, std::vector<bulk_lost_cd::upsert_result> r) {
                             done->set_value({ec, std::move(r)});
                           });
  return result;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_bulk_upsert_lost_connection, bulk_lost_dt::pool_fixture)

BOOST_AUTO_TEST_CASE(calls_sent_are_not_confirmed_and_the_rest_not_written_and_a_second_upsert_completes_them) {
  chronopool::durable::chaos::stall_proxy proxy(bulk_lost_dt::test_redis_options().port);
  bulk_lost_cd::redis_options through_proxy = bulk_lost_dt::test_redis_options();
  through_proxy.port = proxy.port();
  auto o = bulk_lost_dt::fast_options(ns, through_proxy);
  o.redis.request_timeout = 30s;  // the cut ends the calls, not a timeout
  o.log_handler = [](const chronopool::log_record&) {};
  bulk_lost_cd::scheduler s(pool.get_executor(), o);
  s.async_server_time(boost::asio::use_future).get();  // connected

  // The proxy holds what is sent; the calls are cut off unanswered.
  proxy.set_stalled(true);
  auto result = bulk_lost_upsert(s, false);
  std::this_thread::sleep_for(500ms);
  proxy.cut_all();
  // Even a cut before the calls went out (a slow machine) ends them: on the
  // stalled reconnection, after request_timeout, still unanswered.
  BOOST_TEST_REQUIRE((result.wait_for(90s) == std::future_status::ready));
  proxy.set_stalled(false);
  const auto [ec, results] = result.get();
  BOOST_TEST(ec.failed());
  BOOST_TEST_REQUIRE(results.size() == 2600u);
  std::size_t not_confirmed = 0, not_written = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    BOOST_TEST(r.id == "bulk-" + std::to_string(i));
    BOOST_TEST((r.outcome == bulk_lost_cd::upsert_outcome::failed));
    if (r.error.starts_with("not confirmed (")) {
      BOOST_TEST(not_written == 0u, "spec " << i << " not confirmed after one not written");
      BOOST_TEST(r.error.find("upsert again with replace or update") != std::string::npos, r.error);
      ++not_confirmed;
    } else if (r.error.starts_with("not written: ")) {
      ++not_written;
    } else {
      BOOST_TEST(false, "spec " << i << ": " << r.error);
    }
  }
  // Four calls of 500 were in flight when the connection went; the
  // remaining 600 were never sent.
  BOOST_TEST(not_confirmed == 2000u);
  BOOST_TEST(not_written == 600u);

  // Upserting all of them again, in place, completes the set once.
  std::vector<bulk_lost_cd::upsert_result> again;
  BOOST_TEST_REQUIRE(bulk_lost_dt::wait_until([&] {
    auto [e, r] = bulk_lost_upsert(s, true).get();
    again = std::move(r);
    return !e;  // else still reconnecting
  }));
  for (const auto& r : again)
    BOOST_TEST((r.outcome == bulk_lost_cd::upsert_outcome::created ||
                r.outcome == bulk_lost_cd::upsert_outcome::updated),
               r.id << ": " << r.error);
  std::size_t listed = 0;
  bulk_lost_cd::schedule_query q;
  q.limit = 1000;
  do {
    const auto page = s.async_list_schedules(q, boost::asio::use_future).get();
    listed += page.schedules.size();
    q.after = page.next_cursor;
  } while (!q.after.empty());
  BOOST_TEST(listed == 2600u);
}

BOOST_AUTO_TEST_SUITE_END()

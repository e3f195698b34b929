// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: Redis losing its data under a running scheduler (FLUSHALL, a
// restart without persistence) is reported once as data_lost (stats, log
// record "data_lost"), fencing tokens handed out afterwards are greater
// than every token handed out before, and the ack of a fire claimed before
// the loss is not counted as acknowledged against the new data.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"

#include <chronopool/durable/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::fast_options;
using dt::wait_until;

namespace {

// The tokens a handler saw, in order, and the log records "data_lost".
struct observed {
  std::mutex m;
  std::vector<std::uint64_t> tokens;
  std::atomic<int> data_lost_logged{0};
  std::string last_message;

  std::size_t count() {
    std::lock_guard lk(m);
    return tokens.size();
  }
  chronopool::log_handler log_handler() {
    return [this](const chronopool::log_record& r) {
      if (r.event != "data_lost") return;
      std::lock_guard lk(m);
      last_message = std::string(r.message);
      ++data_lost_logged;
    };
  }
};

// Runs a fixed-rate schedule, makes `lose` wipe Redis's data, re-creates
// the schedule (as a deploy would) and checks what the scheduler says and
// the tokens it hands out.
template <class Lose>
void tokens_stay_monotonic_across(dt::redis_server& server, Lose lose) {
  chronopool::scheduled_thread_pool pool(2);
  observed seen;
  auto o = fast_options(dt::unique_namespace(), dt::own_server_redis_options(server));
  o.log_handler = seen.log_handler();
  {
    cd::scheduler s(pool.get_executor(), o);
    s.register_handler("job", [&](const cd::fire_context& f) {
      std::lock_guard lk(seen.m);
      seen.tokens.push_back(f.token);
    });
    s.start();
    s.async_schedule_at_fixed_rate("r", "job", "", 0ms, 10ms, {}, boost::asio::use_future).get();
    BOOST_TEST_REQUIRE(wait_until([&] { return seen.count() >= 20; }));
    BOOST_TEST(s.stats().data_lost == 0u);

    lose();

    const std::size_t before_count = seen.count();
    std::uint64_t max_before = 0;
    {
      std::lock_guard lk(seen.m);
      max_before = *std::max_element(seen.tokens.begin(), seen.tokens.end());
    }
    // The schedule is gone with the data: a deploy creates it again.
    BOOST_TEST_REQUIRE(wait_until([&] {
      try {
        s.async_schedule_at_fixed_rate("r", "job", "", 0ms, 10ms, {}, boost::asio::use_future).get();
        return true;
      } catch (const boost::system::system_error&) {
        return false;  // still reconnecting
      }
    }));
    BOOST_TEST_REQUIRE(wait_until([&] { return seen.count() >= before_count + 20; }));
    {
      std::lock_guard lk(seen.m);
      // Every fire that ran after the loss (a fire claimed before it may
      // still have been in flight at before_count, hence + 2) has a token
      // above every token handed out before it.
      for (std::size_t i = before_count + 2; i < seen.tokens.size(); ++i)
        BOOST_TEST(seen.tokens[i] > max_before, "token " << seen.tokens[i] << " after the loss, " << max_before
                                                          << " before it");
    }
    BOOST_TEST_REQUIRE(wait_until([&] { return s.stats().data_lost >= 1; }));
    std::this_thread::sleep_for(300ms);  // a second report would come with the next claims
    BOOST_TEST(s.stats().data_lost == 1u);
    BOOST_TEST(seen.data_lost_logged.load() == 1);
    BOOST_TEST(seen.last_message.find(cd::make_error_code(cd::error::data_lost).message()) != std::string::npos,
               seen.last_message);
  }
  pool.shutdown();
  pool.join();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(durable_data_loss)

BOOST_AUTO_TEST_CASE(flushall_is_reported_once_and_tokens_stay_monotonic) {
  dt::redis_server server(dt::own_server_options());
  server.start();
  tokens_stay_monotonic_across(server, [&] {
    dt::sync_redis admin(dt::own_server_redis_options(server));
    BOOST_TEST_REQUIRE(!admin.exec({"FLUSHALL"}).is_error());
  });
}

BOOST_AUTO_TEST_CASE(restart_without_persistence_is_reported_once_and_tokens_stay_monotonic) {
  auto so = dt::own_server_options();
  so.extra_args = {"--appendonly", "no"};
  dt::redis_server server(so);
  server.start();
  tokens_stay_monotonic_across(server, [&] { server.restart(); });
}

BOOST_AUTO_TEST_CASE(an_ack_from_before_the_loss_is_not_counted) {
  dt::redis_server server(dt::own_server_options());
  server.start();
  chronopool::scheduled_thread_pool pool(2);
  auto o = fast_options(dt::unique_namespace(), dt::own_server_redis_options(server));
  o.log_handler = [](const chronopool::log_record&) {};
  std::promise<void> started;
  std::promise<void> release;
  auto released = release.get_future().share();
  {
    cd::scheduler s(pool.get_executor(), o);
    s.register_handler("job", [&](const cd::fire_context&) {
      started.set_value();
      released.wait();
    });
    s.start();
    s.async_schedule("once", "job", "", 0ms, boost::asio::use_future).get();
    BOOST_TEST_REQUIRE((started.get_future().wait_for(10s) == std::future_status::ready));
    dt::sync_redis admin(dt::own_server_redis_options(server));
    BOOST_TEST_REQUIRE(!admin.exec({"FLUSHALL"}).is_error());
    release.set_value();
    // The ack is answered one way or the other: counted, or the loss found.
    BOOST_TEST_REQUIRE(wait_until([&] {
      const auto st = s.stats();
      return st.acked + st.data_lost + st.stale_acks > 0;
    }));
    const auto st = s.stats();
    BOOST_TEST(st.acked == 0u);
    BOOST_TEST(st.data_lost == 1u);
  }
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_SUITE_END()

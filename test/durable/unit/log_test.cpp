// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What a durable scheduler logs (scheduler_options::log_handler): refused
// and restored links once per change, not at every retry, and handler
// errors that no on_handler_error took.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"
#include "test_redis.hpp"

#include <chronopool/log.hpp>

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
using dt::fast_options;
using dt::wait_until;

namespace {

struct seen_record {
  chronopool::log_severity severity;
  std::string event;  // "<component>/<event>"
  std::string message;
  std::vector<std::pair<std::string, std::string>> fields;
  bool has_error;

  std::string field(const std::string& name) const {
    for (const auto& [n, v] : fields)
      if (n == name) return v;
    return "(none)";
  }
};

struct recorder {
  mutable std::mutex mutex;
  std::vector<seen_record> records;

  chronopool::log_handler handler() {
    // Called on the scheduler's threads: no Boost.Test macro here (not
    // thread-safe); what is checked is copied and checked by the test.
    return [this](const chronopool::log_record& r) {
      seen_record s{r.severity, std::string(r.component) + "/" + std::string(r.event), std::string(r.message), {},
                    r.error != nullptr};
      for (const auto& f : r.fields) s.fields.emplace_back(f.name, f.value);
      const std::lock_guard lock(mutex);
      records.push_back(std::move(s));
    };
  }
  std::vector<seen_record> with_event(const std::string& event) const {
    const std::lock_guard lock(mutex);
    std::vector<seen_record> out;
    for (const auto& r : records)
      if (r.event == "durable/" + event) out.push_back(r);
    return out;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_log, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(a_refused_password_is_logged_once_per_link_and_its_repair_once) {
  auto so = dt::own_server_options();
  so.requirepass = "right-secret-77ab";
  dt::redis_server server(so);
  server.start();
  recorder log;
  auto r = dt::own_server_redis_options(server);
  r.password = "wrong-secret-77ab";
  auto o = fast_options(ns, r);
  o.log_handler = log.handler();
  cd::scheduler s(pool.get_executor(), o);
  s.start();
  BOOST_TEST_REQUIRE(wait_until([&] { return !log.with_event("auth_failed").empty(); }));
  // reconnect_max is 200 ms: a second and a half is several more refusals.
  std::this_thread::sleep_for(1500ms);
  const auto refused = log.with_event("auth_failed");
  int command = 0;
  int subscription = 0;
  for (const auto& rec : refused) {
    BOOST_TEST((rec.severity == chronopool::log_severity::error));
    BOOST_TEST(rec.field("namespace") == ns);
    BOOST_TEST(rec.message.find("WRONGPASS") != std::string::npos, rec.message);
    BOOST_TEST(rec.message.find("secret") == std::string::npos, rec.message);
    (rec.field("link") == "command" ? command : subscription) += 1;
  }
  BOOST_TEST(command == 1);
  BOOST_TEST(subscription <= 1);
  BOOST_TEST(log.with_event("connected").empty());

  // Repaired (the server now takes the scheduler's password): each link
  // that was logged as refused is logged as connected, once.
  dt::sync_redis admin([&] {
    auto a = r;
    a.password = "right-secret-77ab";
    return a;
  }());
  BOOST_TEST_REQUIRE(!admin.exec({"CONFIG", "SET", "requirepass", "wrong-secret-77ab"}).is_error());
  const bool all_back = wait_until([&] { return log.with_event("connected").size() == refused.size(); });
  if (!all_back) {
    const std::lock_guard lock(log.mutex);
    for (const auto& rec : log.records) BOOST_TEST_MESSAGE(rec.event << " " << rec.field("link") << ": " << rec.message);
  }
  BOOST_TEST_REQUIRE(all_back);
  std::this_thread::sleep_for(300ms);
  const auto connected = log.with_event("connected");
  BOOST_TEST(connected.size() == refused.size());
  for (const auto& rec : connected) BOOST_TEST((rec.severity == chronopool::log_severity::info));
  BOOST_TEST(log.with_event("auth_failed").size() == refused.size());
}

BOOST_AUTO_TEST_CASE(a_handler_error_nobody_takes_is_logged_with_the_fire) {
  recorder log;
  auto o = fast_options(ns, dt::test_redis_options());
  o.log_handler = log.handler();
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("flaky", [](const cd::fire_context&) { throw std::runtime_error("disk full"); });
  s.start();
  s.async_schedule("f1", "flaky", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return !log.with_event("handler_failed").empty(); }));
  const auto rec = log.with_event("handler_failed").front();
  BOOST_TEST((rec.severity == chronopool::log_severity::warning));
  BOOST_TEST(rec.message == "handler of task 'flaky' threw: disk full");
  BOOST_TEST(rec.has_error);
  BOOST_TEST(rec.field("namespace") == ns);
  BOOST_TEST(rec.field("schedule") == "f1");
  BOOST_TEST(rec.field("fire") != "(none)");
  BOOST_TEST(rec.field("attempt") != "(none)");
  s.stop();
}

BOOST_AUTO_TEST_CASE(an_on_handler_error_takes_the_error_and_nothing_is_logged) {
  recorder log;
  auto o = fast_options(ns, dt::test_redis_options());
  o.log_handler = log.handler();
  std::atomic<int> taken{0};
  o.on_handler_error = [&](const cd::fire_context&, std::exception_ptr) { ++taken; };
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("flaky", [](const cd::fire_context&) { throw std::runtime_error("disk full"); });
  s.start();
  s.async_schedule("f2", "flaky", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return taken.load() >= 1; }));
  s.stop();
  BOOST_TEST(log.with_event("handler_failed").empty());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: versioned function libraries in a mixed fleet. A process loads
// its library over a lower revision, keeps a higher one, and refuses with
// version_mismatch (never overwriting it, never as not_connected) when
// Redis has its revision with other code; a namespace whose data another
// library's layout (its "library" marker) is refused with version_mismatch
// carrying the server's text.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/log.hpp>

#include "print_error.hpp"
#include "sync_redis.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace {

namespace version_cd = chronopool::durable;
namespace version_dt = chronopool::durable::test;

// This build's library source with its revision line set to `revision`,
// and `tail` appended (a Lua comment: other code, same functions).
std::string version_library_with(std::uint64_t revision, const std::string& tail = "") {
  std::string code = version_cd::detail::load_functions_call().back();
  const std::string line = "\n-- chronopool library revision ";
  const auto at = code.find(line);
  BOOST_TEST_REQUIRE(at != std::string::npos);
  const auto end = code.find('\n', at + 1);
  code.replace(at, end - at, line + std::to_string(revision));
  return code + tail;
}

std::string version_loaded_code(version_dt::sync_redis& r) {
  auto v = r.exec({"FUNCTION", "LIST", "LIBRARYNAME", version_cd::detail::library_name, "WITHCODE"});
  for (const auto& lib : v.elements)
    for (std::size_t i = 0; i + 1 < lib.elements.size(); i += 2)
      if (lib.elements[i].str == "library_code") return lib.elements[i + 1].str;
  return {};
}

struct version_log {
  std::mutex mutex;
  std::vector<std::string> events;
  chronopool::log_handler handler() {
    return [this](const chronopool::log_record& r) {
      const std::lock_guard lock(mutex);
      events.push_back(std::string(r.event) + ": " + std::string(r.message));
    };
  }
  bool has(const std::string& prefix) {
    const std::lock_guard lock(mutex);
    for (const auto& e : events)
      if (e.rfind(prefix, 0) == 0) return true;
    return false;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(durable_version_mismatch)

BOOST_AUTO_TEST_CASE(the_revision_is_read_from_the_second_line_only) {
  BOOST_TEST(version_cd::detail::our_library_revision() >= 2u);
  BOOST_TEST(version_cd::detail::library_revision("#!lua name=x\n-- chronopool library revision 17\nlocal a") == 17u);
  BOOST_TEST(version_cd::detail::library_revision("#!lua name=x\nlocal a\n-- chronopool library revision 17\n") == 0u);
  BOOST_TEST(version_cd::detail::library_revision("#!lua name=x\n-- chronopool library revision \n") == 0u);
  BOOST_TEST(version_cd::detail::library_revision("") == 0u);
}

BOOST_AUTO_TEST_CASE(the_same_revision_with_other_code_is_refused_loudly_and_not_overwritten) {
  version_dt::redis_server server(version_dt::own_server_options());
  server.start();
  const auto ro = version_dt::own_server_redis_options(server);
  version_dt::sync_redis admin(ro);
  const auto other = version_library_with(version_cd::detail::our_library_revision(), "\n-- another build\n");
  BOOST_TEST_REQUIRE(!admin.exec({"FUNCTION", "LOAD", "REPLACE", other}).is_error());

  chronopool::scheduled_thread_pool pool(1);
  version_log log;
  auto o = version_dt::fast_options(version_dt::unique_namespace(), ro);
  o.log_handler = log.handler();
  o.redis.request_timeout = std::chrono::seconds(5);
  version_cd::scheduler s(pool.get_executor(), o);
  s.start();
  BOOST_TEST_REQUIRE(version_dt::wait_until([&] { return s.connection_error() == version_cd::error::version_mismatch; }));
  BOOST_TEST(s.connection_error().message().find("two builds disagree") != std::string::npos,
             s.connection_error().message());
  // Operations fail at once with it, not with not_connected after the timeout.
  const auto t0 = std::chrono::steady_clock::now();
  const auto ec = version_dt::error_of([&](auto h) { s.async_schedule("x", "job", "", std::chrono::hours(1), std::move(h)); });
  BOOST_TEST(ec == version_cd::error::version_mismatch);
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)));
  BOOST_TEST(log.has("version_mismatch: command link: Redis runs a chronopool function library"));
  BOOST_TEST(version_loaded_code(admin) == other);  // still the other build's
  s.stop();
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_CASE(a_lower_revision_is_replaced_and_a_higher_one_kept) {
  version_dt::redis_server server(version_dt::own_server_options());
  server.start();
  const auto ro = version_dt::own_server_redis_options(server);
  version_dt::sync_redis admin(ro);
  chronopool::scheduled_thread_pool pool(2);
  auto run_one_fire = [&](const std::string& ns) {
    std::atomic<int> ran{0};
    version_cd::scheduler s(pool.get_executor(), version_dt::fast_options(ns, ro));
    s.register_handler("job", [&](const version_cd::fire_context&) { ++ran; });
    s.start();
    s.async_schedule("one", "job", "", std::chrono::milliseconds(0), boost::asio::use_future).get();
    BOOST_TEST(version_dt::wait_until([&] { return ran.load() == 1; }));
    BOOST_TEST(!s.connection_error());
    s.stop();
  };
  // An older build's library (revision 1, or none at all: 0) is upgraded.
  BOOST_TEST_REQUIRE(!admin.exec({"FUNCTION", "LOAD", "REPLACE", version_library_with(1)}).is_error());
  run_one_fire(version_dt::unique_namespace());
  BOOST_TEST(version_loaded_code(admin) == version_cd::detail::load_functions_call().back());
  // A newer build's library is kept, and used: it has the same functions.
  const auto newer = version_library_with(version_cd::detail::our_library_revision() + 1);
  BOOST_TEST_REQUIRE(!admin.exec({"FUNCTION", "LOAD", "REPLACE", newer}).is_error());
  run_one_fire(version_dt::unique_namespace());
  BOOST_TEST(version_loaded_code(admin) == newer);
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_CASE(a_namespace_of_another_library_s_layout_is_refused_with_the_server_s_text) {
  const std::string ns = version_dt::unique_namespace();
  const version_cd::detail::key_space ks(ns);
  version_dt::sync_redis r(version_dt::test_redis_options());
  BOOST_TEST_REQUIRE(!r.exec(version_cd::detail::load_functions_call()).is_error());
  // A fire claimed before another library took the namespace over.
  version_cd::detail::put_request p;
  p.id = "early";
  p.task = "job";
  BOOST_TEST_REQUIRE(!r.exec(version_cd::detail::put_call(ks, p)).is_error());
  version_cd::detail::claim_result claimed;
  BOOST_TEST_REQUIRE(!version_cd::detail::parse_claim(r.exec(version_cd::detail::claim_call(ks, "w", 60000, 1)), claimed));
  BOOST_TEST_REQUIRE(claimed.fires.size() == 1u);
  // The takeover, as the upgrade rules describe it: the marker, a new epoch.
  r.exec({"SET", ks.prefix() + "library", "chronopool_v9"});
  r.exec({"SET", ks.prefix() + "epoch", "1/other"});

  bool acked = false;
  std::int64_t next = 0;
  const auto& f = claimed.fires[0];
  auto ec = version_cd::detail::parse_ack(r.exec(version_cd::detail::ack_call(ks, f.id, f.token, f.epoch)), acked, next);
  BOOST_TEST(ec == version_cd::error::version_mismatch);  // not data_lost
  BOOST_TEST(ec.message().find("chronopool_v9") != std::string::npos, ec.message());
  ec = version_cd::detail::parse_claim(r.exec(version_cd::detail::claim_call(ks, "w", 60000, 1)), claimed);
  BOOST_TEST(ec == version_cd::error::version_mismatch);

  chronopool::scheduled_thread_pool pool(2);
  version_log log;
  auto o = version_dt::fast_options(ns, version_dt::test_redis_options());
  o.log_handler = log.handler();
  std::atomic<int> ran{0};
  version_cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const version_cd::fire_context&) { ++ran; });
  ec = version_dt::error_of([&](auto h) { s.async_schedule("late", "job", "", std::chrono::milliseconds(0), std::move(h)); });
  BOOST_TEST(ec == version_cd::error::version_mismatch);
  BOOST_TEST(ec.message().find("holds data of chronopool_v9") != std::string::npos, ec.message());
  s.start();
  // A process that only runs fires learns it too.
  BOOST_TEST(version_dt::wait_until([&] { return s.connection_error() == version_cd::error::version_mismatch; }));
  BOOST_TEST(log.has("version_mismatch: "));
  // Rolled back (the marker gone): it carries on by itself.
  r.exec({"DEL", ks.prefix() + "library"});
  BOOST_TEST(version_dt::wait_until([&] { return !s.connection_error(); }, std::chrono::seconds(15)));
  BOOST_TEST(!version_dt::error_of([&](auto h) { s.async_schedule("late", "job", "", std::chrono::milliseconds(0), std::move(h)); }));
  BOOST_TEST(version_dt::wait_until([&] { return ran.load() >= 1; }, std::chrono::seconds(15)));
  s.stop();
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_SUITE_END()

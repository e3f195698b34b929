// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: what Redis refuses is reported as such, at once, with Redis's
// text: a wrong or missing password as auth_failed, a full Redis
// (maxmemory, noeviction) as out_of_memory; at maxmemory the calls that
// free memory (ack, nack, extend, cancel, claim) keep working, a fire is
// dead-lettered there, and a new process still starts.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sync_redis.hpp"

#include <chronopool/durable/detail/function_calls.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::system::error_code;
using dt::error_of;
using dt::fast_options;
using dt::wait_until;
using dt::own_server_options;
using dt::own_server_redis_options;

namespace {

std::int64_t used_memory(dt::sync_redis& r) {
  const auto info = r.exec({"INFO", "memory"}).str;
  const auto at = info.find("used_memory:");
  BOOST_TEST_REQUIRE(at != std::string::npos);
  return std::stoll(info.substr(at + 12));
}

// Lowers maxmemory to a little above what is used, then writes until Redis
// refuses even a small write with OOM: the server is full, as in production.
// (A large write refused alone is not enough: its own query buffer counted,
// and once it is freed small commands fit again.)
void fill_to_maxmemory(dt::sync_redis& r) {
  const auto limit = used_memory(r) + 2 * 1024 * 1024;
  BOOST_TEST_REQUIRE(!r.exec({"CONFIG", "SET", "maxmemory", std::to_string(limit)}).is_error());
  int key = 0;
  for (const std::size_t size : {std::size_t{64 * 1024}, std::size_t{1024}, std::size_t{16}}) {
    const std::string block(size, 'f');
    for (int i = 0; i < 100000; ++i) {
      auto v = r.exec({"SET", "filler:" + std::to_string(key++), block});
      if (v.is_error()) {
        BOOST_TEST_REQUIRE(v.str.starts_with("OOM"), v.str);
        break;
      }
    }
  }
  // Memory moves a little (buffers freed after a refused command): full
  // means two small writes in a row are refused.
  for (int i = 0; i < 10000; ++i) {
    auto v = r.exec({"SET", "filler:" + std::to_string(key++), "x"});
    if (v.is_error() && r.exec({"SET", "filler:" + std::to_string(key++), "x"}).is_error()) {
      BOOST_TEST_REQUIRE(v.str.starts_with("OOM"), v.str);
      return;
    }
  }
  BOOST_FAIL("Redis never reached maxmemory");
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_redis_refusals, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(a_wrong_or_missing_password_is_auth_failed_at_once_with_redis_text) {
  auto so = own_server_options();
  so.requirepass = "right-secret-5e1f";
  dt::redis_server server(so);
  server.start();
  struct attempt {
    const char* password;
    const char* server_word;  // how Redis words its refusal
  };
  for (const attempt a : {attempt{"wrong-secret-c0ffee", "WRONGPASS"}, attempt{"", "NOAUTH"}}) {
    BOOST_TEST_CONTEXT("password '" << a.password << "'") {
      auto r = own_server_redis_options(server);
      r.password = a.password;
      r.request_timeout = 3s;
      cd::scheduler s(pool.get_executor(), fast_options(ns, r));
      s.start();
      const auto t0 = std::chrono::steady_clock::now();
      const auto ec = error_of([&](auto h) { s.async_cancel("x", std::move(h)); });
      const auto took = std::chrono::steady_clock::now() - t0;
      BOOST_TEST(ec == make_error_code(cd::error::auth_failed), ec.message());
      BOOST_TEST((took < 2s));  // not a request_timeout's wait for a link that never comes
      BOOST_TEST(ec.message().find(a.server_word) != std::string::npos, ec.message());
      BOOST_TEST(ec.message().find("secret") == std::string::npos, ec.message());
      const auto put = error_of([&](auto h) { s.async_schedule("y", "job", "", 1h, std::move(h)); });
      BOOST_TEST(put == make_error_code(cd::error::auth_failed), put.message());
      // Said without asking too, for a process that only runs fires.
      BOOST_TEST(s.connection_error() == make_error_code(cd::error::auth_failed), s.connection_error().message());
    }
  }
  // It keeps trying (at reconnect_max): once the operator fixes the server,
  // the scheduler comes up by itself.
  auto r = own_server_redis_options(server);
  cd::scheduler s(pool.get_executor(), fast_options(ns, r));
  BOOST_TEST_REQUIRE(wait_until([&] { return s.connection_error() == make_error_code(cd::error::auth_failed); }));
  dt::sync_redis admin([&] {
    auto a = r;
    a.password = "right-secret-5e1f";
    return a;
  }());
  BOOST_TEST_REQUIRE(!admin.exec({"CONFIG", "SET", "requirepass", ""}).is_error());
  BOOST_TEST(wait_until([&] { return !error_of([&](auto h) { s.async_cancel("x", std::move(h)); }); }));
  BOOST_TEST(!s.connection_error());
}

BOOST_AUTO_TEST_CASE(at_maxmemory_fires_are_acked_extended_released_and_cancelled_and_creation_is_out_of_memory) {
  dt::redis_server server(own_server_options());
  server.start();
  const auto ro = own_server_redis_options(server);
  dt::sync_redis r(ro);
  const cd::detail::key_space ks(ns);
  // Loaded before the server fills up, as by a fleet already running.
  BOOST_TEST_REQUIRE(!r.exec(cd::detail::load_functions_call()).is_error());
  auto once = [&](const char* id, std::int64_t in_ms) {
    cd::detail::put_request p;
    p.id = id;
    p.task = "job";
    p.at_ms = in_ms;
    BOOST_TEST_REQUIRE(!r.exec(cd::detail::put_call(ks, p)).is_error());
  };
  once("a", 0);
  once("b", 0);
  once("c", 3'600'000);
  once("d", 3'600'000);
  cd::detail::claim_result claimed;
  BOOST_TEST_REQUIRE(!cd::detail::parse_claim(r.exec(cd::detail::claim_call(ks, "w", 60000, 2)), claimed));
  BOOST_TEST_REQUIRE(claimed.fires.size() == 2u);
  {
    // Due, claimed at maxmemory, and dead-lettered there at its first failure.
    cd::detail::put_request p;
    p.id = "e";
    p.task = "job";
    p.failure.max_attempts = 1;
    BOOST_TEST_REQUIRE(!r.exec(cd::detail::put_call(ks, p)).is_error());
  }

  fill_to_maxmemory(r);

  std::int64_t n = 0;
  const auto& fa = claimed.fires[0];
  const auto& fb = claimed.fires[1];
  auto ec = cd::detail::parse_integer(r.exec(cd::detail::extend_call(ks, fa.id, fa.token, 60000)), n);
  BOOST_TEST(!ec, "extend: " << ec.message());
  bool acked = false;
  ec = cd::detail::parse_ack(r.exec(cd::detail::ack_call(ks, fa.id, fa.token)), acked, n);
  BOOST_TEST(!ec, "ack: " << ec.message());
  bool dead = true;
  // Jitter 0: the default policy's full first backoff, 1 s, so "b" is not claimed again below.
  ec = cd::detail::parse_nack(r.exec(cd::detail::nack_call(ks, fb.id, fb.token, 0, "failed at maxmemory")), dead, n);
  BOOST_TEST(!ec, "nack: " << ec.message());
  BOOST_TEST(!dead);
  ec = cd::detail::parse_integer(r.exec(cd::detail::cancel_call(ks, "d")), n);
  BOOST_TEST(!ec, "cancel: " << ec.message());
  cd::detail::claim_result later;
  ec = cd::detail::parse_claim(r.exec(cd::detail::claim_call(ks, "w", 60000, 4)), later);
  BOOST_TEST(!ec, "claim: " << ec.message());
  BOOST_TEST_REQUIRE(later.fires.size() == 1u);

  // A dead letter adds memory, yet is made at maxmemory: refusing it would
  // keep the fire claimed and failing for ever. Re-driving needs memory
  // (refused, the letter stays); deleting frees it.
  const auto& fe = later.fires[0];
  ec = cd::detail::parse_nack(r.exec(cd::detail::nack_call(ks, fe.id, fe.token, 0, "failed for good")), dead, n);
  BOOST_TEST(!ec, "nack to a dead letter: " << ec.message());
  BOOST_TEST(dead);
  std::vector<cd::dead_letter> letters;
  BOOST_TEST_REQUIRE(!cd::detail::parse_dead_list(r.exec(cd::detail::dead_list_call(ks, 10)), letters));
  BOOST_TEST_REQUIRE(letters.size() == 1u);
  BOOST_TEST(letters[0].last_error == "failed for good");
  std::string redriven;
  ec = cd::detail::parse_text(r.exec(cd::detail::dead_redrive_call(ks, letters[0].fire_id)), redriven);
  BOOST_TEST(ec == make_error_code(cd::error::out_of_memory), ec.message());
  ec = cd::detail::parse_integer(r.exec(cd::detail::dead_delete_call(ks, letters[0].fire_id)), n);
  BOOST_TEST(!ec, "delete a dead letter: " << ec.message());
  BOOST_TEST(n == 1);

  // Creating needs memory: refused, and said so with Redis's words.
  cd::detail::put_request p;
  p.id = "new";
  p.task = "job";
  ec = cd::detail::parse_put(r.exec(cd::detail::put_call(ks, p)), n);
  BOOST_TEST(ec == make_error_code(cd::error::out_of_memory), ec.message());
  BOOST_TEST(ec.message().find("maxmemory") != std::string::npos, ec.message());

  // A process started now finds the library loaded and works.
  auto o = fast_options(ns, ro);
  o.redis.request_timeout = 3s;
  cd::scheduler s(pool.get_executor(), o);
  const auto t0 = std::chrono::steady_clock::now();
  BOOST_TEST(s.async_cancel("c", boost::asio::use_future).get());
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 2s));
  const auto put = error_of([&](auto h) { s.async_schedule("late", "job", "", 1h, std::move(h)); });
  BOOST_TEST(put == make_error_code(cd::error::out_of_memory), put.message());
  BOOST_TEST(put.message().find("maxmemory") != std::string::npos, put.message());
}

BOOST_AUTO_TEST_CASE(a_process_that_cannot_load_the_library_at_maxmemory_says_out_of_memory_at_once) {
  dt::redis_server server(own_server_options());
  server.start();
  const auto ro = own_server_redis_options(server);
  dt::sync_redis r(ro);
  fill_to_maxmemory(r);  // and the library was never loaded
  auto o = fast_options(ns, ro);
  o.redis.request_timeout = 3s;
  cd::scheduler s(pool.get_executor(), o);
  const auto t0 = std::chrono::steady_clock::now();
  const auto ec = error_of([&](auto h) { s.async_cancel("x", std::move(h)); });
  BOOST_TEST(ec == make_error_code(cd::error::out_of_memory), ec.message());
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 2s));
  // Memory freed: the library loads on a later attempt, and work resumes.
  BOOST_TEST_REQUIRE(!r.exec({"FLUSHALL"}).is_error());
  BOOST_TEST(wait_until([&] {
    return !error_of([&](auto h) { s.async_cancel("x", std::move(h)); });
  }));
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The claim and ack fast path of the function library (library.lua, "The
// fast path"): a schedule's first field mg says whether management state
// (pause, extra fires, a history length of its own) may exist; with mg '0'
// claims and acks skip those fields, and a schedule without mg (created by
// an earlier revision) still has them honoured.
#include <boost/test/unit_test.hpp>

#include <chronopool/durable/detail/function_calls.hpp>

#include "sync_redis.hpp"
#include "test_redis.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fast_path_cd = chronopool::durable;

struct fast_path_fixture {
  fast_path_cd::test::sync_redis redis{fast_path_cd::test::test_redis_options()};
  fast_path_cd::detail::key_space ks{"fast-" + std::to_string(std::random_device{}())};

  fast_path_fixture() {
    auto v = redis.exec(fast_path_cd::detail::load_functions_call());
    BOOST_TEST_REQUIRE(!v.is_error(), v.str);
  }

  std::string key(const std::string& id) const { return ks.prefix() + "s:" + id; }

  // A fixed-rate schedule due 1 s ago, period one hour.
  void put_rate(const std::string& id, std::uint32_t history = 10) {
    auto now = redis.exec({"FCALL", "cp_time_v5", "1", ks.due_key()}).integer;
    fast_path_cd::detail::put_request r;
    r.id = id;
    r.task = "tick";
    r.kind = fast_path_cd::detail::schedule_kind::fixed_rate;
    r.absolute = true;
    r.at_ms = now - 1000;
    r.period_ms = 3'600'000;
    r.options.history_length = history;
    auto v = redis.exec(fast_path_cd::detail::put_call(ks, r));
    BOOST_TEST_REQUIRE(!v.is_error(), v.str);
  }

  fast_path_cd::detail::claimed_fire claim_one() {
    fast_path_cd::detail::claim_result r;
    auto ec = fast_path_cd::detail::parse_claim(
        redis.exec(fast_path_cd::detail::claim_call(ks, "w1", 30000, 1)), r);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    BOOST_TEST_REQUIRE(r.fires.size() == 1u);
    return r.fires[0];
  }

  std::int64_t ack(const fast_path_cd::detail::claimed_fire& f) {
    bool acked = false;
    std::int64_t next = 0;
    auto ec = fast_path_cd::detail::parse_ack(redis.exec(fast_path_cd::detail::ack_call(ks, f.id, f.token)),
                                              acked, next);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    BOOST_TEST_REQUIRE(acked);
    return next;
  }

  std::string hget(const std::string& id, const std::string& field) {
    auto v = redis.exec({"HGET", key(id), field});
    return v.is_nil() ? std::string("(nil)") : v.str;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fast_path, fast_path_fixture)

BOOST_AUTO_TEST_CASE(a_plain_schedule_is_created_with_mg_first_and_its_fires_write_no_lease_x) {
  put_rate("plain");
  auto all = redis.exec({"HGETALL", key("plain")});
  BOOST_TEST_REQUIRE(all.elements.size() >= 2u);
  BOOST_TEST(all.elements[0].str == "mg");  // first: found at once by every claim and ack
  BOOST_TEST(all.elements[1].str == "0");
  auto f = claim_one();
  BOOST_TEST(hget("plain", "lease_x") == "(nil)");
  ack(f);
  BOOST_TEST(hget("plain", "lease_x") == "(nil)");
  BOOST_TEST(hget("plain", "fires") == "1");
  BOOST_TEST(redis.exec({"LLEN", ks.prefix() + "h:plain"}).integer == 1);
}

BOOST_AUTO_TEST_CASE(pause_trigger_and_an_own_history_length_set_mg) {
  put_rate("paused");
  redis.exec(fast_path_cd::detail::pause_call(ks, "paused"));
  BOOST_TEST(hget("paused", "mg") == "1");
  put_rate("triggered");
  redis.exec(fast_path_cd::detail::trigger_call(ks, "triggered"));
  BOOST_TEST(hget("triggered", "mg") == "1");
  put_rate("short", 3);
  BOOST_TEST(hget("short", "mg") == "1");
}

BOOST_AUTO_TEST_CASE(a_schedule_without_mg_has_its_pause_and_history_length_honoured_by_the_ack) {
  // As an earlier revision left it: no mg, a history length of its own, and
  // paused while its fire ran.
  put_rate("old", 3);
  redis.exec({"HDEL", key("old"), "mg"});
  auto f = claim_one();
  redis.exec({"HSET", key("old"), "paused", "1"});
  ack(f);
  BOOST_TEST(redis.exec({"ZSCORE", ks.due_key(), "old"}).is_nil());  // stays out while paused
  for (int i = 0; i < 7; ++i) redis.exec({"LPUSH", ks.prefix() + "h:old", "x"});
  redis.exec({"HDEL", key("old"), "paused"});
  redis.exec({"ZADD", ks.due_key(), "0", "old"});
  redis.exec({"HSET", key("old"), "due", "0"});
  ack(claim_one());
  BOOST_TEST(redis.exec({"LLEN", ks.prefix() + "h:old"}).integer == 3);  // cut back to its own length
}

BOOST_AUTO_TEST_CASE(an_extra_fire_of_a_schedule_without_mg_runs_and_keeps_the_position) {
  put_rate("oldx");
  const auto due = hget("oldx", "due");
  redis.exec({"HDEL", key("oldx"), "mg"});
  redis.exec(fast_path_cd::detail::trigger_call(ks, "oldx"));  // sets mg; the earlier revision's did not
  redis.exec({"HDEL", key("oldx"), "mg"});
  auto first = claim_one();  // the periodic occurrence (earlier by nominal time)
  BOOST_TEST(first.due_ms == std::stoll(due));
  ack(first);
  auto extra = claim_one();  // then the extra fire, marked as one
  BOOST_TEST(hget("oldx", "lease_x") == "1");
  const auto pending = ack(extra);
  BOOST_TEST(pending == std::stoll(due) + 3'600'000);  // the position is kept
  BOOST_TEST(hget("oldx", "xnext") == "(nil)");
}

BOOST_AUTO_TEST_SUITE_END()

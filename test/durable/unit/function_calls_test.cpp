// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Wire shapes of the function calls, without a server: argument vectors,
// reply parsing, error mapping.
#include <boost/test/unit_test.hpp>

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/error.hpp>

#include "print_error.hpp"

namespace cd = chronopool::durable;
using cd::detail::redis_value;

namespace {

redis_value integer(std::int64_t i) {
  redis_value v;
  v.type = redis_value::kind::integer;
  v.integer = i;
  return v;
}

redis_value text(std::string s) {
  redis_value v;
  v.type = redis_value::kind::string;
  v.str = std::move(s);
  return v;
}

redis_value array(std::vector<redis_value> e) {
  redis_value v;
  v.type = redis_value::kind::array;
  v.elements = std::move(e);
  return v;
}

redis_value error_reply(std::string s) {
  redis_value v;
  v.type = redis_value::kind::error;
  v.str = std::move(s);
  return v;
}

redis_value fire(std::int64_t token) {
  return array({text("id"), integer(1000), integer(token), integer(1), text("task"), text("pay"),
                integer(31000)});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(function_calls)

BOOST_AUTO_TEST_CASE(keys_share_one_hash_tag_per_namespace) {
  cd::detail::key_space ks("orders");
  BOOST_TEST(ks.prefix() == "cp:{orders}:");
  BOOST_TEST(ks.due_key() == "cp:{orders}:due");
  BOOST_TEST(ks.wake_channel() == "cp:{orders}:wake");
  auto call = cd::detail::claim_call(ks, "me", 30000, 8);
  BOOST_TEST(call == (std::vector<std::string>{"FCALL", "cp_claim_v5", "1", "cp:{orders}:due", "me", "30000", "8"}));
}

BOOST_AUTO_TEST_CASE(put_sends_kind_mode_and_clamped_times) {
  cd::detail::key_space ks("n");
  cd::detail::put_request r;
  r.id = "a";
  r.task = "t";
  r.kind = cd::detail::schedule_kind::fixed_delay;
  r.at_ms = cd::detail::max_time_ms + 5;
  r.period_ms = 250;
  r.options.misfire = cd::misfire_policy::catch_up;
  r.options.catch_up_max = 4;
  r.options.replace = true;
  auto call = cd::detail::put_call(ks, r);
  BOOST_TEST(call == (std::vector<std::string>{"FCALL", "cp_put_v5", "1", "cp:{n}:due", "a", "t", "", "delay",
                                               "in", std::to_string(cd::detail::max_time_ms), "250",
                                               "catch_up", "4", "1", "10", "", "", "", "", "", "", ""}));
}

BOOST_AUTO_TEST_CASE(put_sends_a_cron_schedules_expression_zone_and_next_instant) {
  cd::detail::key_space ks("n");
  cd::detail::put_request r;
  r.id = "c";
  r.task = "t";
  r.kind = cd::detail::schedule_kind::cron;
  r.absolute = true;
  r.at_ms = 1000;
  r.cron = "30 2 * * *";
  r.time_zone = "America/New_York";
  r.cron_next_ms = 2000;
  const auto call = cd::detail::put_call(ks, r);
  BOOST_TEST_REQUIRE(call.size() == 22u);  // FCALL, name, 1, key and the 18 arguments
  BOOST_TEST((std::vector<std::string>(call.begin() + 7, call.begin() + 11) ==
              std::vector<std::string>{"cron", "abs", "1000", "0"}));
  BOOST_TEST((std::vector<std::string>(call.begin() + 19, call.end()) ==
              std::vector<std::string>{"30 2 * * *", "America/New_York", "2000"}));
  // Many: 18 arguments each, in order.
  const std::vector<cd::detail::put_request> rs{r, r};
  const auto many = cd::detail::put_many_call(ks, rs, 0, 2);
  BOOST_TEST(many.size() == 4u + 36u);
  BOOST_TEST(many[1] == "cp_put_many_v5");
}

BOOST_AUTO_TEST_CASE(an_ack_carries_a_cron_plan_after_the_epoch) {
  cd::detail::key_space ks("n");
  const cd::detail::cron_plan plan{10, 20, 30, 40};
  BOOST_TEST((cd::detail::ack_call(ks, "c", 7, "", &plan) ==
              std::vector<std::string>{"FCALL", "cp_ack_v5", "1", "cp:{n}:due", "c", "7", "", "10", "20", "30", "40"}));
  BOOST_TEST((cd::detail::ack_call(ks, "c", 7) ==
              std::vector<std::string>{"FCALL", "cp_ack_v5", "1", "cp:{n}:due", "c", "7"}));
}

BOOST_AUTO_TEST_CASE(put_sends_a_failure_policy_only_when_it_is_not_the_default) {
  cd::detail::key_space ks("n");
  cd::detail::put_request r;
  r.id = "a";
  r.task = "t";
  // The default, the library's own: sent empty.
  const auto plain = cd::detail::put_call(ks, r);
  BOOST_TEST_REQUIRE(plain.size() == 22u);
  BOOST_TEST((std::vector<std::string>(plain.begin() + 15, plain.begin() + 19) == std::vector<std::string>(4)));
  r.failure.multiplier = 1.5;
  r.failure.max_attempts = 3;
  const auto call = cd::detail::put_call(ks, r);
  BOOST_TEST_REQUIRE(call.size() == 22u);
  BOOST_TEST((std::vector<std::string>(call.begin() + 15, call.begin() + 19) ==
              std::vector<std::string>{"3", "1000", "1.5", "60000"}));
}

BOOST_AUTO_TEST_CASE(a_claim_reply_is_parsed_into_fires) {
  cd::detail::claim_result r;
  BOOST_TEST(!cd::detail::parse_claim(array({integer(500), integer(900), text("42/w"), fire(7), fire(8)}), r));
  BOOST_TEST(r.server_now_ms == 500);
  BOOST_TEST(r.next_event_ms == 900);
  BOOST_TEST(r.epoch == "42/w");
  BOOST_TEST_REQUIRE(r.fires.size() == 2u);
  BOOST_TEST(r.fires[1].epoch == "42/w");
  BOOST_TEST(r.fires[0].token == 7u);
  BOOST_TEST(r.fires[1].token == 8u);
  BOOST_TEST(r.fires[0].lease_expiry_ms == 31000);
  BOOST_TEST(r.fires[0].payload == "pay");
}

BOOST_AUTO_TEST_CASE(malformed_replies_are_protocol_errors) {
  cd::detail::claim_result r;
  BOOST_TEST(cd::detail::parse_claim(integer(1), r) == cd::error::protocol_error);
  BOOST_TEST(cd::detail::parse_claim(array({integer(1)}), r) == cd::error::protocol_error);
  BOOST_TEST(cd::detail::parse_claim(array({integer(1), integer(2)}), r) == cd::error::protocol_error);
  BOOST_TEST(cd::detail::parse_claim(array({integer(1), integer(2), text("")}), r) == cd::error::protocol_error);
  BOOST_TEST(cd::detail::parse_claim(array({integer(1), integer(2), text("e"), integer(3)}), r) ==
             cd::error::protocol_error);
  BOOST_TEST(cd::detail::parse_claim(array({integer(1), integer(2), text("e"), fire(0)}), r) ==
             cd::error::protocol_error);
  bool acked = false;
  std::int64_t next = 0;
  BOOST_TEST(cd::detail::parse_ack(text("OK"), acked, next) == cd::error::protocol_error);
  std::int64_t n = 0;
  BOOST_TEST(cd::detail::parse_integer(text("12x"), n) == cd::error::protocol_error);
  BOOST_TEST(!cd::detail::parse_integer(text("12"), n));
  BOOST_TEST(n == 12);
}

BOOST_AUTO_TEST_CASE(error_replies_map_to_durable_errors) {
  BOOST_TEST(cd::detail::error_of(error_reply("STALE the lease of x")) == cd::error::stale_lease);
  BOOST_TEST(cd::detail::error_of(error_reply("EXISTS schedule x exists")) == cd::error::schedule_exists);
  BOOST_TEST(cd::detail::error_of(error_reply("DATA_LOST the namespace lost its data since epoch 1/w")) ==
             cd::error::data_lost);
  BOOST_TEST(cd::detail::error_of(error_reply("ERR Function not found")) == cd::error::server_error);
  BOOST_TEST(!cd::detail::error_of(text("STALE")));
  bool acked = false;
  std::int64_t next = 0;
  BOOST_TEST(cd::detail::parse_ack(error_reply("STALE x"), acked, next) == cd::error::stale_lease);
}

BOOST_AUTO_TEST_CASE(the_function_library_is_loaded_by_name_and_version) {
  auto call = cd::detail::load_functions_call();
  BOOST_TEST_REQUIRE(call.size() == 4u);
  BOOST_TEST(call[0] == "FUNCTION");
  BOOST_TEST(call[2] == "REPLACE");
  BOOST_TEST(call[3].rfind("#!lua name=chronopool_v5\n", 0) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

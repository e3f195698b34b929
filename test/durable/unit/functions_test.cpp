// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chronopool_v5 Redis function library, called directly on a real Redis:
// claim / ack / nack / extend / cancel semantics, fencing tokens, misfire
// policies and the wake channel.
#include <boost/test/unit_test.hpp>

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/error.hpp>

#include "print_error.hpp"

#include "sync_redis.hpp"
#include "test_redis.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
using cd::detail::claim_result;
using cd::detail::key_space;
using cd::detail::put_request;
using cd::detail::redis_value;
using cd::detail::schedule_kind;
using cd::test::sync_redis;

namespace {

std::string unique_namespace() {
  static std::mt19937_64 rng{std::random_device{}()};
  return "fn-" + std::to_string(rng());
}

struct library_fixture {
  sync_redis redis{cd::test::test_redis_options()};
  key_space ks{unique_namespace()};

  library_fixture() {
    auto v = redis.exec(cd::detail::load_functions_call());
    BOOST_TEST_REQUIRE(!v.is_error(), v.str);
  }

  std::int64_t server_now() {
    auto v = redis.exec({"FCALL", "cp_time_v5", "1", ks.due_key()});
    BOOST_TEST_REQUIRE(v.is_integer());
    return v.integer;
  }

  redis_value put(put_request r) { return redis.exec(cd::detail::put_call(ks, r)); }

  std::int64_t put_ok(put_request r) {
    std::int64_t due = 0;
    auto ec = cd::detail::parse_put(put(std::move(r)), due);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    return due;
  }

  claim_result claim(std::size_t n = 16, std::int64_t lease_ms = 30000, std::string owner = "w1") {
    claim_result r;
    auto ec = cd::detail::parse_claim(redis.exec(cd::detail::claim_call(ks, owner, lease_ms, n)), r);
    BOOST_TEST_REQUIRE(!ec, ec.message());
    return r;
  }

  boost::system::error_code ack(const std::string& id, std::uint64_t token, bool* acked = nullptr,
                                std::int64_t* next = nullptr) {
    bool a = false;
    std::int64_t nx = 0;
    auto ec = cd::detail::parse_ack(redis.exec(cd::detail::ack_call(ks, id, token)), a, nx);
    if (acked) *acked = a;
    if (next) *next = nx;
    return ec;
  }

  std::string field(const std::string& id, const std::string& name) {
    auto v = redis.exec(cd::detail::get_call(ks, id));
    for (std::size_t i = 0; i + 1 < v.elements.size(); i += 2)
      if (v.elements[i].str == name) return v.elements[i + 1].str;
    return {};
  }

  bool exists(const std::string& id) {
    return !redis.exec(cd::detail::get_call(ks, id)).elements.empty();
  }
};

put_request once_in(std::string id, std::int64_t delay_ms, std::string payload = "p") {
  put_request r;
  r.id = std::move(id);
  r.task = "job";
  r.payload = std::move(payload);
  r.kind = schedule_kind::once;
  r.at_ms = delay_ms;
  return r;
}

put_request rate_at(std::string id, std::int64_t at_ms, std::int64_t period_ms) {
  put_request r;
  r.id = std::move(id);
  r.task = "tick";
  r.kind = schedule_kind::fixed_rate;
  r.absolute = true;
  r.at_ms = at_ms;
  r.period_ms = period_ms;
  return r;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(function_library, library_fixture)

BOOST_AUTO_TEST_CASE(a_schedule_is_created_once_and_replaced_only_when_asked) {
  const auto due = put_ok(once_in("a", 60000));
  BOOST_TEST(due >= server_now() + 59000);
  BOOST_TEST(field("a", "task") == "job");
  BOOST_TEST(field("a", "kind") == "once");
  BOOST_TEST(cd::detail::error_of(put(once_in("a", 1))) == cd::error::schedule_exists);
  auto r = once_in("a", 1, "new");
  r.options.replace = true;
  put_ok(r);
  BOOST_TEST(field("a", "payload") == "new");
}

BOOST_AUTO_TEST_CASE(nothing_is_claimed_before_its_due_time_and_next_event_says_when) {
  const auto due = put_ok(once_in("later", 60000));
  auto r = claim();
  BOOST_TEST(r.fires.empty());
  BOOST_TEST(r.next_event_ms == due);
  BOOST_TEST(r.server_now_ms < due);
}

BOOST_AUTO_TEST_CASE(an_empty_namespace_reports_no_next_event) {
  auto r = claim();
  BOOST_TEST(r.fires.empty());
  BOOST_TEST(r.next_event_ms == -1);
}

BOOST_AUTO_TEST_CASE(a_due_one_shot_is_claimed_once_acked_once_and_deleted) {
  const std::string payload("bin\0ary\r\n", 9);
  const auto due = put_ok(once_in("one", 0, payload));
  auto r = claim();
  BOOST_TEST_REQUIRE(r.fires.size() == 1u);
  const auto& f = r.fires[0];
  BOOST_TEST(f.id == "one");
  BOOST_TEST(f.due_ms == due);
  BOOST_TEST(f.payload == payload);
  BOOST_TEST(f.task == "job");
  BOOST_TEST(f.attempt == 1u);
  BOOST_TEST(f.token > 0u);
  BOOST_TEST(f.lease_expiry_ms == r.server_now_ms + 30000);
  BOOST_TEST(claim().fires.empty());  // leased: nobody else gets it

  bool acked = false;
  std::int64_t next = 0;
  BOOST_TEST(!ack("one", f.token, &acked, &next));
  BOOST_TEST(acked);
  BOOST_TEST(next == -1);
  BOOST_TEST(!exists("one"));
  // A repeated ack (first reply lost) is harmless.
  BOOST_TEST(!ack("one", f.token, &acked));
  BOOST_TEST(!acked);
}

BOOST_AUTO_TEST_CASE(fixed_rate_schedules_the_next_occurrence_from_the_due_time_at_ack) {
  const auto now = server_now();
  put_ok(rate_at("r", now - 10, 1000));
  auto r = claim();
  BOOST_TEST_REQUIRE(r.fires.size() == 1u);
  BOOST_TEST(r.fires[0].due_ms == now - 10);
  std::int64_t next = 0;
  BOOST_TEST(!ack("r", r.fires[0].token, nullptr, &next));
  BOOST_TEST(next == now - 10 + 1000);
  BOOST_TEST(field("r", "due") == std::to_string(next));
  BOOST_TEST(field("r", "fires") == "1");
  auto again = claim();
  BOOST_TEST(again.fires.empty());
  BOOST_TEST(again.next_event_ms == next);
}

BOOST_AUTO_TEST_CASE(fixed_delay_schedules_the_next_occurrence_from_the_ack_time) {
  put_request r = once_in("d", 0);
  r.kind = schedule_kind::fixed_delay;
  r.period_ms = 5000;
  put_ok(r);
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  sleep_ms(30);
  const auto before = server_now();
  std::int64_t next = 0;
  BOOST_TEST(!ack("d", c.fires[0].token, nullptr, &next));
  BOOST_TEST(next >= before + 5000);
  BOOST_TEST(next <= server_now() + 5000);
}

BOOST_AUTO_TEST_CASE(an_expired_lease_is_claimed_again_with_a_larger_token_and_the_old_ack_is_stale) {
  put_ok(once_in("x", 0));
  auto first = claim(16, 50, "zombie");
  BOOST_TEST_REQUIRE(first.fires.size() == 1u);
  sleep_ms(120);
  auto second = claim(16, 30000, "w2");
  BOOST_TEST_REQUIRE(second.fires.size() == 1u);
  const auto& a = first.fires[0];
  const auto& b = second.fires[0];
  BOOST_TEST(b.due_ms == a.due_ms);  // same occurrence, same fire id
  BOOST_TEST(b.attempt == 2u);
  BOOST_TEST(b.token > a.token);
  BOOST_TEST(field("x", "lease_owner") == "w2");
  BOOST_TEST(ack("x", a.token) == cd::error::stale_lease);
  BOOST_TEST(!ack("x", b.token));
}

BOOST_AUTO_TEST_CASE(an_expired_lease_of_a_periodic_fire_runs_that_fire_again_whatever_the_misfire_policy) {
  // The holder of the lease dies; by the time the lease runs out several
  // periods have passed. The claimed occurrence must still run (at least
  // once), not be folded into a later one by the misfire policy.
  const auto now = server_now();
  auto skip = rate_at("k1", now - 10, 50);
  skip.options.misfire = cd::misfire_policy::skip;
  put_ok(skip);
  put_ok(rate_at("k2", now - 10, 50));  // fire_once_now
  auto first = claim(16, 50, "zombie");
  BOOST_TEST_REQUIRE(first.fires.size() == 2u);
  sleep_ms(300);  // the lease and six periods
  auto second = claim(16, 30000, "w2");
  BOOST_TEST_REQUIRE(second.fires.size() == 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& b = second.fires[i];
    const auto& a = first.fires[0].id == b.id ? first.fires[0] : first.fires[1];
    BOOST_TEST(b.due_ms == a.due_ms);
    BOOST_TEST(b.attempt == 2u);
    BOOST_TEST(b.token > a.token);
  }
}

BOOST_AUTO_TEST_CASE(extend_keeps_the_lease_and_a_superseded_token_cannot_extend) {
  // Lease 400 ms, extended every 100 ms for 400 ms: still ours at the end,
  // with 4x slack for a loaded machine.
  put_ok(once_in("e", 0));
  auto first = claim(16, 400);
  BOOST_TEST_REQUIRE(first.fires.size() == 1u);
  const auto token = first.fires[0].token;
  for (int i = 0; i < 4; ++i) {
    sleep_ms(100);
    std::int64_t expiry = 0;
    BOOST_TEST(!cd::detail::parse_integer(redis.exec(cd::detail::extend_call(ks, "e", token, 400)), expiry));
    BOOST_TEST(expiry > server_now());
  }
  BOOST_TEST(claim().fires.empty());  // 400 ms later, still ours
  sleep_ms(500);
  auto stolen = claim();
  BOOST_TEST_REQUIRE(stolen.fires.size() == 1u);
  std::int64_t expiry = 0;
  BOOST_TEST(cd::detail::parse_integer(redis.exec(cd::detail::extend_call(ks, "e", token, 400)), expiry) ==
             cd::error::stale_lease);
}

BOOST_AUTO_TEST_CASE(nack_gives_the_same_occurrence_back_after_the_retry_delay) {
  const auto due = put_ok(once_in("n", 0));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  std::int64_t at = 0;
  bool dead = true;
  // Jitter 0: the full backoff of the default policy, 1 s before the second attempt.
  BOOST_TEST(!cd::detail::parse_nack(redis.exec(cd::detail::nack_call(ks, "n", c.fires[0].token, 0, "boom")), dead, at));
  BOOST_TEST(!dead);
  auto early = claim();  // well within the 1 s retry delay, even on a loaded machine
  BOOST_TEST(early.fires.empty());
  BOOST_TEST(early.next_event_ms == at);
  sleep_ms(1100);
  auto again = claim();
  BOOST_TEST_REQUIRE(again.fires.size() == 1u);
  BOOST_TEST(again.fires[0].due_ms == due);
  BOOST_TEST(again.fires[0].attempt == 2u);
  // The released token can neither ack nor nack any more.
  BOOST_TEST(ack("n", c.fires[0].token) == cd::error::stale_lease);
}

BOOST_AUTO_TEST_CASE(the_library_default_policy_is_failure_policy_s_and_jitter_halves_the_wait_at_most) {
  // Schedules with the default policy store none (put_call leaves it out):
  // the library's defaults must be failure_policy{}'s. Attempts are set by
  // hand so the test need not wait out real backoffs.
  const cd::failure_policy d{};
  put_ok(once_in("d4", 0));
  put_ok(once_in("d5", 0));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 2u);
  std::map<std::string, std::uint64_t> token;
  for (auto& f : c.fires) token[f.id] = f.token;
  redis.exec({"HSET", ks.prefix() + "s:d4", "lease_attempt", std::to_string(d.max_attempts - 1)});
  redis.exec({"HSET", ks.prefix() + "s:d5", "lease_attempt", std::to_string(d.max_attempts)});
  bool dead = true;
  std::int64_t at = 0;
  const auto now = server_now();
  BOOST_TEST_REQUIRE(!cd::detail::parse_nack(redis.exec(cd::detail::nack_call(ks, "d4", token["d4"], 0, "e4")), dead, at));
  BOOST_TEST(!dead);
  // Jitter 0: the full wait, initial * multiplier^(attempts - 2), capped at max_backoff.
  const auto full = std::min<std::int64_t>(
      d.max_backoff.count(),
      static_cast<std::int64_t>(static_cast<double>(d.initial_backoff.count()) * std::pow(d.multiplier, d.max_attempts - 2)));
  BOOST_TEST(at - now >= full - 50);
  BOOST_TEST(at - now <= full + 50);
  BOOST_TEST_REQUIRE(!cd::detail::parse_nack(redis.exec(cd::detail::nack_call(ks, "d5", token["d5"], 0, "e5")), dead, at));
  BOOST_TEST(dead);  // the attempt numbered max_attempts
  BOOST_TEST(at == -1);  // a one-shot ends
  std::vector<cd::dead_letter> letters;
  BOOST_TEST_REQUIRE(!cd::detail::parse_dead_list(redis.exec(cd::detail::dead_list_call(ks, 10)), letters));
  BOOST_TEST_REQUIRE(letters.size() == 1u);
  BOOST_TEST(letters[0].fire_id == "d5@" + std::to_string(c.fires[0].id == "d5" ? c.fires[0].due_ms : c.fires[1].due_ms));
  BOOST_TEST(letters[0].attempts == d.max_attempts);
  BOOST_TEST(letters[0].last_error == "e5");
  BOOST_TEST(!exists("d5"));

  // Full jitter (1000000): half the wait.
  auto r = once_in("j", 0);
  r.failure.initial_backoff = std::chrono::milliseconds(1000);
  r.failure.multiplier = 1;
  put_ok(r);
  auto cj = claim();
  BOOST_TEST_REQUIRE(cj.fires.size() == 1u);
  const auto now_j = server_now();
  BOOST_TEST_REQUIRE(!cd::detail::parse_nack(redis.exec(cd::detail::nack_call(ks, "j", cj.fires[0].token, 1000000, "x")), dead, at));
  BOOST_TEST(at - now_j >= 450);
  BOOST_TEST(at - now_j <= 550);
}

BOOST_AUTO_TEST_CASE(a_lease_that_runs_out_on_the_last_attempt_dead_letters_and_the_schedule_moves_on) {
  // A handler that kills its process every time never nacks: the claim
  // that finds its last attempt's lease run out makes the dead letter.
  const auto now = server_now();
  auto r = rate_at("crash", now, 60000);
  r.failure.max_attempts = 1;
  put_ok(r);
  auto c = claim(16, 1);  // a 1 ms lease, never extended
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  sleep_ms(20);
  auto again = claim();
  BOOST_TEST(again.fires.empty());
  std::vector<cd::dead_letter> letters;
  BOOST_TEST_REQUIRE(!cd::detail::parse_dead_list(redis.exec(cd::detail::dead_list_call(ks, 10)), letters));
  BOOST_TEST_REQUIRE(letters.size() == 1u);
  BOOST_TEST(letters[0].fire_id == "crash@" + std::to_string(c.fires[0].due_ms));
  BOOST_TEST(letters[0].attempts == 1u);
  BOOST_TEST(letters[0].last_error.find("the lease of attempt 1 ran out") != std::string::npos);
  BOOST_TEST(field("crash", "due") == std::to_string(c.fires[0].due_ms + 60000));  // the next occurrence
  BOOST_TEST(again.next_event_ms == c.fires[0].due_ms + 60000);
}

BOOST_AUTO_TEST_CASE(cancel_removes_pending_and_running_schedules) {
  put_ok(once_in("c1", 60000));
  put_ok(once_in("c2", 0));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  std::int64_t existed = 0;
  BOOST_TEST(!cd::detail::parse_integer(redis.exec(cd::detail::cancel_call(ks, "c1")), existed));
  BOOST_TEST(existed == 1);
  BOOST_TEST(!cd::detail::parse_integer(redis.exec(cd::detail::cancel_call(ks, "c1")), existed));
  BOOST_TEST(existed == 0);
  BOOST_TEST(!cd::detail::parse_integer(redis.exec(cd::detail::cancel_call(ks, "c2")), existed));
  BOOST_TEST(existed == 1);
  // The running fire's ack changes nothing and does not resurrect it.
  bool acked = true;
  BOOST_TEST(!ack("c2", c.fires[0].token, &acked));
  BOOST_TEST(!acked);
  BOOST_TEST(!exists("c2"));
  BOOST_TEST(claim().next_event_ms == -1);
}

BOOST_AUTO_TEST_CASE(claims_take_due_fires_in_due_order_up_to_the_batch_size) {
  const auto now = server_now();
  for (int i = 0; i < 5; ++i) {
    put_request r = once_in("b" + std::to_string(i), 0);
    r.absolute = true;
    r.at_ms = now - 100 + (4 - i) * 10;  // b4 is the earliest
    put_ok(r);
  }
  auto first = claim(2);
  BOOST_TEST_REQUIRE(first.fires.size() == 2u);
  BOOST_TEST(first.fires[0].id == "b4");
  BOOST_TEST(first.fires[1].id == "b3");
  BOOST_TEST(first.next_event_ms <= first.server_now_ms);  // more is due
  auto rest = claim(10);
  BOOST_TEST(rest.fires.size() == 3u);
  BOOST_TEST(rest.fires[0].token > first.fires[1].token);
}

BOOST_AUTO_TEST_CASE(misfire_fire_once_now_fires_the_latest_missed_occurrence_only) {
  const auto now = server_now();
  const auto start = now - 10500;  // ten whole periods missed
  put_ok(rate_at("m", start, 1000));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  const auto latest = start + (c.server_now_ms - start) / 1000 * 1000;
  BOOST_TEST(c.fires[0].due_ms == latest);
  std::int64_t next = 0;
  BOOST_TEST(!ack("m", c.fires[0].token, nullptr, &next));
  BOOST_TEST(next == latest + 1000);
  BOOST_TEST(next > server_now());
}

BOOST_AUTO_TEST_CASE(misfire_skip_fires_nothing_and_resumes_on_the_grid) {
  const auto now = server_now();
  const auto start = now - 10500;
  auto r = rate_at("s", start, 1000);
  r.options.misfire = cd::misfire_policy::skip;
  put_ok(r);
  auto c = claim();
  BOOST_TEST(c.fires.empty());
  const auto latest = start + (c.server_now_ms - start) / 1000 * 1000;
  BOOST_TEST(field("s", "due") == std::to_string(latest + 1000));
  BOOST_TEST(c.next_event_ms == latest + 1000);
}

BOOST_AUTO_TEST_CASE(misfire_catch_up_fires_the_last_n_missed_occurrences_in_order) {
  const auto now = server_now();
  const auto start = now - 10500;
  auto r = rate_at("u", start, 1000);
  r.options.misfire = cd::misfire_policy::catch_up;
  r.options.catch_up_max = 3;
  put_ok(r);
  std::vector<std::int64_t> dues;
  for (int i = 0; i < 5; ++i) {
    auto c = claim();
    if (c.fires.empty()) break;
    dues.push_back(c.fires[0].due_ms);
    BOOST_TEST(!ack("u", c.fires[0].token));
  }
  BOOST_TEST_REQUIRE(dues.size() == 3u);
  BOOST_TEST(dues[1] == dues[0] + 1000);
  BOOST_TEST(dues[2] == dues[1] + 1000);
  BOOST_TEST(dues[2] <= server_now());
  BOOST_TEST(dues[2] + 1000 > server_now() - 100);
}

BOOST_AUTO_TEST_CASE(one_shots_always_fire_whatever_the_misfire_policy) {
  put_request r = once_in("late", 0);
  r.absolute = true;
  r.at_ms = server_now() - 3'600'000;
  r.options.misfire = cd::misfire_policy::skip;
  put_ok(r);
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  BOOST_TEST(c.fires[0].due_ms == r.at_ms);
}

BOOST_AUTO_TEST_CASE(the_wake_channel_announces_only_a_new_earliest_time) {
  sync_redis listener(cd::test::test_redis_options());
  std::vector<std::string> messages;
  listener.connection().set_push_handler([&](redis_value v) {
    if (v.elements.size() == 3) messages.push_back(v.elements[2].str);
  });
  auto sub = listener.exec({"SUBSCRIBE", ks.wake_channel()});
  BOOST_TEST_REQUIRE(!sub.is_error());
  const auto later = put_ok(once_in("w1", 60000));
  put_ok(once_in("w2", 120000));  // not the earliest: silent
  const auto earlier = put_ok(once_in("w3", 30000));
  BOOST_TEST(listener.run_for_until(std::chrono::seconds(5), [&] { return messages.size() >= 2; }));
  listener.run_for_until(std::chrono::milliseconds(100), [] { return false; });
  BOOST_TEST_REQUIRE(messages.size() == 2u);
  BOOST_TEST(messages[0] == std::to_string(later));
  BOOST_TEST(messages[1] == std::to_string(earlier));
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_refused_by_the_server_too) {
  auto r = once_in("bad", 0);
  r.kind = schedule_kind::fixed_rate;
  r.period_ms = 0;
  auto v = put(r);
  BOOST_TEST_REQUIRE(v.is_error());
  BOOST_TEST(v.str.rfind("BADARG", 0) == 0u);
  BOOST_TEST(!exists("bad"));
  auto c = redis.exec(cd::detail::claim_call(ks, "w", 0, 1));
  BOOST_TEST(c.is_error());
}

BOOST_AUTO_TEST_CASE(far_future_times_are_clamped_not_wrapped) {
  put_request r = once_in("never", cd::detail::max_time_ms * 4);
  const auto due = put_ok(r);
  BOOST_TEST(due >= cd::detail::max_time_ms);
  auto c = claim();
  BOOST_TEST(c.fires.empty());
  BOOST_TEST(c.next_event_ms == due);
}

BOOST_AUTO_TEST_CASE(release_gives_the_fire_back_at_once_without_counting_the_attempt) {
  const auto due = put_ok(once_in("g", 0));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  std::int64_t n = 0;
  BOOST_TEST(!cd::detail::parse_integer(
      redis.exec(cd::detail::release_call(ks, "g", c.fires[0].token, c.epoch)), n));
  BOOST_TEST(n == 1);
  auto again = claim();  // at once: no backoff
  BOOST_TEST_REQUIRE(again.fires.size() == 1u);
  BOOST_TEST(again.fires[0].due_ms == due);
  BOOST_TEST(again.fires[0].attempt == 1u);
  BOOST_TEST(again.fires[0].token > c.fires[0].token);
  // The given-back token holds nothing any more.
  BOOST_TEST(!cd::detail::parse_integer(redis.exec(cd::detail::release_call(ks, "g", c.fires[0].token)), n));
  BOOST_TEST(n == 0);
  BOOST_TEST(ack("g", c.fires[0].token) == cd::error::stale_lease);
}

BOOST_AUTO_TEST_CASE(a_claim_returns_the_epoch_and_calls_from_another_epoch_are_refused) {
  put_ok(once_in("e", 0));
  auto c = claim();
  BOOST_TEST_REQUIRE(c.fires.size() == 1u);
  BOOST_TEST(!c.epoch.empty());
  BOOST_TEST(claim().epoch == c.epoch);  // stable while the data lives
  const auto token = c.fires[0].token;
  BOOST_TEST(token > static_cast<std::uint64_t>(server_now()) * 1000u - 1000000u);  // time-based
  const std::string other = "1/someone-else";
  std::int64_t n = 0;
  BOOST_TEST(cd::detail::parse_integer(redis.exec(cd::detail::extend_call(ks, "e", token, 1000, other)), n) ==
             cd::error::data_lost);
  bool dead = false;
  BOOST_TEST(cd::detail::parse_nack(redis.exec(cd::detail::nack_call(ks, "e", token, 0, "x", other)), dead, n) ==
             cd::error::data_lost);
  bool acked = false;
  BOOST_TEST(cd::detail::parse_ack(redis.exec(cd::detail::ack_call(ks, "e", token, other)), acked, n) ==
             cd::error::data_lost);
  BOOST_TEST(!cd::detail::parse_ack(redis.exec(cd::detail::ack_call(ks, "e", token, c.epoch)), acked, n));
  BOOST_TEST(acked);
}

BOOST_AUTO_TEST_SUITE_END()

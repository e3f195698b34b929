// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 44: Redis Sentinel. One master, one replica and three sentinels on
// loopback (sentinel_group); the scheduler finds the master through the
// sentinels, and a failover forced with SENTINEL FAILOVER during a run does
// not stop the schedule, nor does a kill -9 of the master: every tick fires
// at least once, within a bound, and the fencing tokens keep growing across
// the failover (the data-loss rules of docs/durable.md: tokens above both
// the replicated counter and Redis's time, so a replica that missed the
// last claims still hands out larger ones).
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "sentinel_group.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::error_of;
using dt::fast_options;
using dt::wait_until;

namespace {

// The due times fired, in ms since the epoch, and the fencing tokens in the
// order the handler saw them.
struct ticks {
  mutable std::mutex mutex;
  std::set<std::int64_t> due;
  std::vector<std::uint64_t> tokens;

  void add(const cd::fire_context& f) {
    const std::lock_guard lock(mutex);
    due.insert(std::chrono::duration_cast<std::chrono::milliseconds>(f.due.time_since_epoch()).count());
    tokens.push_back(f.token);
  }
  // "" when every token was above the one before, else which was not.
  // One fixed-rate schedule never overlaps itself, so the handler sees its
  // fires in claim order.
  std::string tokens_not_growing() const {
    const std::lock_guard lock(mutex);
    for (std::size_t i = 1; i < tokens.size(); ++i)
      if (tokens[i] <= tokens[i - 1])
        return "fire " + std::to_string(i) + " of " + std::to_string(tokens.size()) + ": token " +
               std::to_string(tokens[i]) + " after " + std::to_string(tokens[i - 1]);
    return {};
  }
  std::size_t size() const {
    const std::lock_guard lock(mutex);
    return due.size();
  }
  // Fired ticks after `after` (ms).
  std::size_t after(std::int64_t t) const {
    const std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::distance(due.upper_bound(t), due.end()));
  }
  // Every period from the first tick to the last fired, none missing.
  bool none_missing(std::int64_t period) const {
    const std::lock_guard lock(mutex);
    if (due.empty()) return false;
    for (auto t = *due.begin(); t <= *due.rbegin(); t += period)
      if (!due.contains(t)) return false;
    return true;
  }
  std::int64_t last() const {
    const std::lock_guard lock(mutex);
    return due.empty() ? 0 : *due.rbegin();
  }
};

// Runs a fixed-rate schedule through the master, applies `fault` (which
// must lead the sentinels to promote the replica) and checks that the
// schedule goes on from the new master with no tick missing.
template <class Fault>
void keeps_firing_through(Fault fault, chronopool::scheduled_thread_pool& pool, const std::string& ns,
                          bool old_master_survives) {
  dt::sentinel_group group(CHRONOPOOL_TEST_REDIS_SERVER);
  const auto first_master = group.master_port();
  BOOST_TEST_REQUIRE(first_master == group.server_port(0));

  auto o = fast_options(ns, group.client_options());
  o.redis.request_timeout = 2s;
  cd::scheduler s(pool.get_executor(), o);
  ticks seen;
  s.register_handler("tick", [&](const cd::fire_context& f) { seen.add(f); });
  s.start();
  cd::schedule_options every;
  every.misfire = cd::misfire_policy::catch_up;
  every.catch_up_max = 1000;  // ticks missed during the failover are fired late, not skipped
  constexpr std::int64_t period_ms = 100;
  const auto put = error_of([&](auto h) {
    s.async_schedule_at_fixed_rate("sentinel-tick", "tick", "", 0ms, std::chrono::milliseconds(period_ms), every,
                                   std::move(h));
  });
  BOOST_TEST_REQUIRE(!put, put.message());
  BOOST_TEST_REQUIRE(wait_until([&] { return seen.size() >= 5; }), "fired " << seen.size());

  fault(group);
  BOOST_TEST_REQUIRE(wait_until([&] { return group.master_port() == group.server_port(1); }, 30s),
                     "the sentinels did not switch to the replica");
  // The client must follow to the new master.
  const auto switched_at = seen.last();
  const bool kept_firing = wait_until([&] { return seen.after(switched_at) >= 20; }, 30s);
  BOOST_TEST(kept_firing, "after the failover only " << seen.after(switched_at) << " ticks fired");
  BOOST_TEST(seen.none_missing(period_ms));
  const std::string not_growing = seen.tokens_not_growing();
  BOOST_TEST(not_growing.empty(), not_growing);
  BOOST_TEST(s.stats().reconnects >= 1u);
  // The new master has the schedule, and this scheduler writes to it.
  BOOST_TEST(dt::sentinel_group::cli(group.server_port(1), "ROLE").rfind("master", 0) == 0u);
  if (old_master_survives)  // turned into a replica of the new master
    BOOST_TEST(wait_until([&] { return dt::sentinel_group::cli(group.server_port(0), "ROLE").rfind("slave", 0) == 0u; }));
  const auto cancel = error_of([&](auto h) { s.async_cancel("not-there", std::move(h)); });
  BOOST_TEST(!cancel, cancel.message());
  s.stop();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_sentinel, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(schedules_keep_firing_through_a_forced_failover) {
  keeps_firing_through([](dt::sentinel_group& g) { g.failover(); }, pool, ns, true);
}

BOOST_AUTO_TEST_CASE(schedules_keep_firing_when_the_master_is_killed) {
  // The sentinels notice after down-after-milliseconds (1 s) and fail over.
  keeps_firing_through([](dt::sentinel_group& g) { g.kill_first_server(); }, pool, ns, false);
}

BOOST_AUTO_TEST_CASE(inconsistent_sentinel_options_are_refused_naming_them) {
  const auto refusal = [&](cd::redis_options r) { return dt::construction_refusal(pool, ns, std::move(r)); };
  cd::redis_options r;
  r.sentinel.sentinels = {{"127.0.0.1", 1}};
  auto what = refusal(r);
  BOOST_TEST(what.find("redis_options.sentinel.master_name must not be empty") != std::string::npos, what);
  r.sentinel.master_name = "m";
  r.sentinel.sentinels.push_back({"", 26379});
  what = refusal(r);
  BOOST_TEST(what.find("redis_options.sentinel.sentinels[1]") != std::string::npos, what);
  r.sentinel.sentinels.clear();
  what = refusal(r);
  BOOST_TEST(what.find("master_name \"m\" is set but") != std::string::npos, what);
}

BOOST_AUTO_TEST_CASE(no_sentinel_answering_is_no_master) {
  cd::redis_options r;
  r.sentinel.master_name = "nobody";
  r.sentinel.sentinels = {{"127.0.0.1", dt::pick_free_port()}};  // nothing listens there
  r.request_timeout = 1s;
  cd::scheduler s(pool.get_executor(), fast_options(ns, r));
  BOOST_TEST(wait_until([&] { return s.connection_error() == make_error_code(cd::error::no_master); }),
             s.connection_error().message());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 44: the durable scheduler on a real Redis Cluster: its function
// library is loaded on every master, a namespace served by a master other
// than the first seed gets its schedules created and fired there, and a
// master that lost the library (FUNCTION FLUSH) gets it again on first use,
// and a partitioned namespace spreads over the masters.
#include "cluster_support.hpp"

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/detail/key_space.hpp>
#include <chronopool/durable/error.hpp>

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
namespace cdd = chronopool::durable::detail;
using namespace std::chrono_literals;

namespace {
namespace scheduler_test {

// A namespace whose keys (cp:{<ns>}:...) live on a master other than the
// one on port `not_on`.
std::string namespace_off(dt::cluster_group& g, std::uint16_t not_on) {
  for (;;) {
    auto ns = dt::unique_namespace();
    const auto owner = g.slot_owner(cdd::key_slot(cdd::key_space(ns).due_key()));
    if (owner != 0 && owner != not_on) return ns;
  }
}

// Subscribers of the namespace's wake-up channel over the running nodes
// (PUBSUB NUMSUB counts a node's own clients only).
std::int64_t wake_subscribers(dt::cluster_group& g, const std::string& ns) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!g.running(i)) continue;
    const auto out = g.cli(i, "PUBSUB NUMSUB " + cdd::key_space(ns).wake_channel());
    const auto nl = out.find('\n');
    if (nl != std::string::npos) n += std::stoll(out.substr(nl + 1));
  }
  return n;
}

bool has_library(dt::cluster_group& g, std::size_t i) {
  return g.cli(i, std::string("FUNCTION LIST LIBRARYNAME ") + cdd::library_name).find(cdd::library_name) !=
         std::string::npos;
}

}  // namespace scheduler_test
}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_cluster_scheduler, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(schedules_fire_on_a_master_other_than_the_first_seed) {
  auto& g = dt::shared_cluster();
  const auto ns_here = scheduler_test::namespace_off(g, g.port(0));
  const auto owner = g.slot_owner(cdd::key_slot(cdd::key_space(ns_here).due_key()));
  for (const auto p : g.master_ports()) g.cli(g.index_of(p), "FUNCTION FLUSH");

  cd::scheduler s(pool.get_executor(), dt::fast_options(ns_here, g.client_options()));
  std::atomic<int> once{0}, ticks{0};
  s.register_handler("once", [&](const cd::fire_context&) { ++once; });
  s.register_handler("tick", [&](const cd::fire_context&) { ++ticks; });
  s.start();
  const auto put = dt::error_of([&](auto h) { s.async_schedule("cluster-once", "once", "", 100ms, std::move(h)); });
  BOOST_TEST_REQUIRE(!put, put.message());
  const auto rate = dt::error_of([&](auto h) {
    s.async_schedule_at_fixed_rate("cluster-tick", "tick", "", 0ms, 100ms, cd::schedule_options{}, std::move(h));
  });
  BOOST_TEST_REQUIRE(!rate, rate.message());
  BOOST_TEST(dt::wait_until([&] { return once.load() == 1 && ticks.load() >= 5; }, 30s),
             "once " << once.load() << ", ticks " << ticks.load());
  // The library is on every master, and the schedules on the namespace's.
  for (const auto p : g.master_ports()) BOOST_TEST(scheduler_test::has_library(g, g.index_of(p)), "port " << p);
  dt::sync_redis master(g.node_options(g.index_of(owner)));
  const auto due = master.exec({"ZSCORE", cdd::key_space(ns_here).due_key(), "cluster-tick"});
  BOOST_TEST(due.is_text(), "the due set of " << owner << ": " << due.str);
  s.stop();
}

BOOST_AUTO_TEST_CASE(a_master_that_lost_the_library_gets_it_again_on_first_use) {
  auto& g = dt::shared_cluster();
  const auto ns_here = scheduler_test::namespace_off(g, 0);
  const auto owner = g.index_of(g.slot_owner(cdd::key_slot(cdd::key_space(ns_here).due_key())));
  std::atomic<int> fired{0};
  cd::scheduler s(pool.get_executor(), dt::fast_options(ns_here, g.client_options()));
  s.register_handler("once", [&](const cd::fire_context&) { ++fired; });
  const auto first = dt::error_of([&](auto h) { s.async_schedule("before-flush", "once", "", 1h, std::move(h)); });
  BOOST_TEST_REQUIRE(!first, first.message());
  // Gone under the connected scheduler: the next call answers "Function
  // not found", the client loads the library there and sends it again.
  BOOST_TEST_REQUIRE(g.cli(owner, "FUNCTION FLUSH") == "OK");
  BOOST_TEST_REQUIRE(!scheduler_test::has_library(g, owner));
  const auto again = dt::error_of([&](auto h) { s.async_schedule("after-flush", "once", "", 50ms, std::move(h)); });
  BOOST_TEST(!again, again.message());
  BOOST_TEST(scheduler_test::has_library(g, owner));
  s.start();
  BOOST_TEST(dt::wait_until([&] { return fired.load() == 1; }, 30s));
  s.stop();
}

BOOST_AUTO_TEST_CASE(schedules_keep_firing_when_their_master_is_killed_and_its_replica_promoted) {
  // A cluster of its own: 3 masters with a replica each.
  dt::cluster_group g(CHRONOPOOL_TEST_REDIS_SERVER, 3, 1);
  const auto ns_here = scheduler_test::namespace_off(g, 0);
  const auto master_port = g.slot_owner(cdd::key_slot(cdd::key_space(ns_here).due_key()));
  const auto master = g.index_of(master_port);
  auto o = dt::fast_options(ns_here, g.client_options());
  o.redis.request_timeout = 2s;
  o.redis.connect_timeout = 1s;
  std::atomic<int> ticks{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("tick", [&](const cd::fire_context&) { ++ticks; });
  s.start();
  cd::schedule_options every;
  every.misfire = cd::misfire_policy::catch_up;
  every.catch_up_max = 1000;
  const auto put = dt::error_of([&](auto h) {
    s.async_schedule_at_fixed_rate("failover-tick", "tick", "", 0ms, 100ms, every, std::move(h));
  });
  BOOST_TEST_REQUIRE(!put, put.message());
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return ticks.load() >= 5; }, 30s), "ticks " << ticks.load());
  BOOST_TEST_REQUIRE(dt::wait_until([&] { return scheduler_test::wake_subscribers(g, ns_here) == 1; }, 30s));

  g.kill9(master);
  // A surviving node names another master for the slot: the replica.
  const std::size_t asked = master == 0 ? std::size_t{1} : std::size_t{0};
  BOOST_TEST_REQUIRE(dt::wait_until([&] {
    const auto p = g.slot_owner(cdd::key_slot(cdd::key_space(ns_here).due_key()), asked);
    return p != 0 && p != master_port;
  }, 60s), "no replica was promoted");
  const auto before = ticks.load();
  BOOST_TEST(dt::wait_until([&] { return ticks.load() >= before + 10; }, 60s),
             "after the failover " << ticks.load() - before << " ticks fired");
  BOOST_TEST(s.stats().reconnects >= 1u);
  // The wake-up subscription was made again, on a node that is alive.
  BOOST_TEST(dt::wait_until([&] { return scheduler_test::wake_subscribers(g, ns_here) == 1; }, 30s));
  s.stop();
}

BOOST_AUTO_TEST_CASE(a_partitioned_namespace_spreads_over_the_masters_and_every_schedule_fires) {
  auto& g = dt::shared_cluster();
  const auto ns_here = dt::unique_namespace();
  constexpr std::uint32_t parts = 8;
  const cdd::namespace_layout layout(ns_here, parts);
  auto o = dt::fast_options(ns_here, g.client_options());
  o.partitions = parts;
  cd::scheduler s(pool.get_executor(), o);
  constexpr int n = 64;
  std::mutex m;
  std::set<std::string> fired;
  s.register_handler("once", [&](const cd::fire_context& c) {
    std::lock_guard lk(m);
    fired.insert(c.schedule_id);
  });
  // Due at once, but nothing claims before start(): the keys can be looked at first.
  std::vector<cd::schedule_spec> specs(n);
  for (int i = 0; i < n; ++i) {
    specs[static_cast<std::size_t>(i)].id = "p" + std::to_string(i);
    specs[static_cast<std::size_t>(i)].task = "once";
  }
  const auto results = s.async_upsert_schedules(std::move(specs), boost::asio::use_future).get();
  for (const auto& r : results) BOOST_TEST_REQUIRE(r.error.empty(), r.id << ": " << r.error);
  // Each schedule is in its partition's due set, on the master that serves
  // that partition's slot; the partitions sit on more than one master.
  std::set<std::uint16_t> masters;
  for (int i = 0; i < n; ++i) {
    const std::string id = "p" + std::to_string(i);
    const auto due_key = layout.of(id).due_key();
    const auto owner = g.slot_owner(cdd::key_slot(due_key));
    masters.insert(owner);
    dt::sync_redis master(g.node_options(g.index_of(owner)));
    BOOST_TEST(master.exec({"ZSCORE", due_key, id}).is_text(), id << " in " << due_key << " on " << owner);
  }
  BOOST_TEST(masters.size() >= 2u, "every partition on one master");
  s.start();
  BOOST_TEST(dt::wait_until([&] {
    std::lock_guard lk(m);
    return fired.size() == static_cast<std::size_t>(n);
  }, 30s), "fired " << fired.size() << " of " << n);
  s.stop();
}

BOOST_AUTO_TEST_CASE(cluster_and_sentinel_together_are_refused) {
  cd::redis_options r;
  r.cluster.seeds = {{"127.0.0.1", 7000}};
  r.sentinel.master_name = "m";
  r.sentinel.sentinels = {{"127.0.0.1", 26379}};
  const auto what = dt::construction_refusal(pool, ns, r);
  BOOST_TEST(what.find("redis_options.cluster.seeds and redis_options.sentinel.sentinels are both set") !=
                 std::string::npos,
             what);
  r.sentinel = {};
  r.cluster.seeds = {{"", 7000}};
  const auto empty_host = dt::construction_refusal(pool, ns, r);
  BOOST_TEST(empty_host.find("redis_options.cluster.seeds[0]") != std::string::npos, empty_host);
}

BOOST_AUTO_TEST_SUITE_END()

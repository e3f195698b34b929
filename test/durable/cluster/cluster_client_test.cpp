// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 44: the Redis Cluster client behind detail::redis_connection, on a
// real 3-master cluster: hash slots as the server computes them, commands
// routed to the master of their key's slot, -MOVED (a slot resharded under
// a connected client) and -ASK (a key migrated out of a MIGRATING slot)
// followed, redirections bounded, and inconsistent options refused.
#include "cluster_support.hpp"

#include "tls_certificates.hpp"

#include <chronopool/durable/error.hpp>

#include <set>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
namespace cdd = chronopool::durable::detail;

namespace {
namespace client_test {

// Runs `args` through a cluster connection; the reply must have arrived.
cdd::redis_value run(dt::sync_redis& r, std::vector<std::string> args) { return r.exec(std::move(args)); }

// Every master's errorstat `name` count, by node index.
std::vector<std::int64_t> error_counts(dt::cluster_group& g, const std::string& name) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < g.size(); ++i) out.push_back(dt::error_count(g, i, name));
  return out;
}

}  // namespace client_test
}  // namespace

BOOST_AUTO_TEST_SUITE(durable_cluster_client)

BOOST_AUTO_TEST_CASE(crc16_is_xmodem_and_key_slots_agree_with_cluster_keyslot) {
  // The check value of CRC-16/XMODEM, and the example of the cluster spec.
  BOOST_TEST(cdd::crc16_xmodem("123456789") == 0x31C3);
  BOOST_TEST(cdd::crc16_xmodem("") == 0);
  auto& g = dt::shared_cluster();
  dt::sync_redis node(g.node_options(0));
  const std::vector<std::string> keys{
      "foo", "bar", "123456789", "", "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
      "foo{bar}{zap}", "{", "}", "{}", "a{b", "cp:{orders}:due", "cp:{orders}:wake", std::string("\xff\x00\x80z", 4),
      "a somewhat longer key with spaces and UTF-8: \xc3\xa9t\xc3\xa9"};
  for (const auto& k : keys) {
    const auto v = node.exec({"CLUSTER", "KEYSLOT", k});
    BOOST_TEST_REQUIRE(v.is_integer(), v.str);
    BOOST_TEST(cdd::key_slot(k) == v.integer, "key \"" << k << "\"");
  }
  // Hash tags: the text between the first '{' and the next '}'.
  BOOST_TEST(cdd::key_slot("{user1000}.following") == cdd::key_slot("user1000"));
  BOOST_TEST(cdd::key_slot("foo{}{bar}") == cdd::key_slot("foo{}{bar}"));  // empty tag: the whole key
  BOOST_TEST(cdd::key_slot("foo{bar}{zap}") == cdd::key_slot("bar"));
}

BOOST_AUTO_TEST_CASE(the_routing_key_of_a_function_call_is_the_first_key_after_numkeys) {
  using args = std::vector<std::string>;
  BOOST_TEST(cdd::routing_key(args{"FCALL", "cp_claim_v5", "1", "cp:{a}:due", "x"}).value() == "cp:{a}:due");
  BOOST_TEST(cdd::routing_key(args{"fcall_ro", "f", "2", "k1", "k2"}).value() == "k1");
  BOOST_TEST(cdd::routing_key(args{"EVAL", "return 1", "1", "k"}).value() == "k");
  BOOST_TEST(!cdd::routing_key(args{"FCALL", "f", "0", "arg"}).has_value());
  BOOST_TEST(!cdd::routing_key(args{"FCALL", "f", "x", "arg"}).has_value());
  BOOST_TEST(cdd::routing_key(args{"GET", "k"}).value() == "k");
  BOOST_TEST(!cdd::routing_key(args{"PING"}).has_value());
  BOOST_TEST(!cdd::routing_key(args{"SUBSCRIBE", "cp:{a}:wake"}).has_value());
  BOOST_TEST(!cdd::routing_key(args{"FUNCTION", "LOAD", "code"}).has_value());
}

BOOST_AUTO_TEST_CASE(commands_go_to_the_master_of_their_keys_slot) {
  auto& g = dt::shared_cluster();
  const auto masters = g.master_ports();
  BOOST_TEST_REQUIRE(masters.size() == 3u);
  for (std::size_t i = 0; i < g.size(); ++i) g.cli(i, "CONFIG RESETSTAT");
  dt::sync_redis cluster(g.client_options());
  std::set<std::uint16_t> written;
  for (const auto port : masters) {
    const auto key = dt::key_on(g, port, "route-" + std::to_string(port) + "-");
    const auto set = client_test::run(cluster, {"SET", key, "on " + std::to_string(port)});
    BOOST_TEST(set.text() == "OK", set.str);
    // The master itself has it, and no node had to redirect the client.
    dt::sync_redis owner(g.node_options(g.index_of(port)));
    BOOST_TEST(owner.exec({"GET", key}).text() == "on " + std::to_string(port));
    BOOST_TEST(client_test::run(cluster, {"GET", key}).text() == "on " + std::to_string(port));
    written.insert(port);
  }
  BOOST_TEST(written.size() == 3u);
  for (const auto n : client_test::error_counts(g, "errorstat_MOVED")) BOOST_TEST(n == 0);
  for (const auto n : client_test::error_counts(g, "errorstat_ASK")) BOOST_TEST(n == 0);
}

BOOST_AUTO_TEST_CASE(a_moved_slot_is_followed_and_the_map_refreshed) {
  auto& g = dt::shared_cluster();
  const auto masters = g.master_ports();
  dt::sync_redis cluster(g.client_options());  // knows the map before the move
  const auto from = masters[0];
  const auto to = masters[1];
  const auto key = dt::key_on(g, from, "moved-");
  const auto slot = cdd::key_slot(key);
  BOOST_TEST(client_test::run(cluster, {"SET", key, "before"}).text() == "OK");
  dt::move_slot(g, slot, from, to);
  const auto moved_before = dt::error_count(g, g.index_of(from), "errorstat_MOVED");
  // The old owner answers -MOVED; the client resends to the new one.
  const auto v = client_test::run(cluster, {"GET", key});
  BOOST_TEST(v.text() == "before", v.str);
  BOOST_TEST(dt::error_count(g, g.index_of(from), "errorstat_MOVED") == moved_before + 1);
  // The map was updated: the next commands go straight to the new owner.
  BOOST_TEST(client_test::run(cluster, {"SET", key, "after"}).text() == "OK");
  BOOST_TEST(client_test::run(cluster, {"GET", key}).text() == "after");
  BOOST_TEST(dt::error_count(g, g.index_of(from), "errorstat_MOVED") == moved_before + 1);
  dt::sync_redis owner(g.node_options(g.index_of(to)));
  BOOST_TEST(owner.exec({"GET", key}).text() == "after");
}

BOOST_AUTO_TEST_CASE(pipelined_commands_for_one_key_keep_their_order_across_a_moved) {
  auto& g = dt::shared_cluster();
  const auto masters = g.master_ports();
  dt::sync_redis cluster(g.client_options());
  const auto from = masters[2];
  const auto to = masters[0];
  const auto key = dt::key_on(g, from, "order-");
  dt::move_slot(g, cdd::key_slot(key), from, to);
  // 50 RPUSHes pipelined into the stale route: every one is redirected,
  // and the list must hold them in the order they were executed.
  constexpr int pushes = 50;
  std::vector<dt::outcome> outcomes(pushes);
  for (int i = 0; i < pushes; ++i)
    cluster.connection().async_execute({"RPUSH", key, std::to_string(i)}, dt::capture(outcomes[static_cast<std::size_t>(i)]));
  dt::run_until(cluster.context(), [&] {
    for (const auto& o : outcomes)
      if (!o.done) return false;
    return true;
  });
  for (const auto& o : outcomes) BOOST_TEST((!o.ec && o.value.is_integer()), o.ec.message() << " " << o.value.str);
  const auto list = client_test::run(cluster, {"LRANGE", key, "0", "-1"});
  BOOST_TEST_REQUIRE(list.elements.size() == static_cast<std::size_t>(pushes));
  for (int i = 0; i < pushes; ++i) BOOST_TEST(list.elements[static_cast<std::size_t>(i)].text() == std::to_string(i));
}

BOOST_AUTO_TEST_CASE(an_ask_is_followed_once_without_changing_the_map) {
  auto& g = dt::shared_cluster();
  const auto masters = g.master_ports();
  const auto from = masters[1];
  const auto to = masters[2];
  const auto base = dt::key_on(g, from, "ask-");
  const auto migrated = "{" + base + "}migrated";
  const auto stays = "{" + base + "}stays";
  const auto slot = cdd::key_slot(migrated);
  BOOST_TEST_REQUIRE(g.slot_owner(slot) == from);
  dt::sync_redis cluster(g.client_options());
  BOOST_TEST(client_test::run(cluster, {"SET", migrated, "moved-value"}).text() == "OK");
  BOOST_TEST(client_test::run(cluster, {"SET", stays, "stayed-value"}).text() == "OK");
  // Half a migration: the slot is MIGRATING on `from`, IMPORTING on `to`,
  // and one of its two keys has moved.
  const auto src = g.index_of(from);
  const auto dst = g.index_of(to);
  const auto s = std::to_string(slot);
  g.cli(dst, "CLUSTER SETSLOT " + s + " IMPORTING " + g.node_id(src));
  g.cli(src, "CLUSTER SETSLOT " + s + " MIGRATING " + g.node_id(dst));
  BOOST_TEST(g.cli(src, "MIGRATE 127.0.0.1 " + std::to_string(to) + " \"\" 0 5000 KEYS " + migrated) == "OK");
  const auto ask_before = dt::error_count(g, src, "errorstat_ASK");
  const auto moved_before = dt::error_count(g, dst, "errorstat_MOVED");
  // `from` answers -ASK for the migrated key: ASKING + GET on `to`.
  BOOST_TEST(client_test::run(cluster, {"GET", migrated}).text() == "moved-value");
  BOOST_TEST(dt::error_count(g, src, "errorstat_ASK") == ask_before + 1);
  // The map did not change: the other key is still read from `from` (had
  // the client sent it to `to`, `to` would have answered -MOVED).
  BOOST_TEST(client_test::run(cluster, {"GET", stays}).text() == "stayed-value");
  BOOST_TEST(dt::error_count(g, dst, "errorstat_MOVED") == moved_before);
  // Each further command for the migrated key is asked again.
  BOOST_TEST(client_test::run(cluster, {"GET", migrated}).text() == "moved-value");
  BOOST_TEST(dt::error_count(g, src, "errorstat_ASK") == ask_before + 2);
  // Finish the migration, so that the cluster is whole for later tests.
  dt::move_slot(g, slot, from, to);
  BOOST_TEST(client_test::run(cluster, {"GET", stays}).text() == "stayed-value");
}

BOOST_AUTO_TEST_CASE(redirections_are_bounded) {
  auto& g = dt::shared_cluster();
  const auto port = g.master_ports()[0];
  const auto key = dt::key_on(g, port, "loop-");
  auto o = g.client_options();
  o.cluster.max_redirects = 3;
  dt::sync_redis cluster(o);
  // A script on the slot's own master that answers a -MOVED to itself,
  // for ever: the client must give up after max_redirects.
  const auto self = std::to_string(cdd::key_slot(key)) + " 127.0.0.1:" + std::to_string(port);
  auto r = dt::execute(cluster.context(), cluster.connection(),
                       {"EVAL", "return redis.error_reply('MOVED ' .. ARGV[1])", "1", key, self});
  BOOST_TEST((r.ec == cd::error::too_many_redirects), r.ec.message());
  BOOST_TEST(r.ec.message().find("MOVED " + self) != std::string::npos, r.ec.message());
  // The connection is still usable.
  BOOST_TEST(client_test::run(cluster, {"SET", key, "v"}).text() == "OK");
}

BOOST_AUTO_TEST_CASE(the_password_applies_to_every_node) {
  // A cluster of its own whose nodes all require a password.
  dt::cluster_group g(CHRONOPOOL_TEST_REDIS_SERVER, 3, 0, "cluster-secret-41f7");
  dt::sync_redis cluster(g.client_options());
  for (const auto port : g.master_ports()) {
    const auto key = dt::key_on(g, port, "auth-");
    BOOST_TEST(client_test::run(cluster, {"SET", key, "v"}).text() == "OK", "master " << port);
  }
  boost::asio::io_context io;
  auto wrong = g.client_options();
  wrong.password = "not-it";
  cdd::redis_connection c(io.get_executor(), wrong);
  const auto ec = dt::connect(io, c);
  // Every seed refused it alike: that refusal, not cluster_down.
  BOOST_TEST((ec == cd::error::auth_failed), ec.message());
  BOOST_TEST(ec.message().find("WRONGPASS") != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("not-it") == std::string::npos, ec.message());
}

BOOST_AUTO_TEST_CASE(tls_applies_to_every_node) {
  // A cluster of its own whose nodes speak TLS only, with the test CA.
  const dt::tls_certificates certs;
  dt::cluster_group g(CHRONOPOOL_TEST_REDIS_SERVER, 3, 0, {}, &certs);
  dt::sync_redis cluster(g.client_options());
  for (const auto port : g.master_ports()) {
    const auto key = dt::key_on(g, port, "tls-");
    BOOST_TEST(client_test::run(cluster, {"SET", key, "v"}).text() == "OK", "master " << port);
  }
  // A CA that signed none of the nodes: every seed refuses it alike.
  boost::asio::io_context io;
  auto wrong = g.client_options();
  wrong.tls.ca_file = certs.wrong_ca_file();
  cdd::redis_connection c(io.get_executor(), wrong);
  const auto ec = dt::connect(io, c);
  BOOST_TEST((ec == cd::error::tls_failed), ec.message());
}

BOOST_AUTO_TEST_CASE(inconsistent_cluster_options_are_refused_naming_them) {
  boost::asio::io_context io;
  const auto refusal = [&](const cd::redis_options& r) -> std::string {
    try {
      cdd::redis_connection c(io.get_executor(), r);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  cd::redis_options r;
  r.cluster.seeds = {{"127.0.0.1", 7000}, {"", 7001}};
  auto what = refusal(r);
  BOOST_TEST(what.find("redis_options.cluster.seeds[1] \":7001\" needs a host") != std::string::npos, what);
  r.cluster.seeds = {{"127.0.0.1", 0}};
  what = refusal(r);
  BOOST_TEST(what.find("redis_options.cluster.seeds[0] \"127.0.0.1:0\"") != std::string::npos, what);
  r.cluster.seeds = {{"127.0.0.1", 7000}};
  r.cluster.max_redirects = 0;
  what = refusal(r);
  BOOST_TEST(what.find("redis_options.cluster.max_redirects must be at least 1") != std::string::npos, what);
  r.cluster.max_redirects = 5;
  r.sentinel.master_name = "m";
  r.sentinel.sentinels = {{"127.0.0.1", 26379}};
  what = refusal(r);
  BOOST_TEST(what.find("redis_options.cluster.seeds and redis_options.sentinel.sentinels are both set") !=
                 std::string::npos,
             what);
  r.sentinel = {};
  BOOST_TEST(refusal(r) == "(accepted)");
}

BOOST_AUTO_TEST_CASE(no_seed_answering_is_cluster_down_naming_the_seeds) {
  boost::asio::io_context io;
  cd::redis_options r;
  const auto port = dt::pick_free_port();  // nothing listens there
  r.cluster.seeds = {{"127.0.0.1", port}};
  cdd::redis_connection c(io.get_executor(), r);
  const auto ec = dt::connect(io, c);
  BOOST_TEST((ec == cd::error::cluster_down), ec.message());
  BOOST_TEST(ec.message().find("127.0.0.1:" + std::to_string(port)) != std::string::npos, ec.message());
  BOOST_TEST(!c.is_open());
}

BOOST_AUTO_TEST_SUITE_END()

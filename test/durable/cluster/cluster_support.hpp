// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the Redis Cluster tests share: one 3-master cluster for the whole
// run (started on first use, stopped at exit), and a key for each master.
#pragma once

#include "../unit/regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "cluster_group.hpp"
#include "sync_redis.hpp"

#include <chronopool/durable/detail/cluster_slot.hpp>

#include <cstdint>
#include <string>

namespace chronopool::durable::test {

/// The shared cluster: 3 masters, no replicas. Tests that move slots leave
/// it with cluster_state:ok and find owners afresh (slot_owner), never
/// assuming the layout of an earlier test.
inline cluster_group& shared_cluster() {
  static cluster_group group(CHRONOPOOL_TEST_REDIS_SERVER);
  return group;
}

/// A key (made of `prefix` and a number) whose slot node `asked` says is
/// served by the master on `port`, and whose slot holds no key yet.
inline std::string key_on(cluster_group& g, std::uint16_t port, const std::string& prefix) {
  for (int i = 0;; ++i) {
    auto key = prefix + std::to_string(i);
    const auto slot = detail::key_slot(key);
    if (g.slot_owner(slot) != port) continue;
    sync_redis owner(g.node_options(g.index_of(port)));
    const auto n = owner.exec({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
    if (n.is_integer() && n.integer == 0) return key;
  }
}

/// `name` of INFO errorstats of node `i` ("errorstat_MOVED"): its count, 0
/// when absent.
inline std::int64_t error_count(cluster_group& g, std::size_t i, const std::string& name) {
  const auto info = g.cli(i, "INFO errorstats");
  const auto at = info.find(name + ":count=");
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + name.size() + 7));
}

/// Moves the (empty or not) `slot` from the master on `from` to the one on
/// `to`: IMPORTING, MIGRATING, MIGRATE of its keys, then NODE on every
/// master, and waits until the cluster agrees.
inline void move_slot(cluster_group& g, std::uint16_t slot, std::uint16_t from, std::uint16_t to) {
  const auto src = g.index_of(from);
  const auto dst = g.index_of(to);
  const auto s = std::to_string(slot);
  g.cli(dst, "CLUSTER SETSLOT " + s + " IMPORTING " + g.node_id(src));
  g.cli(src, "CLUSTER SETSLOT " + s + " MIGRATING " + g.node_id(dst));
  for (;;) {
    const auto keys = g.cli(src, "CLUSTER GETKEYSINSLOT " + s + " 100");
    if (keys.empty()) break;
    std::string list;
    for (std::size_t b = 0; b < keys.size();) {
      auto e = keys.find('\n', b);
      if (e == std::string::npos) e = keys.size();
      list += " " + keys.substr(b, e - b);
      b = e + 1;
    }
    g.cli(src, "MIGRATE 127.0.0.1 " + std::to_string(to) + " \"\" 0 5000 KEYS" + list);
  }
  const auto id = g.node_id(dst);
  for (const auto p : g.master_ports()) g.cli(g.index_of(p), "CLUSTER SETSLOT " + s + " NODE " + id);
  BOOST_TEST_REQUIRE(wait_until([&] {
    for (std::size_t i = 0; i < g.size(); ++i)
      if (g.slot_owner(slot, i) != to) return false;
    return true;
  }, std::chrono::seconds(30)));
  g.wait_ok();
}

}  // namespace chronopool::durable::test

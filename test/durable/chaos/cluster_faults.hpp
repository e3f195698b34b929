// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The chaos harness's Redis in cluster mode (durable_chaos --cluster): a
// Redis Cluster of 3 masters with a replica each on loopback, and the
// faults that make sense on it: a master killed with kill -9 (its replica
// is promoted, the killed node then restarted as a replica), a master
// pausing its clients without closing them, every node cutting its client
// connections.
#pragma once

#include "cluster_group.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace chronopool::durable::chaos {

class chaos_cluster {
 public:
  /// Starts the cluster and waits until it is up (cluster_group throws if
  /// not); `name_space` of `partitions` partitions is the fleet's.
  chaos_cluster(const std::string& redis_server_executable, const std::string& name_space,
                std::uint32_t partitions);

  /// The worker's Redis target (see redis_target in worker.hpp): every
  /// node as a seed.
  std::string target() const;
  /// The hash slots of the namespace's partitions (one per partition).
  const std::vector<std::uint16_t>& slots() const noexcept { return slots_; }

  /// kill -9 of the master serving `slot`; waits (up to `limit` each) until
  /// a surviving node names another master for it, then starts the killed
  /// node again and waits until it is a replica in sync and every node
  /// reports cluster_state:ok. What went wrong, or ""; `what` says which
  /// node was killed and which was promoted.
  std::string fail_over(std::uint16_t slot, std::string& what, std::chrono::milliseconds limit);
  /// CLIENT PAUSE of the master serving `slot` for `ms`: its connections
  /// stay open and silent, as through a stalled network. Returns at once.
  /// What went wrong, or "".
  std::string pause_master(std::uint16_t slot, std::int64_t ms, std::string& what);
  /// CLIENT KILL of every normal and pub/sub connection on every node.
  /// What went wrong, or "".
  std::string cut_all_connections();

 private:
  // A running node to ask about the cluster, other than `not_this`.
  std::size_t witness(std::size_t not_this = static_cast<std::size_t>(-1)) const;

  test::cluster_group group_;
  std::vector<std::uint16_t> slots_;
};

}  // namespace chronopool::durable::chaos

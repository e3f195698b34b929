// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A Redis Cluster on loopback for tests: masters (and replicas) started as
// `redis-server --cluster-enabled yes` on free ports, each with its own
// directory under one temporary directory, joined by `redis-cli --cluster
// create`. Stopped and removed by the destructor, unless released (a
// cluster meant to outlive the process that started it: the CTest fixture).
#pragma once

#include "redis_server.hpp"

#include <chronopool/durable/redis_options.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable::test {

class tls_certificates;

class cluster_group {
 public:
  /// Starts `masters` masters with `replicas_per_master` replicas each,
  /// creates the cluster and waits until every node reports
  /// cluster_state:ok (and every replica is in sync). Throws
  /// std::runtime_error, with the output or logs, when it does not come up.
  /// A non-empty `password` is every node's requirepass (and masterauth),
  /// and goes into client_options() and node_options(). With `tls`, every
  /// node speaks TLS only (its clients, its cluster bus, its replication),
  /// with the server certificate of `tls`, which must outlive the group;
  /// the options then turn TLS on with its CA. `extra_args` go to every
  /// node after the group's own (which turn persistence off), so they can
  /// turn it back on (a benchmark's `--appendonly yes`).
  explicit cluster_group(const std::string& redis_server_executable, std::size_t masters = 3,
                         std::size_t replicas_per_master = 0, std::string password = {},
                         const tls_certificates* tls = nullptr, std::vector<std::string> extra_args = {});
  /// Where a cluster that outlives this process lives: its nodes are
  /// started in their own sessions (not killed with their launcher), each
  /// in a directory under `dir`, which must exist.
  struct detached {
    std::filesystem::path dir;
  };
  /// As above, with `masters` masters and no replicas, placed as `where`
  /// says; call release() once it is up to leave it running.
  cluster_group(const std::string& redis_server_executable, std::size_t masters, detached where);
  /// Stops every node and removes the directory (neither after release()).
  ~cluster_group();
  cluster_group(const cluster_group&) = delete;
  cluster_group& operator=(const cluster_group&) = delete;

  /// Options a client uses: every node as a seed, in the order started.
  redis_options client_options() const;
  /// Options of a plain connection to node `i` (no Cluster).
  redis_options node_options(std::size_t i) const;
  std::size_t size() const noexcept { return nodes_.size(); }
  std::uint16_t port(std::size_t i) const { return nodes_.at(i)->port(); }
  /// The node whose port is `port`: its index.
  std::size_t index_of(std::uint16_t port) const;
  /// `redis-cli -p <port of node i> args...`: its output, trimmed.
  std::string cli(std::size_t i, const std::string& args) const;
  /// The node ID of node `i` (CLUSTER MYID).
  std::string node_id(std::size_t i) const;
  /// The port of the master serving `slot` as node `asked` sees it, 0 if none.
  std::uint16_t slot_owner(std::uint16_t slot, std::size_t asked = 0) const;
  /// The ports of the masters as node `asked` sees them, by their first slot.
  std::vector<std::uint16_t> master_ports(std::size_t asked = 0) const;
  /// Polls until every running node reports cluster_state:ok and agrees on
  /// `slot`'s owner with node `asked` (when given); throws after `limit`.
  void wait_ok(std::chrono::milliseconds limit = std::chrono::seconds(30)) const;
  /// kill -9 of node `i`: a crash.
  void kill9(std::size_t i) { nodes_.at(i)->kill9(); }
  /// Starts node `i` again after kill9(i), on its port and directory: its
  /// nodes file brings it back into the cluster (a master whose slots were
  /// taken over meanwhile rejoins as a replica of the new owner). Nodes keep
  /// no data on disk, so it comes back empty and syncs from its master.
  void start(std::size_t i) { nodes_.at(i)->start(); }
  bool running(std::size_t i) const { return nodes_.at(i)->running(); }
  /// Forgets every node without stopping it, and keeps the directory: the
  /// running nodes' pids, for whoever stops them later. The group is of no
  /// further use but to be destroyed.
  std::vector<pid_t> release();

 private:
  cluster_group(const std::string& exe, std::size_t masters, std::size_t replicas_per_master, std::string password,
                const tls_certificates* tls, std::vector<std::string> extra_args, const detached* where);
  std::string cli_args() const;  // redis-cli's -a and --tls, when needed
  redis_options secured(redis_options o) const;

  std::filesystem::path dir_;
  bool owns_dir_ = true;  // false: detached::dir, or released
  std::string password_;
  std::string ca_file_;  // empty: plain TCP
  std::vector<std::unique_ptr<redis_server>> nodes_;
};

}  // namespace chronopool::durable::test

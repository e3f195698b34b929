// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A Redis Sentinel set-up on loopback for tests: one master, one replica
// and three sentinels (redis-server --sentinel), each on a free port, with
// their configs in a temporary directory. It can force a failover.
#pragma once

#include "redis_server.hpp"

#include <chronopool/durable/redis_options.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable::test {

class sentinel_group {
 public:
  /// Starts the master, the replica (and waits until it is in sync), then the
  /// sentinels (and waits until they know the master). Throws
  /// std::runtime_error, with the servers' logs, when something does not
  /// come up in time.
  explicit sentinel_group(const std::string& redis_server_executable, std::string master_name = "chronopool-main");
  /// Stops everything and removes the directory.
  ~sentinel_group();
  sentinel_group(const sentinel_group&) = delete;
  sentinel_group& operator=(const sentinel_group&) = delete;

  /// Options a client uses: the three sentinels and the master name.
  redis_options client_options() const;
  const std::string& master_name() const noexcept { return master_name_; }
  /// The port of the master the first sentinel names now.
  std::uint16_t master_port() const;
  /// The data servers' ports (the first started as the master).
  std::uint16_t server_port(std::size_t i) const { return servers_.at(i)->port(); }
  /// SENTINEL FAILOVER on the first sentinel, retried while it has no
  /// replica it can promote yet (bounded by `limit`). Returns at once.
  void failover(std::chrono::milliseconds limit = std::chrono::seconds(20));
  /// kill -9 of the first data server (the master as started): a crash.
  void kill_first_server() { servers_.at(0)->kill9(); }
  /// `redis-cli -p port args...`: its output, trimmed.
  static std::string cli(std::uint16_t port, const std::string& args);

 private:
  std::filesystem::path dir_;
  std::string master_name_;
  std::vector<std::unique_ptr<redis_server>> servers_;    // master, replica
  std::vector<std::unique_ptr<redis_server>> sentinels_;  // three
};

}  // namespace chronopool::durable::test

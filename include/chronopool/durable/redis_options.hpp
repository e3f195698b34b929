// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Where and how the durable scheduler talks to Redis.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace chronopool::durable {

/// TLS to Redis (redis-server's `tls-port`), through boost::asio::ssl and
/// OpenSSL. File names are checked when the scheduler is constructed: one
/// that cannot be read is refused with std::invalid_argument naming it.
struct tls_options {
  /// Off: plain TCP, and the other members are ignored.
  bool enabled = false;
  /// PEM file of the certificate authorities that may sign the server's
  /// certificate. With neither ca_file nor ca_dir, OpenSSL's default paths
  /// (the system's trust store) are used.
  std::string ca_file;
  /// A directory of hashed CA certificates (`openssl rehash`), as well as or
  /// instead of ca_file.
  std::string ca_dir;
  /// Verify the server's certificate chain and name. Turning it off accepts
  /// any server, i.e. anyone in the path: for tests only.
  bool verify_peer = true;
  /// The name the server's certificate must carry (DNS name or IP address),
  /// also sent as SNI when it is a name. Empty: redis_options::host.
  std::string server_name;
  /// PEM client certificate (chain) for servers that require one
  /// (`tls-auth-clients yes`); empty: none. Needs key_file.
  std::string cert_file;
  /// PEM private key of cert_file, unencrypted; empty: none. Needs cert_file.
  std::string key_file;
};

/// One Redis Sentinel to ask where the master is.
struct sentinel_address {
  std::string host;            ///< the sentinel's host name or address
  std::uint16_t port = 26379;  ///< the sentinel's TCP port
};

/// Redis Sentinel: the master is found by asking the sentinels
/// (`SENTINEL get-master-addr-by-name`), in the order listed, and checked
/// with `ROLE`. On a failover (`+switch-master` from a sentinel, the
/// connection lost, or a `READONLY` reply) the connection is closed and the
/// next connect asks again. Off while `sentinels` is empty; then
/// redis_options::host and port are used.
struct sentinel_options {
  /// The sentinels; non-empty turns Sentinel on (and master_name must be set).
  std::vector<sentinel_address> sentinels;
  /// The name the sentinels monitor the master under (`sentinel monitor <name> ...`).
  std::string master_name;
  /// The sentinels' own ACL user, if they require one (not the master's).
  std::string username;
  /// The sentinels' own password (`requirepass` in sentinel.conf); empty:
  /// no AUTH. Never logged.
  std::string password;
};

/// One node of a Redis Cluster to start discovery from.
struct cluster_node {
  std::string host;           ///< the node's host name or address
  std::uint16_t port = 6379;  ///< the node's TCP port (not its cluster bus port)
};

/// Redis Cluster: the slot map is read (`CLUSTER SLOTS`) from the first seed
/// that answers, one connection is kept per master, and each command goes
/// to the master that serves the hash slot of its key (`-MOVED` and `-ASK`
/// redirections are followed). Off while `seeds` is empty; then
/// redis_options::host and port are used. Cannot be combined with Sentinel.
/// TLS, username and password apply to every node.
struct cluster_options {
  /// Some nodes of the cluster, masters or replicas; non-empty turns Cluster on.
  std::vector<cluster_node> seeds;
  /// How often one command may be redirected (`-MOVED`, `-ASK`) before it
  /// fails with error::too_many_redirects; at least 1.
  unsigned max_redirects = 5;
};

/// Connection settings. The password is sent in AUTH and never logged or
/// put into an error message.
struct redis_options {
  std::string host = "127.0.0.1";  ///< the Redis server's host name or address
  std::uint16_t port = 6379;       ///< the Redis server's TCP port
  /// ACL user name (Redis 6+); empty means AUTH with the password only.
  std::string username;
  /// Empty means no AUTH.
  std::string password;
  /// TCP connect plus AUTH must finish within this.
  std::chrono::milliseconds connect_timeout{2000};
  /// Every request must be answered within this, counted from when it was
  /// queued; when one is late the connection is closed (a pipelined
  /// connection cannot skip one reply) and every outstanding request fails.
  std::chrono::milliseconds request_timeout{5000};
  /// TLS; off by default. connect_timeout covers the TLS handshake too.
  tls_options tls;
  /// Sentinel; off by default. TLS settings apply to the sentinels too.
  sentinel_options sentinel;
  /// Redis Cluster; off by default. Not together with sentinel.
  cluster_options cluster;
};

}  // namespace chronopool::durable

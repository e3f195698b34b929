// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Where and how the durable scheduler talks to Redis.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace chronopool::durable {

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
};

}  // namespace chronopool::durable

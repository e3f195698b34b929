// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Redis Cluster's hash slots: which of the 16384 slots a key belongs to,
// and which argument of a command is the key that routes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::detail {

/// The number of hash slots of a Redis Cluster.
inline constexpr std::uint16_t cluster_slots = 16384;

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection, no
/// final XOR), the checksum the Redis Cluster specification hashes keys with.
std::uint16_t crc16_xmodem(std::string_view data) noexcept;

/// The hash slot of `key`: CRC16 of its hash tag (the text between the
/// first '{' and the first '}' after it, when that text is not empty),
/// else of the whole key, modulo 16384.
std::uint16_t key_slot(std::string_view key) noexcept;

/// The argument that routes `args` (a command and its arguments): for
/// FCALL, FCALL_RO, EVAL, EVALSHA and their _RO forms the first key after
/// numkeys (none when numkeys is 0); none for commands without a key
/// (PING, SUBSCRIBE, PUBLISH, FUNCTION, CLUSTER, INFO, TIME, ...); else
/// the first argument.
std::optional<std::string_view> routing_key(const std::vector<std::string>& args);

}  // namespace chronopool::durable::detail

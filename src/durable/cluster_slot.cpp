// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/durable/detail/cluster_slot.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace chronopool::durable::detail {
namespace {

// The CRC of every byte value, built once at compile time: shift the byte
// through the top of a 16-bit register, XOR-ing the polynomial whenever a
// 1 falls out.
constexpr std::array<std::uint16_t, 256> make_crc16_table() {
  std::array<std::uint16_t, 256> t{};
  for (unsigned b = 0; b < 256; ++b) {
    unsigned crc = b << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000u) ? (crc << 1) ^ 0x1021u : crc << 1;
    t[b] = static_cast<std::uint16_t>(crc & 0xffffu);
  }
  return t;
}

constexpr auto crc16_table = make_crc16_table();

bool same_word(std::string_view a, std::string_view upper) {
  return a.size() == upper.size() && std::equal(a.begin(), a.end(), upper.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == y;
         });
}

// Commands that carry no key: they are sent to any master.
bool keyless(std::string_view name) {
  static constexpr std::string_view names[] = {
      "PING",   "ECHO",    "TIME",   "INFO",    "SUBSCRIBE", "UNSUBSCRIBE", "PSUBSCRIBE", "PUNSUBSCRIBE",
      "PUBLISH", "PUBSUB", "FUNCTION", "SCRIPT", "CLUSTER",   "CONFIG",      "CLIENT",     "COMMAND",
      "DBSIZE", "FLUSHALL", "FLUSHDB", "ROLE",    "AUTH",      "HELLO",       "ASKING",     "READONLY",
      "READWRITE", "LASTSAVE", "SAVE", "BGSAVE", "MULTI", "EXEC", "DISCARD", "WAIT", "RANDOMKEY", "SCAN",
      "KEYS", "SELECT", "MEMORY", "SLOWLOG", "LATENCY", "DEBUG", "SHUTDOWN", "QUIT", "RESET"};
  return std::any_of(std::begin(names), std::end(names), [&](std::string_view n) { return same_word(name, n); });
}

}  // namespace

std::uint16_t crc16_xmodem(std::string_view data) noexcept {
  unsigned crc = 0;
  for (const char ch : data) {
    const auto byte = static_cast<unsigned char>(ch);
    crc = ((crc << 8) ^ static_cast<unsigned>(crc16_table[((crc >> 8) ^ byte) & 0xffu])) & 0xffffu;
  }
  return static_cast<std::uint16_t>(crc);
}

std::uint16_t key_slot(std::string_view key) noexcept {
  const auto open = key.find('{');
  if (open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return static_cast<std::uint16_t>(crc16_xmodem(key) % cluster_slots);
}

std::optional<std::string_view> routing_key(const std::vector<std::string>& args) {
  if (args.size() < 2) return std::nullopt;
  const std::string_view name = args[0];
  if (same_word(name, "FCALL") || same_word(name, "FCALL_RO") || same_word(name, "EVAL") ||
      same_word(name, "EVAL_RO") || same_word(name, "EVALSHA") || same_word(name, "EVALSHA_RO")) {
    // <name> <function or script> <numkeys> <key>...
    if (args.size() < 4) return std::nullopt;
    std::uint64_t numkeys = 0;
    const auto& n = args[2];
    const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), numkeys);
    if (ec != std::errc{} || p != n.data() + n.size() || numkeys == 0) return std::nullopt;
    return std::string_view(args[3]);
  }
  if (keyless(name)) return std::nullopt;
  return std::string_view(args[1]);
}

}  // namespace chronopool::durable::detail

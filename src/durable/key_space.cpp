// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See key_space.hpp; the layout is library.lua's, "Partitions".
#include <chronopool/durable/detail/key_space.hpp>

#include <charconv>

namespace chronopool::durable::detail {

key_space::key_space(std::string_view name_space)
    : prefix_("cp:{" + std::string(name_space) + "}:"), channel_(prefix_ + "wake") {}

key_space::key_space(std::string_view name_space, std::uint32_t partition, std::uint32_t partitions)
    : key_space(name_space) {
  // Namespaces hold no braces, so "<ns>{<k>" is no namespace's own tag.
  if (partitions > 1) prefix_ = "cp:{" + std::string(name_space) + "{" + std::to_string(partition) + "}:";
}

std::uint32_t partition_of(std::string_view id, std::uint32_t partitions) noexcept {
  if (partitions <= 1) return 0;
  const std::string_view base = id.substr(0, id.find('@'));
  std::uint32_t h = 2166136261u;
  for (const char c : base) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h % partitions;
}

namespace_layout::namespace_layout(std::string_view name_space, std::uint32_t partitions) : meta_(name_space) {
  if (partitions == 0) partitions = 1;
  parts_.reserve(partitions);
  for (std::uint32_t k = 0; k < partitions; ++k) parts_.emplace_back(name_space, k, partitions);
}

std::optional<std::uint32_t> wake_partition(const redis_value& message) {
  // {"message", channel, payload}
  if (!message.is_array() || message.elements.size() != 3 || !message.elements[2].is_text()) return std::nullopt;
  const std::string_view payload = message.elements[2].text();
  const auto space = payload.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::uint32_t k = 0;
  const auto [p, ec] = std::from_chars(payload.data(), payload.data() + space, k);
  if (ec != std::errc{} || p != payload.data() + space) return std::nullopt;
  return k;
}

}  // namespace chronopool::durable::detail

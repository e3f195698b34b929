// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where a namespace's keys are: its partitions' prefixes, the partition an
// id lives in, the wake channel (src/durable/functions/library.lua,
// "Partitions").
#pragma once

#include <chronopool/durable/detail/redis_value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::detail {

/// Key names of one partition of a namespace: "cp:{<ns>}:" + suffix for
/// the one partition of an unpartitioned namespace (and, of any namespace,
/// its partition count), "cp:{<ns>{<k>}:" + suffix for partition k of
/// several: a hash tag of its own, so a cluster can place it on any master.
class key_space {
 public:
  /// The unpartitioned prefix "cp:{<ns>}:".
  explicit key_space(std::string_view name_space);
  /// Partition @p partition of a namespace with @p partitions of them (one:
  /// the unpartitioned prefix).
  key_space(std::string_view name_space, std::uint32_t partition, std::uint32_t partitions);
  const std::string& prefix() const noexcept { return prefix_; }
  /// The key every function call names: it routes the call to this partition.
  std::string due_key() const { return prefix_ + "due"; }
  /// The namespace's one wake channel, "cp:{<ns>}:wake", whichever partition.
  const std::string& wake_channel() const noexcept { return channel_; }

 private:
  std::string prefix_;
  std::string channel_;
};

/// The partition of @p partitions that schedule (or fire) @p id lives in:
/// the 32-bit FNV-1a hash of the id's bytes before its first '@' (all of
/// them without one), modulo @p partitions. Part of the data layout: it must
/// never change. A fire id "<id>@<due>" so names its schedule's partition.
std::uint32_t partition_of(std::string_view id, std::uint32_t partitions) noexcept;

/// Every partition of a namespace.
class namespace_layout {
 public:
  namespace_layout(std::string_view name_space, std::uint32_t partitions);
  /// How many partitions (at least 1).
  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(parts_.size()); }
  const key_space& partition(std::uint32_t k) const { return parts_.at(k); }
  /// The partition schedule (or fire) @p id lives in.
  std::uint32_t index_of(std::string_view id) const noexcept { return partition_of(id, size()); }
  const key_space& of(std::string_view id) const { return parts_[index_of(id)]; }
  /// The unpartitioned prefix: the partition count, the wake channel.
  const key_space& meta() const noexcept { return meta_; }

 private:
  key_space meta_;
  std::vector<key_space> parts_;
};

/// The partition a message on the wake channel names: "<k> <ms>" from
/// partition k of several; a bare "<ms>" (one partition) or anything else:
/// nullopt, i.e. any partition may have something new.
std::optional<std::uint32_t> wake_partition(const redis_value& message);

}  // namespace chronopool::durable::detail

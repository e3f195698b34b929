// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "cluster_faults.hpp"

#include <chronopool/durable/detail/cluster_slot.hpp>
#include <chronopool/durable/detail/key_space.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>

namespace chronopool::durable::chaos {

namespace {

// Polls `ok` every 100 ms until it holds (true) or `limit` passed (false).
template <class Pred>
bool cluster_chaos_poll(Pred ok, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// redis-cli prints an integer reply as its digits when not on a terminal.
bool cluster_chaos_is_integer(const std::string& reply) {
  return !reply.empty() && std::all_of(reply.begin(), reply.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

chaos_cluster::chaos_cluster(const std::string& exe, const std::string& name_space, std::uint32_t partitions)
    : group_(exe, 3, 1) {
  const detail::namespace_layout layout(name_space, partitions);
  for (std::uint32_t k = 0; k < layout.size(); ++k) slots_.push_back(detail::key_slot(layout.partition(k).due_key()));
}

std::string chaos_cluster::target() const {
  std::string out = "cluster:";
  for (std::size_t i = 0; i < group_.size(); ++i) out += (i ? "," : "") + std::to_string(group_.port(i));
  return out;
}

std::size_t chaos_cluster::witness(std::size_t not_this) const {
  for (std::size_t i = 0; i < group_.size(); ++i)
    if (i != not_this && group_.running(i)) return i;
  throw std::runtime_error("chaos_cluster: no running node");
}

std::string chaos_cluster::fail_over(std::uint16_t slot, std::string& what, std::chrono::milliseconds limit) {
  try {
    const auto victim_port = group_.slot_owner(slot, witness());
    if (victim_port == 0) return fmt::format("no master serves slot {}", slot);
    const auto victim = group_.index_of(victim_port);
    const auto since = [start = std::chrono::steady_clock::now()] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    };
    group_.kill9(victim);
    // A master marked failed is no owner to slot_owner: the answer changes
    // once the replica has won its election (after the node timeout).
    const auto asked = witness(victim);
    std::uint16_t promoted = 0;
    if (!cluster_chaos_poll([&] {
          promoted = group_.slot_owner(slot, asked);
          return promoted != 0 && promoted != victim_port;
        }, limit))
      return fmt::format("no replica took slot {} over from :{} within {} ms", slot, victim_port, limit.count());
    const auto promoted_after = since();
    group_.start(victim);
    if (!cluster_chaos_poll([&] {
          const auto info = group_.cli(victim, "INFO replication");
          return info.find("role:slave") != std::string::npos &&
                 info.find("master_link_status:up") != std::string::npos;
        }, limit))
      return fmt::format(":{} did not rejoin as a replica in sync within {} ms", victim_port, limit.count());
    group_.wait_ok(limit);
    what = fmt::format(":{} killed, :{} promoted {} ms later, :{} back as its replica in sync after {} ms",
                       victim_port, promoted, promoted_after, victim_port, since());
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string chaos_cluster::pause_master(std::uint16_t slot, std::int64_t ms, std::string& what) {
  try {
    const auto port = group_.slot_owner(slot, witness());
    if (port == 0) return fmt::format("no master serves slot {}", slot);
    const auto reply = group_.cli(group_.index_of(port), fmt::format("CLIENT PAUSE {} ALL", ms));
    if (reply != "OK") return fmt::format("CLIENT PAUSE on :{}: {}", port, reply);
    what = fmt::format(":{} paused {} ms", port, ms);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string chaos_cluster::cut_all_connections() {
  std::string problem;
  for (std::size_t i = 0; i < group_.size(); ++i) {
    if (!group_.running(i)) continue;
    for (const char* type : {"normal", "pubsub"}) {
      const auto reply = group_.cli(i, fmt::format("CLIENT KILL TYPE {}", type));
      if (!cluster_chaos_is_integer(reply))
        problem += fmt::format("{}CLIENT KILL TYPE {} on :{}: {}", problem.empty() ? "" : "; ", type,
                               group_.port(i), reply);
    }
  }
  return problem;
}

}  // namespace chronopool::durable::chaos

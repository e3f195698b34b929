// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The partitions of a durable scheduler's namespace (library.lua,
// "Partitions"): their count checked against Redis's, the claim loop's
// rotation over them and their wake-ups, and listings merged across them.
// See scheduler_impl.hpp for who owns what.
#include "scheduler_impl.hpp"

#include <chronopool/durable/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace chronopool::durable::detail {

namespace asio = boost::asio;
using boost::system::error_code;

asio::awaitable<error_code> scheduler_impl::check_partitions() {
  auto [ec, v] = co_await cmd_.async_execute(partitions_call(keys_.meta(), keys_.size()),
                                             asio::as_tuple(asio::use_awaitable));
  std::int64_t stored = 0;
  if (!ec) ec = parse_integer(v, stored);
  if (!ec && stored != static_cast<std::int64_t>(keys_.size()))
    ec = make_error_code(error::partitions_mismatch,
                         fmt::format("namespace \"{}\" is stored with {} partition{}; scheduler_options.partitions is {}",
                                     options_.name_space, stored, stored == 1 ? "" : "s", keys_.size()));
  co_return ec;
}

void scheduler_impl::wake_partitions(const redis_value& message) {
  const std::optional<std::uint32_t> k = wake_partition(message);
  if (k && *k < parts_.size())
    parts_[*k].woken = true;
  else
    for (auto& p : parts_) p.woken = true;
  wake_claims();
}

void scheduler_impl::wake_all_partitions() {
  for (auto& p : parts_) p.woken = true;
  wake_claims();
}

std::optional<std::uint32_t> scheduler_impl::ready_partition(clock::time_point now) {
  const auto n = static_cast<std::uint32_t>(parts_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t k = (next_partition_ + i) % n;
    if (parts_[k].woken || parts_[k].next_claim <= now) {
      next_partition_ = (k + 1) % n;
      return k;
    }
  }
  return std::nullopt;
}

scheduler_impl::clock::time_point scheduler_impl::earliest_claim() const {
  clock::time_point t = clock::time_point::max();
  for (const auto& p : parts_) t = std::min(t, p.next_claim);
  return t;
}

void scheduler_impl::list_schedules(schedule_query q, list_handler h) {
  auto work = track(h, work_);
  if (closing_) {
    complete_later(work_, std::move(h), std::move(work), make_error_code(error::shut_down), schedule_page{});
    return;
  }
  asio::post(ctl_, [this, q = std::move(q), h = std::move(h), work = std::move(work)]() mutable {
    spawn(list_op(std::move(q), std::move(h), std::move(work)));
  });
}

void scheduler_impl::list_dead(std::size_t limit, list_dead_handler h) {
  auto work = track(h, work_);
  if (closing_) {
    complete_later(work_, std::move(h), std::move(work), make_error_code(error::shut_down), std::vector<dead_letter>{});
    return;
  }
  asio::post(ctl_, [this, limit, h = std::move(h), work = std::move(work)]() mutable {
    spawn(list_dead_op(limit, std::move(h), std::move(work)));
  });
}

// Each partition lists its first q.limit ids after q.after; merged in id
// order, they are complete up to the smallest cursor a partition returned
// (past it, that partition has ids not read yet).
asio::awaitable<void> scheduler_impl::list_op(schedule_query q, list_handler h, asio::any_completion_executor work) {
  std::vector<schedule_summary> merged;
  std::optional<std::string> complete_to;
  error_code ec;
  for (std::uint32_t k = 0; k < keys_.size() && !ec; ++k) {
    auto [e, v] = co_await exec(list_call(keys_.partition(k), q.prefix, q.after, q.limit));
    schedule_page page;
    ec = e ? e : parse_list(v, page);
    if (ec) break;
    if (!page.next_cursor.empty() && (!complete_to || page.next_cursor < *complete_to))
      complete_to = std::move(page.next_cursor);
    for (auto& s : page.schedules) merged.push_back(std::move(s));
  }
  schedule_page out;
  if (!ec) {
    // std::string compares bytes as unsigned char, as Redis orders ids.
    std::sort(merged.begin(), merged.end(),
              [](const schedule_summary& a, const schedule_summary& b) { return a.id < b.id; });
    if (complete_to)
      merged.erase(std::upper_bound(merged.begin(), merged.end(), *complete_to,
                                    [](const std::string& c, const schedule_summary& s) { return c < s.id; }),
                   merged.end());
    if (merged.size() > q.limit) {
      merged.resize(q.limit);
      out.next_cursor = merged.back().id;
    } else if (complete_to) {
      out.next_cursor = *complete_to;
    }
    out.schedules = std::move(merged);
  }
  complete(std::move(h), std::move(work), ec, std::move(out));
}

// Each partition's `limit` oldest dead letters hold the namespace's.
asio::awaitable<void> scheduler_impl::list_dead_op(std::size_t limit, list_dead_handler h,
                                                   asio::any_completion_executor work) {
  std::vector<dead_letter> merged;
  error_code ec;
  for (std::uint32_t k = 0; k < keys_.size() && !ec; ++k) {
    auto [e, v] = co_await exec(dead_list_call(keys_.partition(k), limit));
    std::vector<dead_letter> page;
    ec = e ? e : parse_dead_list(v, page);
    for (auto& d : page) merged.push_back(std::move(d));
  }
  if (ec) {
    merged.clear();
  } else {
    // Oldest first, as each partition lists them (ties by fire id, as Redis orders equal scores).
    std::sort(merged.begin(), merged.end(), [](const dead_letter& a, const dead_letter& b) {
      return a.dead_lettered_at != b.dead_lettered_at ? a.dead_lettered_at < b.dead_lettered_at
                                                      : a.fire_id < b.fire_id;
    });
    if (merged.size() > limit) merged.resize(limit);
  }
  complete(std::move(h), std::move(work), ec, std::move(merged));
}

}  // namespace chronopool::durable::detail

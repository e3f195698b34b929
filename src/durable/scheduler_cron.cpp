// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Cron schedules and bulk upserts of the durable scheduler. Lua has no
// calendar, so a cron schedule's instants are computed here, with the
// library's one cron implementation (chronopool::cron_schedule: its parser,
// time zones and DST rules), from Redis's clock: creation reads TIME and
// takes the first instant after it; the process finishing a fire sends the
// instants after the fire's due and after a lower bound of Redis's now, and
// the library chooses among them with Redis's TIME (library.lua, "Cron").
// See scheduler_impl.hpp for who owns what.
#include "scheduler_impl.hpp"

#include <chronopool/cron_schedule.hpp>
#include <chronopool/durable/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace chronopool::durable::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

using sys_time = std::chrono::system_clock::time_point;

// The first instant of `s` strictly after `ms`, in whole milliseconds (cron
// instants are whole seconds); max_time_ms when there is none.
std::int64_t instant_after(const cron_schedule& s, std::int64_t ms) {
  if (ms >= max_time_ms) return max_time_ms;
  const std::optional<sys_time> t = s.next_after(to_time_point(ms));
  if (!t) return max_time_ms;
  return std::min(clamp_time_ms(*t), max_time_ms);
}

upsert_outcome outcome_of(const std::string& text) {
  if (text == "created") return upsert_outcome::created;
  if (text == "replaced") return upsert_outcome::replaced;
  if (text == "updated") return upsert_outcome::updated;
  if (text == "unchanged") return upsert_outcome::unchanged;
  return upsert_outcome::failed;
}

// The library's error text without Redis's " script: ..." suffix.
std::string library_text(std::string text) {
  if (const auto at = text.find(" script: "); at != std::string::npos) text.resize(at);
  return text;
}

// Fills a cron request's first instant (the first after `now_ms`, Redis's
// TIME) and the one after it; false when the expression or zone no longer
// parses (they were checked when the request was made).
bool place_cron(put_request& r, std::int64_t now_ms) {
  try {
    const cron_schedule s(r.cron, r.time_zone);
    r.absolute = true;
    r.at_ms = instant_after(s, now_ms);
    r.cron_next_ms = instant_after(s, r.at_ms);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::optional<cron_plan> scheduler_impl::plan_for(const running_fire& st) const {
  const claimed_fire& f = st.fire;
  if (f.cron.empty()) return std::nullopt;
  try {
    const cron_schedule s(f.cron, f.time_zone);
    // Redis's now when the ack arrives is at least its time at the claim
    // plus what has passed here since the claim's reply came.
    const auto since =
        std::chrono::floor<std::chrono::milliseconds>(clock::now() - st.claimed_at).count();
    const std::int64_t now_low = f.claimed_ms + std::max<std::int64_t>(since, 0);
    cron_plan p;
    p.after_due = instant_after(s, f.due_ms);
    p.after_after_due = instant_after(s, p.after_due);
    p.after_now = instant_after(s, now_low);
    p.after_after_now = instant_after(s, p.after_now);
    return p;
  } catch (const std::exception&) {
    // Stored by a process whose tz database knew the zone: the library then
    // moves the schedule on to its cnext (library.lua, "Cron").
    return std::nullopt;
  }
}

std::vector<std::int64_t> scheduler_impl::cron_instants(const cron_backfill_ask& ask, std::int64_t from_ms,
                                                        std::int64_t to_ms) {
  std::vector<std::int64_t> out;
  const cron_schedule s(ask.cron, ask.time_zone);
  const std::int64_t end = std::min(to_ms, ask.due_ms);  // the pending one and later run by themselves
  // Instants at or after from_ms: the first strictly after from_ms - 1.
  for (std::int64_t t = instant_after(s, from_ms - 1); t < end && out.size() <= max_backfill;
       t = instant_after(s, t))
    out.push_back(t);
  return out;
}

void scheduler_impl::put_cron(put_request r, put_handler h) {
  r.failure = r.options.failure.value_or(options_.failure);
  auto work = track(h, work_);
  if (closing_) {
    complete_later(work_, std::move(h), std::move(work), make_error_code(error::shut_down),
                   std::chrono::system_clock::time_point{});
    return;
  }
  asio::post(ctl_, [this, r = std::move(r), h = std::move(h), work = std::move(work)]() mutable {
    spawn(put_cron_op(std::move(r), std::move(h), std::move(work)));
  });
}

asio::awaitable<void> scheduler_impl::put_cron_op(put_request r, put_handler h, asio::any_completion_executor work) {
  // The clock of the Redis that keeps the schedule (in a cluster, its
  // partition's master).
  const key_space& ks = keys_.of(r.id);
  auto [ec, v] = co_await exec(time_call(ks));
  std::int64_t now_ms = 0;
  if (!ec) ec = parse_integer(v, now_ms);
  std::int64_t due_ms = 0;
  if (!ec && !place_cron(r, now_ms)) ec = make_error_code(error::protocol_error);
  if (!ec) {
    auto [ec2, v2] = co_await exec(put_call(ks, r));
    ec = ec2 ? ec2 : parse_put(v2, due_ms);
  }
  complete(std::move(h), std::move(work), ec, ec ? std::chrono::system_clock::time_point{} : to_time_point(due_ms));
}

void scheduler_impl::upsert(std::vector<put_request> requests, std::vector<std::size_t> sent,
                            std::vector<upsert_result> results, upsert_handler h) {
  for (auto& r : requests) r.failure = r.options.failure.value_or(options_.failure);
  auto work = track(h, work_);
  if (closing_) {
    const error_code ec = make_error_code(error::shut_down);
    for (const std::size_t i : sent) results[i].error = ec.message();
    complete_later(work_, std::move(h), std::move(work), ec, std::move(results));
    return;
  }
  asio::post(ctl_, [this, requests = std::move(requests), sent = std::move(sent), results = std::move(results),
                    h = std::move(h), work = std::move(work)]() mutable {
    spawn(upsert_op(std::move(requests), std::move(sent), std::move(results), std::move(h), std::move(work)));
  });
}

asio::awaitable<void> scheduler_impl::upsert_op(std::vector<put_request> requests, std::vector<std::size_t> sent,
                                                std::vector<upsert_result> results, upsert_handler h,
                                                asio::any_completion_executor work) {
  error_code ec;
  // Each call writes one partition: the requests grouped by partition, in
  // their order within each (results[sent[k]] still names each one's spec).
  std::vector<std::uint32_t> part(requests.size());
  if (keys_.size() > 1) {
    std::vector<std::size_t> order(requests.size());
    for (std::size_t k = 0; k < requests.size(); ++k) {
      order[k] = k;
      part[k] = keys_.index_of(requests[k].id);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return part[a] < part[b]; });
    std::vector<put_request> by_partition;
    std::vector<std::size_t> sent_by_partition;
    by_partition.reserve(requests.size());
    sent_by_partition.reserve(requests.size());
    for (const std::size_t k : order) {
      by_partition.push_back(std::move(requests[k]));
      sent_by_partition.push_back(sent[k]);
    }
    requests = std::move(by_partition);
    sent = std::move(sent_by_partition);
    std::stable_sort(part.begin(), part.end());
  }
  // Cron schedules start at their first instant after Redis's TIME: one
  // read for the whole request (of the first cron schedule's partition).
  const auto cron = std::find_if(requests.begin(), requests.end(),
                                 [](const put_request& r) { return r.kind == schedule_kind::cron; });
  if (cron != requests.end()) {
    auto [ec1, v] = co_await exec(time_call(keys_.of(cron->id)));
    std::int64_t now_ms = 0;
    ec = ec1 ? ec1 : parse_integer(v, now_ms);
    for (std::size_t k = 0; !ec && k < requests.size(); ++k)
      if (requests[k].kind == schedule_kind::cron && !place_cron(requests[k], now_ms))
        ec = make_error_code(error::protocol_error);
  }
  // Calls of put_many_batch schedules, up to upsert_window of them in flight
  // on the pipelined connection, so Redis works on one while the next is
  // built and sent and the last reply read. All on the control thread: the
  // replies are written by the calls' coroutines, which this one outlives.
  struct batch_reply {
    std::size_t first = 0, last = 0;
    error_code ec;
    std::vector<put_many_item> items;
  };
  struct window_state {
    explicit window_state(asio::io_context& ctx) : wake(ctx, clock::time_point::max()) {}
    asio::steady_timer wake;
    std::size_t in_flight = 0;
  };
  constexpr std::size_t upsert_window = 4;
  std::vector<batch_reply> replies;
  replies.reserve(requests.size() / put_many_batch + keys_.size());  // a batch ends at each partition too
  auto window = std::make_shared<window_state>(ctl_);
  std::size_t next = 0;  // the first request not sent yet
  bool failed = static_cast<bool>(ec);
  for (;;) {
    while (!failed && next < requests.size() && window->in_flight < upsert_window) {
      batch_reply& out = replies.emplace_back();  // reserved: no reallocation, so `out` stays put
      out.first = next;
      out.last = std::min(requests.size(), next + put_many_batch);
      for (std::size_t k = next + 1; k < out.last; ++k) {
        if (part[k] != part[next]) {
          out.last = k;
          break;
        }
      }
      next = out.last;
      ++window->in_flight;
      spawn([](scheduler_impl* self, std::shared_ptr<window_state> w, std::vector<std::string> call,
               batch_reply* reply) -> asio::awaitable<void> {
        auto [e, v] = co_await self->exec(std::move(call));
        reply->ec = e ? e : parse_put_many(v, reply->items);
        if (!reply->ec && reply->items.size() != reply->last - reply->first)
          reply->ec = make_error_code(error::protocol_error);
        --w->in_flight;
        w->wake.cancel();  // its waiter is this coroutine's parent, suspended below
      }(this, window, put_many_call(keys_.partition(part[out.first]), requests, out.first, out.last), &out));
    }
    if (window->in_flight == 0) break;
    window->wake.expires_at(clock::time_point::max());
    co_await window->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    for (const auto& r : replies)
      if (r.ec) failed = true;  // no more calls: a connection failure would fail them too
  }
  for (const auto& r : replies) {
    if (r.ec && !ec) ec = r.ec;
    for (std::size_t k = r.first; k < r.last; ++k) {
      upsert_result& out = results[sent[k]];
      if (r.ec) {
        // Sent, but no reply: it may or may not have been applied.
        out.outcome = upsert_outcome::failed;
        out.error = "not confirmed (" + r.ec.message() + "): upsert again with replace or update to be sure";
        continue;
      }
      const put_many_item& item = r.items[k - r.first];
      out.outcome = outcome_of(item.outcome);
      if (out.outcome == upsert_outcome::failed)
        out.error = library_text(item.error_text);
      else
        out.due = to_time_point(item.due_ms);
    }
  }
  // What was never sent failed with the request.
  for (std::size_t k = next; k < requests.size(); ++k) {
    results[sent[k]].outcome = upsert_outcome::failed;
    results[sent[k]].error = "not written: " + ec.message();
  }
  complete(std::move(h), std::move(work), ec, std::move(results));
}

void scheduler_impl::backfill(std::string id, std::int64_t from_ms, std::int64_t to_ms, backfill_handler h) {
  auto work = track(h, work_);
  if (closing_) {
    complete_later(work_, std::move(h), std::move(work), make_error_code(error::shut_down), backfill_result{});
    return;
  }
  asio::post(ctl_, [this, id = std::move(id), from_ms, to_ms, h = std::move(h), work = std::move(work)]() mutable {
    spawn(backfill_op(std::move(id), from_ms, to_ms, std::move(h), std::move(work)));
  });
}

asio::awaitable<void> scheduler_impl::backfill_op(std::string id, std::int64_t from_ms, std::int64_t to_ms,
                                                  backfill_handler h, asio::any_completion_executor work) {
  // One call for a fixed-rate or fixed-delay schedule; a cron schedule's
  // answers with its expression, zone and pending occurrence, and a second
  // call brings the instants computed here.
  backfill_result result;
  cron_backfill_ask ask;
  const key_space& ks = keys_.of(id);
  auto [ec, v] = co_await exec(backfill_call(ks, id, from_ms, to_ms));
  if (!ec) ec = parse_backfill(v, result, &ask);
  if (!ec && ask.asked) {
    std::vector<std::int64_t> instants;
    try {
      instants = cron_instants(ask, from_ms, to_ms);
    } catch (const std::exception&) {
      ec = make_error_code(error::protocol_error);
    }
    if (!ec && instants.size() > max_backfill) {
      ec = make_error_code(error::too_many_fires, "backfill of " + id + " from " + std::to_string(from_ms) + " to " +
                                                      std::to_string(to_ms) + " ms has more than " +
                                                      std::to_string(max_backfill) + " occurrences");
    } else if (!ec && !instants.empty()) {
      auto [ec2, v2] = co_await exec(backfill_call(ks, id, from_ms, to_ms, max_backfill, instants));
      ask = {};
      ec = ec2 ? ec2 : parse_backfill(v2, result, &ask);
      if (!ec && ask.asked) ec = make_error_code(error::protocol_error);
    }
  }
  complete(std::move(h), std::move(work), ec, std::move(result));
}

}  // namespace chronopool::durable::detail

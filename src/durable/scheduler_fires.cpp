// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One fire of the durable scheduler, from claim to acknowledgement: the
// handler runs on the work executor (under its timeout, if it has one), and
// the control thread acknowledges it, or gives it back with the error's text
// to be retried or dead-lettered per the schedule's failure policy. See
// scheduler_impl.hpp for who owns what.
#include "scheduler_impl.hpp"

#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/durable/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <exception>
#include <random>

namespace chronopool::durable::detail {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

fire_context make_context(const claimed_fire& f, std::stop_token stop) {
  fire_context c;
  c.schedule_id = f.id;
  c.task = f.task;
  c.payload = f.payload;
  c.fire_id = fmt::format("{}@{}", f.id, f.due_ms);
  c.due = to_time_point(f.due_ms);
  c.token = f.token;
  c.attempt = f.attempt;
  c.stop = std::move(stop);
  return c;
}

}  // namespace

void scheduler_impl::dispatch(claimed_fire f, clock::time_point sent) {
  ++counters_.claimed;
  // On Redis's clock, in its milliseconds: the claim only returns due fires.
  counters_.claim_lag.record_shared(std::chrono::milliseconds(f.claimed_ms - f.due_ms));
  auto st = std::make_shared<running_fire>();
  st->fire = std::move(f);
  st->local_expiry = sent + options_.lease;
  st->claimed_at = clock::now();
  handler_ptr h;
  {
    std::lock_guard lk(mutex_);
    if (auto it = handlers_.find(st->fire.task); it != handlers_.end()) h = it->second;
    ++running_count_;
  }
  running_[key_of(st->fire)] = st;
  if (!claiming_) {
    // Claimed while stop() began: never started, so given back at once.
    st->take(running_fire::given_back);
    spawn(give_back(st));
    return;
  }
  if (!h) {
    // Another process of the namespace may know this task: give it back. It
    // counts as a failed attempt, so a name nobody knows ends as a dead
    // letter instead of circling for ever.
    ++counters_.no_handler;
    spawn(finish_fire(st, false, fmt::format("no handler for task '{}' in {}", st->fire.task, owner_)));
    return;
  }
  // A handler without a timeout of its own is bounded by max_run_time, so a
  // hung one does not keep its lease extended for ever.
  const clock::duration limit = h->options.timeout.count() > 0 ? clock::duration(h->options.timeout)
                                                                : clock::duration(options_.max_run_time);
  if (limit.count() > 0) arm_timeout(st, limit);
  try {
    asio::post(work_, [self = shared_from_this(), st, h] {
      // stop() gave it back, or it timed out waiting for a worker: it must
      // not start (the scheduler may be gone by now, as far as its owner knows).
      if (!st->take(running_fire::started)) return;
      fire_context ctx = make_context(st->fire, st->stop.get_token());
      bool ok = true;
      std::string error_text;
      const auto* outer = handler_running_for;
      handler_running_for = self.get();
      const clock::time_point began = clock::now();
      try {
        h->fn(ctx);
      } catch (...) {
        ok = false;
        try {
          error_text = chronopool::detail::exception_text(std::current_exception());
          if (error_text.size() > max_error_bytes) error_text.resize(max_error_bytes);
        } catch (...) {
        }
        if (self->options_.on_handler_error) {
          try {
            self->options_.on_handler_error(ctx, std::current_exception());
          } catch (...) {
          }
        } else {
          log_handler_failed(self->options_, ctx, std::current_exception());
        }
      }
      handler_running_for = outer;
      self->counters_.run_time.record_shared(clock::now() - began);
      if (self->closing_) return;  // links are closed: the lease will run out
      std::weak_ptr<scheduler_impl> weak = self;
      asio::post(self->ctl_, [weak, st, ok, e = std::move(error_text)]() mutable {
        if (auto s = weak.lock()) s->spawn(s->finish_fire(st, ok, std::move(e)));
      });
    });
  } catch (...) {
    spawn(finish_fire(st, false, "the work executor refused the fire"));
  }
}

void scheduler_impl::arm_timeout(const std::shared_ptr<running_fire>& st, clock::duration timeout) {
  st->timeout = std::make_unique<asio::steady_timer>(ctl_, timeout);
  std::weak_ptr<scheduler_impl> weak = shared_from_this();
  st->timeout->async_wait([weak, st, timeout](error_code ec) {
    if (ec) return;  // the fire finished first (fire_done cancelled us)
    if (auto s = weak.lock()) s->handler_timed_out(st, timeout);
  });
}

void scheduler_impl::handler_timed_out(const std::shared_ptr<running_fire>& st, clock::duration timeout) {
  // Its ack or nack is on its way already: the handler did return in time.
  if (st->finishing || closing_) return;
  st->take(running_fire::given_back);  // not started yet: it never will
  st->stop.request_stop();
  ++counters_.timed_out;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  log_handler_timed_out(options_, st->fire, ms);
  // The handler thread cannot be taken back; it stops counting against
  // max_in_flight and its return, whenever it comes, is ignored.
  spawn(finish_fire(st, false, fmt::format("timed out after {} ms", ms)));
}

// Each partition has its epoch: a loss is reported per partition that lost
// its data (Redis loses them together, or one master of a cluster its own).
void scheduler_impl::saw_epoch(std::uint32_t partition, const std::string& epoch) {
  partition_state& p = parts_[partition];
  if (epoch == p.epoch) return;
  const bool report = !p.epoch.empty() && !p.epoch_lost;
  if (report) {
    ++counters_.data_lost;
    log_data_lost(options_, p.epoch, epoch);
  }
  p.epoch = epoch;
  p.epoch_lost = false;
}

void scheduler_impl::fire_data_lost(const claimed_fire& f) {
  // Reported already: by a claim that saw the new epoch (ours differs from
  // the fire's then), or by another fire's rejected ack.
  partition_state& p = parts_[f.partition];
  if (p.epoch_lost || f.epoch != p.epoch) return;
  ++counters_.data_lost;
  log_data_lost(options_, p.epoch, {});
  p.epoch_lost = true;
}

void scheduler_impl::lease_lost(running_fire& st) {
  if (st.lost) return;  // counted once, whoever learns it first
  st.lost = true;
  st.stop.request_stop();
  ++counters_.leases_lost;
}

asio::awaitable<void> scheduler_impl::finish_fire(std::shared_ptr<running_fire> st, bool ok,
                                                  std::string error_text) {
  if (st->finishing) co_return;  // finished already (a timed-out handler returning late)
  clock::duration backoff = options_.reconnect_min;
  st->finishing = true;  // no more extensions: see lease_loop
  // Where in [b/2, b] the server puts the retry: Redis seeds Lua's random
  // generator alike for every call, so the draw is made here.
  std::uniform_int_distribution<std::uint32_t> jitter(0, 1000000);
  const std::uint32_t draw = jitter(jitter_);
  // A cron fire's next instants, computed once: a retry of the request
  // carries the same plan (Redis's clock still chooses among them).
  const std::optional<cron_plan> plan = plan_for(*st);
  const cron_plan* p = plan ? &*plan : nullptr;
  while (!closing_) {
    // Built before co_await: g++ 12 destroys a ?: temporary twice across a suspension.
    std::vector<std::string> call;
    if (ok)
      call = ack_call(keys_.partition(st->fire.partition), st->fire.id, st->fire.token, st->fire.epoch, p);
    else
      call = nack_call(keys_.partition(st->fire.partition), st->fire.id, st->fire.token, draw, error_text,
                       st->fire.epoch, p);
    auto [ec, v] = co_await exec(std::move(call));
    if (!ec) {
      if (ok) {
        bool acked = false;
        std::int64_t next = 0;
        ec = parse_ack(v, acked, next);
        if (!ec) ++counters_.acked;  // a repeat means our first ack was applied
      } else {
        bool dead = false;
        std::int64_t at = 0;
        ec = parse_nack(v, dead, at);
        if (!ec && dead) {
          ++counters_.dead_lettered;
          log_dead_lettered(options_, st->fire, error_text);
        } else if (!ec) {
          ++counters_.released;
        }
      }
      if (ec == error::stale_lease) {
        ++counters_.stale_acks;
        lease_lost(*st);  // superseded before the ack: really lost
      } else if (ec == error::data_lost) {
        // Claimed before the data was lost: nothing to acknowledge it against.
        fire_data_lost(st->fire);
        lease_lost(*st);
      }
      break;  // Redis answered: nothing to retry
    }
    // The lease is gone by now: whoever claims the fire next runs it again.
    if (clock::now() >= st->local_expiry) break;
    co_await sleep_for(next_backoff(backoff));
  }
  fire_done(st);
}

asio::awaitable<void> scheduler_impl::give_back(std::shared_ptr<running_fire> st) {
  if (st->finishing) co_return;
  st->finishing = true;  // no more extensions, no timeout
  auto [ec, v] =
      co_await exec(release_call(keys_.partition(st->fire.partition), st->fire.id, st->fire.token, st->fire.epoch));
  std::int64_t n = 0;
  if (!ec) ec = parse_integer(v, n);
  if (!ec && n == 1) ++counters_.given_back;
  if (ec == error::data_lost) fire_data_lost(st->fire);
  // Otherwise its lease runs out and the fire runs elsewhere then.
  fire_done(st);
}

void scheduler_impl::fire_done(std::shared_ptr<running_fire> st) {
  if (st->timeout) st->timeout->cancel();
  running_.erase(key_of(st->fire));
  {
    std::lock_guard lk(mutex_);
    --running_count_;
  }
  fires_cv_.notify_all();
  wake_claims();
}

}  // namespace chronopool::durable::detail

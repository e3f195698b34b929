// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The durable scheduler's control thread: links to Redis, claims, leases,
// acknowledgements. See scheduler_impl.hpp for who owns what.
#include "scheduler_impl.hpp"

#include <chronopool/durable/error.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <future>
#include <stdexcept>

namespace chronopool::durable::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

thread_local const scheduler_impl* handler_running_for = nullptr;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

std::string default_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device rd;
  return fmt::format("{}:{}:{:08x}", host, ::getpid(), rd());
}

}  // namespace

scheduler_impl::scheduler_impl(executor_type work, scheduler_options options)
    : work_(std::move(work)),
      options_(std::move(options)),
      keys_(options_.name_space, options_.partitions),
      owner_(options_.owner.empty() ? default_owner() : options_.owner),
      ctl_(1),
      ctl_work_(ctl_.get_executor()),
      cmd_(ctl_.get_executor(), options_.redis),
      sub_(ctl_.get_executor(), options_.redis),
      link_timer_(ctl_),
      claim_timer_(ctl_),
      parts_(keys_.size()),
      jitter_(std::random_device{}()) {
  // Redis Cluster: functions live per node, so every master gets the
  // library when its connection opens (and again if it answers "Function
  // not found", e.g. a master that came with a failover or a resharding).
  cmd_.set_node_setup([this](std::shared_ptr<redis_connection> node, std::function<void(error_code)> done) {
    asio::co_spawn(
        ctl_, [this, node]() -> asio::awaitable<error_code> { co_return co_await load_library(*node); },
        [done = std::move(done)](std::exception_ptr e, error_code ec) {
          done(e ? make_error_code(error::server_error) : ec);
        });
  });
}

scheduler_impl::~scheduler_impl() {
  // The owner calls stop(); this is the fallback that never waits for fires.
  if (ctl_thread_.joinable()) {
    closing_ = true;
    asio::post(ctl_, [this] { close_links(); });
    ctl_work_.reset();
    if (ctl_thread_.get_id() == std::this_thread::get_id())
      ctl_thread_.detach();
    else
      ctl_thread_.join();
  }
}

void scheduler_impl::launch() {
  spawn(command_link_loop());
  ctl_thread_ = std::thread([this] {
    // A loop that throws (allocation failure) must not take the thread down
    // with it: report and keep serving the others.
    for (;;) {
      try {
        ctl_.run();
        return;
      } catch (const std::exception& e) {
        log_control_loop_error(options_, e);
      }
    }
  });
}

void scheduler_impl::spawn(asio::awaitable<void> a) {
  asio::co_spawn(ctl_, std::move(a), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
}

void scheduler_impl::register_handler(std::string task, scheduler::task_handler h, handler_options o) {
  auto p = std::make_shared<const registered_handler>(registered_handler{std::move(h), o});
  std::lock_guard lk(mutex_);
  handlers_[std::move(task)] = std::move(p);
}

void scheduler_impl::start() {
  {
    std::lock_guard lk(mutex_);
    if (stop_claims_) return;
  }
  asio::post(ctl_, [this] {
    if (closing_ || claiming_) return;  // already started
    claiming_ = true;
    spawn(claim_loop());
    spawn(wake_link_loop());
    spawn(lease_loop());
  });
}

void scheduler_impl::stop() {
  if (handler_running_for == this)
    throw std::logic_error("chronopool::durable::scheduler::stop() called from one of its fire handlers");
  if (ctl_thread_.get_id() == std::this_thread::get_id())
    throw std::logic_error("chronopool::durable::scheduler::stop() called on its control thread");
  std::lock_guard serial(stop_mutex_);  // a second stop() waits for the first
  if (stopped_) return;
  {
    std::lock_guard lk(mutex_);
    stop_claims_ = true;
  }
  if (ctl_thread_.joinable()) {
    // No new claims; running handlers are asked to finish.
    std::promise<void> asked;
    asio::post(ctl_, [this, &asked] {
      claiming_ = false;
      wake_claims();
      for (auto& [key, st] : running_) {
        // Not started yet: given back now, for another process to run at
        // once, and never started here. A claim still in flight gives its
        // fires back as they come (dispatch).
        if (st->take(running_fire::given_back)) spawn(give_back(st));
        st->stop.request_stop();
      }
      asked.set_value();
    });
    asked.get_future().wait();
    {
      std::unique_lock lk(mutex_);
      fires_cv_.wait_for(lk, options_.stop_timeout, [this] { return running_count_ == 0; });
    }
    closing_ = true;
    asio::post(ctl_, [this] { close_links(); });
    ctl_work_.reset();
    ctl_thread_.join();
  }
  stopped_ = true;
}

void scheduler_impl::close_links() {
  link_timer_.cancel();
  claim_timer_.cancel();
  for (auto* t : sleepers_) t->cancel();
  // A handler still running (hung past stop_timeout) keeps its fire here:
  // its timeout's wait must end too, or the control thread never finishes.
  for (auto& [key, st] : running_)
    if (st->timeout) st->timeout->cancel();
  cmd_.close();
  sub_.close();
}

scheduler_stats scheduler_impl::stats() const {
  scheduler_stats s;
  s.claimed = counters_.claimed.load();
  s.acked = counters_.acked.load();
  s.stale_acks = counters_.stale_acks.load();
  s.released = counters_.released.load();
  s.extended = counters_.extended.load();
  s.leases_lost = counters_.leases_lost.load();
  s.no_handler = counters_.no_handler.load();
  s.reconnects = counters_.reconnects.load();
  s.dead_lettered = counters_.dead_lettered.load();
  s.timed_out = counters_.timed_out.load();
  s.data_lost = counters_.data_lost.load();
  s.given_back = counters_.given_back.load();
  counters_.claim_lag.add_to(s.claim_lag_histogram);
  counters_.run_time.add_to(s.run_time_histogram);
  return s;
}

error_code scheduler_impl::connection_error() const {
  std::lock_guard lk(mutex_);
  return connection_error_;
}

void scheduler_impl::set_link_error(error_code ec) {
  std::lock_guard lk(mutex_);
  connection_error_ = ec;
}

// ---------------------------------------------------------------------------
// User operations
// ---------------------------------------------------------------------------

// One request of the user's: sent from the control thread, its reply turned
// into the operation's result by `parse`, completed on the handler's
// executor. After close, it completes with shut_down and `closed_result`.
template <class Handler, class Result, class Parse>
void scheduler_impl::request(std::vector<std::string> call, Handler h, Result closed_result, Parse parse) {
  auto work = track(h, work_);
  if (closing_) {
    complete_later(work_, std::move(h), std::move(work), make_error_code(error::shut_down), closed_result);
    return;
  }
  asio::post(ctl_, [this, call = std::move(call), h = std::move(h), work = std::move(work), parse]() mutable {
    spawn([](scheduler_impl* self, std::vector<std::string> c, Handler handler, asio::any_completion_executor w,
             Parse p) -> asio::awaitable<void> {
      auto [ec, v] = co_await self->exec(std::move(c));
      Result result{};
      if (!ec) ec = p(v, result);
      complete(std::move(handler), std::move(w), ec, std::move(result));
    }(this, std::move(call), std::move(h), std::move(work), parse));
  });
}

void scheduler_impl::put(put_request r, put_handler h) {
  if (r.payload.size() > options_.max_payload_bytes) {
    // Refused before anything is sent; completed through the work executor,
    // never inline in the initiating call.
    auto work = track(h, work_);
    complete_later(work_, std::move(h), std::move(work),
                   make_error_code(error::payload_too_large,
                                   "a payload of " + std::to_string(r.payload.size()) + " bytes, above the limit of " +
                                       std::to_string(options_.max_payload_bytes) + " bytes"),
                   std::chrono::system_clock::time_point{});
    return;
  }
  r.failure = r.options.failure.value_or(options_.failure);
  request(put_call(keys_.of(r.id), r), std::move(h), std::chrono::system_clock::time_point{},
          [](const redis_value& v, std::chrono::system_clock::time_point& due) {
            std::int64_t ms = 0;
            auto ec = parse_put(v, ms);
            due = to_time_point(ms);
            return ec;
          });
}

void scheduler_impl::cancel(std::string id, cancel_handler h) {
  request(cancel_call(keys_.of(id), id), std::move(h), false, [](const redis_value& v, bool& existed) {
    std::int64_t n = 0;
    auto ec = parse_integer(v, n);
    existed = n == 1;
    return ec;
  });
}

void scheduler_impl::redrive(std::string fire_id, redrive_handler h) {
  // A fire id names its schedule's partition (key_space.hpp: partition_of).
  request(dead_redrive_call(keys_.of(fire_id), fire_id), std::move(h), std::string{},
          [](const redis_value& v, std::string& id) { return parse_text(v, id); });
}

void scheduler_impl::delete_dead(std::string fire_id, cancel_handler h) {
  request(dead_delete_call(keys_.of(fire_id), fire_id), std::move(h), false, [](const redis_value& v, bool& existed) {
    std::int64_t n = 0;
    auto ec = parse_integer(v, n);
    existed = n == 1;
    return ec;
  });
}

// Management (issue 43, item 4): each one function call on the schedule's
// partition, see manage.lua; listings call every partition
// (scheduler_partitions.cpp).

void scheduler_impl::inspect(std::string id, inspect_handler h) {
  request(inspect_call(keys_.of(id), id), std::move(h), schedule_details{},
          [](const redis_value& v, schedule_details& out) { return parse_inspect(v, out); });
}

void scheduler_impl::pause(std::string id, bool paused, cancel_handler h) {
  request(paused ? pause_call(keys_.of(id), id) : resume_call(keys_.of(id), id), std::move(h), false,
          [](const redis_value& v, bool& changed) {
            std::int64_t n = 0;
            auto ec = parse_integer(v, n);
            changed = n == 1;
            return ec;
          });
}

void scheduler_impl::trigger_now(std::string id, trigger_handler h) {
  request(trigger_call(keys_.of(id), id), std::move(h), triggered_fire{},
          [id](const redis_value& v, triggered_fire& out) { return parse_trigger(v, id, out); });
}

void scheduler_impl::server_time(put_handler h) {
  request(time_call(keys_.partition(0)), std::move(h), std::chrono::system_clock::time_point{},
          [](const redis_value& v, std::chrono::system_clock::time_point& t) {
            std::int64_t ms = 0;
            auto ec = parse_integer(v, ms);
            t = to_time_point(ms);
            return ec;
          });
}

// ---------------------------------------------------------------------------
// Helpers on the control thread
// ---------------------------------------------------------------------------

asio::awaitable<scheduler_impl::exec_result> scheduler_impl::exec(std::vector<std::string> args) {
  const auto deadline = clock::now() + options_.redis.request_timeout;
  while (!(functions_loaded_ && cmd_.is_open())) {
    if (closing_) co_return exec_result{make_error_code(error::shut_down), {}};
    if (link_error_) co_return exec_result{link_error_, {}};  // waiting would not help
    if (clock::now() >= deadline) co_return exec_result{make_error_code(error::not_connected), {}};
    co_await sleep_for(milliseconds(10));
  }
  auto [ec, v] = co_await cmd_.async_execute(std::move(args), tuple_awaitable);
  if (ec && ec != asio::error::operation_aborted) link_timer_.cancel();  // reconnect at once
  co_return exec_result{ec, std::move(v)};
}

asio::awaitable<void> scheduler_impl::sleep_for(clock::duration d) {
  if (closing_) co_return;
  asio::steady_timer t(ctl_, d);
  sleepers_.insert(&t);
  co_await t.async_wait(tuple_awaitable);
  sleepers_.erase(&t);
}

asio::awaitable<void> scheduler_impl::wait_for_wake(clock::time_point until) {
  if (wake_pending_ || closing_ || !claiming_) co_return;
  claim_timer_.expires_at(until);
  co_await claim_timer_.async_wait(tuple_awaitable);
}

void scheduler_impl::wake_claims() {
  wake_pending_ = true;
  claim_timer_.cancel();
}

scheduler_impl::clock::duration scheduler_impl::next_backoff(clock::duration& current) {
  // Full jitter over [current/2, current], then double up to the maximum, so
  // a fleet that lost Redis together does not reconnect in lockstep.
  const auto base = std::max<clock::duration>(current, milliseconds(1));
  std::uniform_int_distribution<clock::rep> dist(base.count() / 2, base.count());
  const clock::duration d(dist(jitter_));
  current = std::min<clock::duration>(base * 2, options_.reconnect_max);
  return d;
}

// ---------------------------------------------------------------------------
// Loops
// ---------------------------------------------------------------------------

asio::awaitable<bool> scheduler_impl::open_link(redis_connection& link, std::vector<std::string> first,
                                                clock::duration& backoff) {
  auto [ec] = co_await link.async_connect(tuple_awaitable);
  if (!ec && !closing_) {
    auto [ec2, v] = co_await link.async_execute(std::move(first), tuple_awaitable);
    ec = ec2 ? ec2 : error_of(v);
  }
  if (closing_) co_return false;
  if (ec) {
    co_await link_failed(link, ec, backoff);
    co_return false;
  }
  (&link == &cmd_ ? cmd_log_ : sub_log_).opened(options_);
  backoff = options_.reconnect_min;
  co_return true;
}

asio::awaitable<error_code> scheduler_impl::load_library(redis_connection& link) {
  // Loaded only when this code is not there already: FUNCTION LOAD needs
  // memory and is refused at maxmemory, FUNCTION LIST is not, so a
  // process started while Redis is full still comes up.
  auto [ec, v] = co_await link.async_execute(list_functions_call(), tuple_awaitable);
  // Over a lower revision of our library ours is loaded, a higher one is
  // kept (same functions: the fleet runs the newest code any of it has,
  // and builds never flip it back and forth).
  library_state state = library_state::load;
  if (!ec) ec = parse_library_state(v, state);
  if (!ec && state == library_state::load && !closing_) {
    auto [ec2, v2] = co_await link.async_execute(load_functions_call(), tuple_awaitable);
    ec = ec2 ? ec2 : error_of(v2);
  }
  co_return ec;
}

asio::awaitable<bool> scheduler_impl::open_command_link(clock::duration& backoff) {
  auto [ec] = co_await cmd_.async_connect(tuple_awaitable);
  // A cluster connection has loaded the library on every master already
  // (its node setup, set in the constructor).
  if (!ec && !closing_ && !cmd_.is_cluster()) ec = co_await load_library(cmd_);
  // Nothing is touched before the namespace's partition count is ours.
  if (!ec && !closing_) ec = co_await check_partitions();
  if (closing_) co_return false;
  if (ec) {
    link_error_ = is_refusal(ec) ? ec : error_code{};
    co_await link_failed(cmd_, ec, backoff);
    co_return false;
  }
  link_error_ = {};
  set_link_error({});
  cmd_log_.opened(options_);
  backoff = options_.reconnect_min;
  co_return true;
}

asio::awaitable<void> scheduler_impl::link_failed(redis_connection& link, error_code ec, clock::duration& backoff) {
  link.close();
  if (&link == &cmd_) set_link_error(ec);
  (&link == &cmd_ ? cmd_log_ : sub_log_).failed(options_, ec);
  // Redis refused us (password, ACL, memory, TLS): an operator has to act, so
  // keep trying, but at the slowest pace rather than from reconnect_min.
  // Every operation meanwhile fails at once with this error.
  if (is_refusal(ec)) backoff = options_.reconnect_max;
  co_await sleep_for(next_backoff(backoff));
}

asio::awaitable<void> scheduler_impl::command_link_loop() {
  clock::duration backoff = options_.reconnect_min;
  while (!closing_) {
    if (!cmd_.is_open()) {
      functions_loaded_ = false;
      // The library is checked on every connect: Redis may have restarted
      // from a data set without it.
      if (!co_await open_command_link(backoff)) continue;
      functions_loaded_ = true;
      if (ever_connected_) ++counters_.reconnects;
      ever_connected_ = true;
      wake_all_partitions();
    }
    link_timer_.expires_after(milliseconds(200));
    co_await link_timer_.async_wait(tuple_awaitable);
  }
}

asio::awaitable<void> scheduler_impl::wake_link_loop() {
  clock::duration backoff = options_.reconnect_min;
  // Every message names a new earliest time; claiming once more finds it.
  // One channel for the whole namespace: every partition publishes there.
  sub_.set_push_handler([this](redis_value v) { wake_partitions(v); });
  while (!closing_ && claiming_) {
    if (!sub_.is_open()) {
      std::vector<std::string> subscribe{"SUBSCRIBE", keys_.meta().wake_channel()};
      if (!co_await open_link(sub_, std::move(subscribe), backoff)) continue;
      wake_all_partitions();  // messages published while unsubscribed are lost
    }
    co_await sleep_for(milliseconds(200));
  }
}

asio::awaitable<void> scheduler_impl::claim_loop() {
  clock::duration backoff = options_.reconnect_min;
  const auto lease_ms = static_cast<std::int64_t>(options_.lease.count());
  while (!closing_ && claiming_) {
    if (running_.size() >= options_.max_in_flight) {
      wake_pending_ = false;  // a finishing fire wakes us again
      co_await wait_for_wake(clock::time_point::max());
      continue;
    }
    wake_pending_ = false;
    // One partition per claim, in rotation among those with something that
    // may be due; none: sleep until the earliest may, or a wake-up.
    const std::optional<std::uint32_t> ready = ready_partition(clock::now());
    if (!ready) {
      co_await wait_for_wake(earliest_claim());
      continue;
    }
    const std::uint32_t k = *ready;
    parts_[k].woken = false;  // a wake-up from now on claims it again
    const std::size_t n = std::min(options_.claim_batch, options_.max_in_flight - running_.size());
    const auto sent = clock::now();
    {
      // stop() waits for this claim too, so what it brings is given back.
      std::lock_guard lk(mutex_);
      ++running_count_;
    }
    auto [ec, v] = co_await exec(claim_call(keys_.partition(k), owner_, lease_ms, n, options_.max_claim_reply_bytes));
    claim_result r;
    if (!ec) ec = parse_claim(v, r);
    if (!ec && !closing_) {
      saw_epoch(k, r.epoch);
      for (auto& f : r.fires) {
        f.partition = k;
        dispatch(std::move(f), sent);  // given back if stop() began
      }
    }
    {
      std::lock_guard lk(mutex_);
      --running_count_;
    }
    fires_cv_.notify_all();
    if (closing_) break;  // anything claimed here runs again when its lease expires
    if (ec == error::version_mismatch) {
      // The namespace holds another library's data: reported like a
      // refusal (connection_error(), logged once), retried slowly.
      set_link_error(ec);
      cmd_log_.failed(options_, ec);
      backoff = options_.reconnect_max;
    } else if (!ec && connection_error() == error::version_mismatch) {
      set_link_error({});
      cmd_log_.opened(options_);
    }
    if (ec) {
      // The partition stays ready: claimed again after the backoff.
      co_await sleep_for(next_backoff(backoff));
      continue;
    }
    backoff = options_.reconnect_min;
    if (r.fires.size() == n) {
      parts_[k].next_claim = clock::time_point::min();  // there may be more due
      continue;
    }
    clock::duration wait = options_.max_poll;
    if (r.next_event_ms >= 0) {
      // Redis's clock decides what is due; ours only measures the interval.
      // Clamped in milliseconds first: "never" lies 2^50 ms away, which
      // would overflow the clock's nanoseconds.
      const auto poll_ms = std::chrono::ceil<milliseconds>(options_.max_poll).count();
      const auto until_ms = std::clamp<std::int64_t>(r.next_event_ms - r.server_now_ms, 1, std::max<std::int64_t>(poll_ms, 1));
      wait = std::min<clock::duration>(wait, milliseconds(until_ms));
    }
    parts_[k].next_claim = clock::now() + wait;
  }
}

asio::awaitable<void> scheduler_impl::lease_loop() {
  const auto every = std::max<clock::duration>(options_.lease / 3, milliseconds(1));
  const auto lease_ms = static_cast<std::int64_t>(options_.lease.count());
  while (!closing_) {
    co_await sleep_for(every);
    std::vector<std::shared_ptr<running_fire>> due;
    for (auto& [key, st] : running_)
      if (!st->lost) due.push_back(st);
    for (auto& st : due) {
      if (closing_) co_return;
      // Finished, or its ack is on its way: an extension sent now would
      // follow the ack down the pipeline and be answered "stale" for a fire
      // that was not lost but done.
      if (!running_.contains(key_of(st->fire)) || st->finishing) continue;
      const auto sent = clock::now();
      auto [ec, v] = co_await exec(
          extend_call(keys_.partition(st->fire.partition), st->fire.id, st->fire.token, lease_ms, st->fire.epoch));
      std::int64_t expiry = 0;
      if (!ec) ec = parse_integer(v, expiry);
      if (!ec) {
        st->local_expiry = sent + options_.lease;
        ++counters_.extended;
        continue;
      }
      // Superseded (this extension left before any ack, so "stale" means
      // the lease was gone), or we could not renew it before it ran out
      // while no ack was on its way: the fire may now run elsewhere, so ask
      // ours to stop. A fire whose ack left meanwhile is judged by the ack.
      // Data lost: the lease went with the data (fire_data_lost reports it).
      if (ec == error::data_lost) fire_data_lost(st->fire);
      if (ec == error::stale_lease || ec == error::data_lost ||
          (clock::now() >= st->local_expiry && !st->finishing))
        lease_lost(*st);
    }
  }
}

}  // namespace chronopool::durable::detail

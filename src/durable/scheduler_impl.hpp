// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The machinery behind chronopool::durable::scheduler.
//
// One control thread runs a private io_context that owns everything that
// talks to Redis: the command connection, the pub/sub connection, the claim
// loop, the lease extender and the acknowledgements. Task work never runs
// there, so a busy or blocked work executor cannot starve lease extension.
// All members below marked "ctl" are touched on the control thread only.
#pragma once

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/fire_context.hpp>
#include <chronopool/durable/scheduler.hpp>
#include <chronopool/detail/support/histogram_recorder.hpp>

#include "scheduler_log.hpp"

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace chronopool::durable::detail {

class scheduler_impl;

/// Completes a user's operation through its associated executor; `work` has
/// kept that executor busy meanwhile. Called on the control thread, never
/// inside the initiating call, so dispatch cannot run the handler inline in
/// its initiator.
template <class Handler, class... Args>
void complete(Handler h, boost::asio::any_completion_executor work, Args... args) {
  boost::asio::dispatch(std::move(work), boost::asio::append(std::move(h), std::move(args)...));
}

/// The same when the scheduler is closed and the control thread may be gone:
/// hop through the work executor first, which may not run it inline.
template <class Handler, class... Args>
void complete_later(const boost::asio::any_io_executor& via, Handler h, boost::asio::any_completion_executor work,
                    Args... args) {
  boost::asio::post(via, [h = std::move(h), work = std::move(work), args...]() mutable {
    complete(std::move(h), std::move(work), std::move(args)...);
  });
}

/// The handler's associated executor (else `fallback`), kept busy until
/// the operation completes.
template <class Handler>
boost::asio::any_completion_executor track(const Handler& h, const boost::asio::any_io_executor& fallback) {
  return boost::asio::prefer(boost::asio::get_associated_executor(h, fallback),
                             boost::asio::execution::outstanding_work.tracked);
}

/// The scheduler whose fire handler is running on this thread, if any:
/// stop() from inside a handler would wait for that very handler.
extern thread_local const scheduler_impl* handler_running_for;

class scheduler_impl : public std::enable_shared_from_this<scheduler_impl> {
 public:
  using executor_type = boost::asio::any_io_executor;
  using put_handler = boost::asio::any_completion_handler<
      void(boost::system::error_code, std::chrono::system_clock::time_point)>;
  using cancel_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, bool)>;
  using list_dead_handler = boost::asio::any_completion_handler<
      void(boost::system::error_code, std::vector<dead_letter>)>;
  using redrive_handler = boost::asio::any_completion_handler<void(boost::system::error_code, std::string)>;
  using list_handler = boost::asio::any_completion_handler<void(boost::system::error_code, schedule_page)>;
  using inspect_handler = boost::asio::any_completion_handler<void(boost::system::error_code, schedule_details)>;
  using trigger_handler = boost::asio::any_completion_handler<void(boost::system::error_code, triggered_fire)>;
  using backfill_handler = boost::asio::any_completion_handler<void(boost::system::error_code, backfill_result)>;
  using upsert_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, std::vector<upsert_result>)>;
  // A task name's handler with its options, shared with the fires running it.
  struct registered_handler {
    scheduler::task_handler fn;
    handler_options options;
  };
  using handler_ptr = std::shared_ptr<const registered_handler>;

  scheduler_impl(executor_type work, scheduler_options options);
  ~scheduler_impl();

  /// Starts the control thread; separate from the constructor because the
  /// loops need shared_from_this().
  void launch();

  executor_type work_executor() const noexcept { return work_; }
  const std::string& owner() const noexcept { return owner_; }

  void register_handler(std::string task, scheduler::task_handler h, handler_options o);
  void start();
  void stop();
  scheduler_stats stats() const;
  boost::system::error_code connection_error() const;

  void put(put_request r, put_handler h);
  void cancel(std::string id, cancel_handler h);
  void list_dead(std::size_t limit, list_dead_handler h);
  void redrive(std::string fire_id, redrive_handler h);
  void delete_dead(std::string fire_id, cancel_handler h);
  void list_schedules(schedule_query q, list_handler h);
  void inspect(std::string id, inspect_handler h);
  /// pause (true) or resume (false); completes with whether it changed.
  void pause(std::string id, bool paused, cancel_handler h);
  void trigger_now(std::string id, trigger_handler h);
  void backfill(std::string id, std::int64_t from_ms, std::int64_t to_ms, backfill_handler h);
  void server_time(put_handler h);
  // scheduler_cron.cpp: cron schedules and bulk upserts.
  /// A cron schedule: its first instant after Redis's TIME, then cp_put.
  void put_cron(put_request r, put_handler h);
  /// requests[k] is the schedule of results[sent[k]]; results of specs
  /// refused already are filled in.
  void upsert(std::vector<put_request> requests, std::vector<std::size_t> sent, std::vector<upsert_result> results,
              upsert_handler h);

 private:
  using clock = std::chrono::steady_clock;
  using exec_result = std::tuple<boost::system::error_code, redis_value>;

  // A fire leased to this process, from claim to acknowledgement.
  struct running_fire {
    claimed_fire fire;
    std::stop_source stop;
    clock::time_point local_expiry;  // conservative: measured from the request's send time
    clock::time_point claimed_at;    // when the claim's reply came: Redis's now >= claimed_ms + the time since
    bool lost = false;               // ctl: its lease was lost (counted once, handler told to stop)
    bool finishing = false;          // ctl: its ack or nack has been sent
    // Whether the handler may still start: queued until the work executor
    // runs it (started), unless stop() or a timeout took it first (given_back).
    // The one compare-exchange from queued decides, on whichever thread.
    enum : int { queued, started, given_back };
    std::atomic<int> state{queued};
    bool take(int to) {
      int from = queued;
      return state.compare_exchange_strong(from, to);
    }
    // ctl: runs out at the handler's timeout (null without one); cancelled
    // when the fire is done. Its wait holds `st`, so it must end: it does,
    // by firing, by fire_done's cancel, or by close_links' (a handler
    // still running when the scheduler closes).
    std::unique_ptr<boost::asio::steady_timer> timeout;
  };
  // running_'s key: tokens are unique per partition only (library.lua, "Tokens").
  using fire_key = std::pair<std::uint32_t, std::uint64_t>;
  static fire_key key_of(const claimed_fire& f) noexcept { return {f.partition, f.token}; }

  // ctl: what the claim loop knows of one partition of the namespace.
  struct partition_state {
    // Claim from it again no later than this: from its last claim's reply
    // (its next event, at most max_poll away); min(): at once.
    clock::time_point next_claim = clock::time_point::min();
    bool woken = false;  // a wake-up named it after its last claim began
    // Its epoch as this process last saw it (empty: none yet), and whether a
    // fire's rejected ack reported its loss before any claim saw the new one
    // (which is then adopted without a second report).
    std::string epoch;
    bool epoch_lost = false;
  };

  struct counters {
    std::atomic<std::uint64_t> claimed{0}, acked{0}, stale_acks{0}, released{0}, extended{0},
        leases_lost{0}, no_handler{0}, reconnects{0}, dead_lettered{0}, timed_out{0}, data_lost{0},
        given_back{0};
    // Recorded with atomic adds (record_shared): a fire costs a Redis round
    // trip, so a few read-modify-writes do not show, and handlers run on
    // any thread of the work executor.
    chronopool::detail::histogram_shard claim_lag;  // Redis's time at the claim minus the due time
    chronopool::detail::histogram_shard run_time;   // handlers, start to return or throw
  };

  // Loops (ctl).
  // Connects `link` and sends its first command; on failure closes it and
  // sleeps the backoff. False when it is not usable (or the scheduler closes).
  boost::asio::awaitable<bool> open_link(redis_connection& link, std::vector<std::string> first,
                                         clock::duration& backoff);
  // FUNCTION LIST on `link`, then FUNCTION LOAD unless this very code (or a
  // newer revision) is loaded there already.
  boost::asio::awaitable<boost::system::error_code> load_library(redis_connection& link);
  // The command link: connects, then loads the function library unless
  // this very code is loaded already. Records the outcome (link_error_).
  boost::asio::awaitable<bool> open_command_link(clock::duration& backoff);
  // After a failed attempt to open `link` with `ec`: closes it and sleeps.
  boost::asio::awaitable<void> link_failed(redis_connection& link, boost::system::error_code ec,
                                           clock::duration& backoff);
  void set_link_error(boost::system::error_code ec);
  boost::asio::awaitable<void> command_link_loop();
  boost::asio::awaitable<void> wake_link_loop();
  boost::asio::awaitable<void> claim_loop();
  boost::asio::awaitable<void> lease_loop();
  // Acknowledges the fire (ok), or gives it back with `error_text` to be
  // retried or dead-lettered. Only the first call for a fire does anything:
  // a timed-out handler's late return finds its fire finished.
  boost::asio::awaitable<void> finish_fire(std::shared_ptr<running_fire> st, bool ok, std::string error_text);
  // Gives back a fire whose handler never started (the scheduler stops): it
  // may run elsewhere at once, and the attempt does not count.
  boost::asio::awaitable<void> give_back(std::shared_ptr<running_fire> st);

  // One request on the command connection; waits up to request_timeout for
  // the connection to come up first.
  boost::asio::awaitable<exec_result> exec(std::vector<std::string> args);
  // Sleeps, but returns early when the scheduler closes.
  boost::asio::awaitable<void> sleep_for(clock::duration d);
  // The claim loop's sleep; wake_claims() ends it early.
  boost::asio::awaitable<void> wait_for_wake(clock::time_point until);
  void wake_claims();

  // scheduler_partitions.cpp: the namespace's partitions.
  // The partition count stored in Redis against ours (run on the command
  // link as it opens): partitions_mismatch, naming both, when they differ.
  boost::asio::awaitable<boost::system::error_code> check_partitions();
  // A message on the wake channel: the partition it names (all of them when
  // it names none) is claimed from again.
  void wake_partitions(const redis_value& message);
  // Every partition is claimed from again (the wake channel was down).
  void wake_all_partitions();
  // The next partition to claim from, in rotation from the last one
  // claimed, so none is starved: one woken or whose next_claim has come.
  std::optional<std::uint32_t> ready_partition(clock::time_point now);
  // When the earliest partition's next_claim comes.
  clock::time_point earliest_claim() const;
  // Listings merged across the partitions.
  boost::asio::awaitable<void> list_op(schedule_query q, list_handler h, boost::asio::any_completion_executor work);
  boost::asio::awaitable<void> list_dead_op(std::size_t limit, list_dead_handler h,
                                            boost::asio::any_completion_executor work);
  clock::duration next_backoff(clock::duration& current);

  // scheduler_cron.cpp: a cron fire's plan for its ack or nack: the next
  // instants from its due and from a lower bound of Redis's now (see
  // library.lua, "Cron"); empty for other fires.
  std::optional<cron_plan> plan_for(const running_fire& st) const;
  // A cron schedule's instants in [from_ms, to_ms), at most max_backfill + 1.
  static std::vector<std::int64_t> cron_instants(const cron_backfill_ask& ask, std::int64_t from_ms,
                                                 std::int64_t to_ms);
  boost::asio::awaitable<void> backfill_op(std::string id, std::int64_t from_ms, std::int64_t to_ms,
                                           backfill_handler h, boost::asio::any_completion_executor work);
  boost::asio::awaitable<void> put_cron_op(put_request r, put_handler h, boost::asio::any_completion_executor work);
  boost::asio::awaitable<void> upsert_op(std::vector<put_request> requests, std::vector<std::size_t> sent,
                                         std::vector<upsert_result> results, upsert_handler h,
                                         boost::asio::any_completion_executor work);

  // scheduler_fires.cpp: runs a claimed fire's handler on the work executor.
  void dispatch(claimed_fire f, clock::time_point sent);
  // Arms the fire's timeout: its handler's, or else scheduler_options::max_run_time.
  void arm_timeout(const std::shared_ptr<running_fire>& st, clock::duration timeout);
  // The handler ran past its timeout: asked to stop, its fire given back.
  void handler_timed_out(const std::shared_ptr<running_fire>& st, clock::duration timeout);
  // A claim found partition `partition`'s epoch `epoch`: a change from the
  // one seen before is a data loss, reported (counted, logged) and adopted.
  void saw_epoch(std::uint32_t partition, const std::string& epoch);
  // Redis answered data_lost to the ack, nack or extension of fire `f`:
  // reported unless a claim reported this loss of its partition already.
  void fire_data_lost(const claimed_fire& f);
  // Marks the fire's lease lost: counts it once and asks its handler to stop.
  void lease_lost(running_fire& st);
  void fire_done(std::shared_ptr<running_fire> st);
  void close_links();
  void spawn(boost::asio::awaitable<void> a);
  template <class Handler, class Result, class Parse>
  void request(std::vector<std::string> call, Handler h, Result closed_result, Parse parse);

  // Immutable after construction.
  executor_type work_;
  scheduler_options options_;
  namespace_layout keys_;
  std::string owner_;

  boost::asio::io_context ctl_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> ctl_work_;
  std::thread ctl_thread_;

  // ctl
  redis_connection cmd_;
  redis_connection sub_;
  link_log cmd_log_{"command"};
  link_log sub_log_{"subscription"};
  boost::asio::steady_timer link_timer_;
  boost::asio::steady_timer claim_timer_;
  std::unordered_set<boost::asio::steady_timer*> sleepers_;
  std::map<fire_key, std::shared_ptr<running_fire>> running_;
  std::vector<partition_state> parts_;  // one per partition
  std::uint32_t next_partition_ = 0;    // where ready_partition's rotation starts
  bool claiming_ = false;
  bool wake_pending_ = false;
  bool ever_connected_ = false;
  bool functions_loaded_ = false;  // the command link is up and the library is loaded
  // Why the latest attempt to open the command link failed, when Redis
  // itself refused (auth_failed, out_of_memory): operations fail with it at
  // once instead of waiting for a link that will not come by waiting.
  boost::system::error_code link_error_;
  std::minstd_rand jitter_;

  // Shared between threads.
  std::atomic<bool> closing_{false};   // links are being closed: no new Redis work
  std::atomic<bool> stopped_{false};   // stop() has finished
  std::mutex stop_mutex_;              // serialises stop()
  mutable std::mutex mutex_;           // guards handlers_, stop state below
  std::condition_variable fires_cv_;
  std::unordered_map<std::string, handler_ptr> handlers_;
  boost::system::error_code connection_error_;  // the latest failed attempt to open a link
  std::size_t running_count_ = 0;      // running_.size() plus a claim in flight, for stop()
  bool stop_claims_ = false;
  counters counters_;
};

}  // namespace chronopool::durable::detail

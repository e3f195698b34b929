// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::durable::scheduler — schedules kept in Redis, shared by a fleet.
///
/// Schedules (one-shot, fixed rate, fixed delay, cron in a time zone) live in Redis under one
/// namespace; every process running a scheduler on that namespace claims
/// due fires, runs them on its work executor (a scheduled_thread_pool, an
/// io_context, ...) and acknowledges them. The guarantee: every fire runs at
/// least once; while leases are longer than the worst pause, at most one
/// process holds a fire's lease; each attempt carries a fencing token that
/// grows with every claim, and acknowledgements with a superseded token are
/// rejected. See docs/durable.md.
#pragma once

#include <chronopool/durable/dead_letter.hpp>
#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/error.hpp>
#include <chronopool/durable/fire_context.hpp>
#include <chronopool/durable/schedule_info.hpp>
#include <chronopool/durable/schedule_spec.hpp>
#include <chronopool/durable/scheduler_options.hpp>
#include <chronopool/latency_histogram.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ratio>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable {

namespace detail {
class scheduler_impl;

/// @p d in milliseconds, rounded up and clamped to [0, max_time_ms], in
/// integer arithmetic for integer durations (a double holds only 53 bits:
/// nanoseconds since the epoch lose their last digits, and a truncation then
/// lands a millisecond early). Rounding up keeps every deadline at or after
/// the instant asked for; max_time_ms is "never", and nothing wraps.
template <class Rep, class Period>
std::int64_t ceil_ms_clamped(std::chrono::duration<Rep, Period> d) {
  if constexpr (std::chrono::treat_as_floating_point_v<Rep>) {
    const long double ms = std::chrono::duration<long double, std::milli>(d).count();
    if (!(ms > 0)) return 0;  // negative, zero and NaN: now
    if (ms >= static_cast<long double>(max_time_ms)) return max_time_ms;
    const auto whole = static_cast<std::int64_t>(ms);  // below 2^50: exact
    return static_cast<long double>(whole) < ms ? whole + 1 : whole;
  } else {
    if (!(d.count() > 0)) return 0;
    // One tick is num/den milliseconds. count * num / den, rounded up, as
    // (count / den) * num + ceil((count % den) * num / den), each step
    // checked against max_time_ms first, so nothing overflows.
    using ratio = std::ratio_divide<Period, std::milli>;
    constexpr auto num = static_cast<std::uintmax_t>(ratio::num);
    constexpr auto den = static_cast<std::uintmax_t>(ratio::den);
    constexpr auto limit = static_cast<std::uintmax_t>(max_time_ms);
    const auto count = static_cast<std::uintmax_t>(d.count());
    const std::uintmax_t whole = count / den;
    const std::uintmax_t rest = count % den;
    if (whole > limit / num) return max_time_ms;
    std::uintmax_t ms = whole * num;
    if (rest != 0) {
      if constexpr (num <= UINTMAX_MAX / den) {
        ms += (rest * num + den - 1) / den;  // rest * num < den * num: no overflow
      } else {
        // Ratios this odd exist only in theory; a double is exact enough there.
        ms += static_cast<std::uintmax_t>(static_cast<long double>(rest) * num / den) + 1;
      }
    }
    return static_cast<std::int64_t>(ms < limit ? ms : limit);
  }
}

/// A delay in whole milliseconds, rounded up, clamped to [0, max_time_ms]:
/// a delay of duration::max() means "never" and cannot wrap.
template <class Rep, class Period>
std::int64_t clamp_delay_ms(std::chrono::duration<Rep, Period> d) {
  return ceil_ms_clamped(d);
}

/// A time point as milliseconds since the epoch, rounded up (a fire never
/// comes before the instant given), clamped to [0, max_time_ms].
template <class Duration>
std::int64_t clamp_time_ms(std::chrono::time_point<std::chrono::system_clock, Duration> t) {
  return ceil_ms_clamped(t.time_since_epoch());
}
}  // namespace detail

/// Counters and histograms since construction.
struct scheduler_stats {
  std::uint64_t claimed = 0;          ///< fires leased to this process
  std::uint64_t acked = 0;            ///< acknowledged and accepted
  std::uint64_t stale_acks = 0;       ///< acknowledgements rejected: the token was superseded
  std::uint64_t released = 0;         ///< given back to be retried (handler threw or timed out, or no handler here)
  std::uint64_t dead_lettered = 0;    ///< fires this process's give-backs dead-lettered (their last attempt failed)
  std::uint64_t timed_out = 0;        ///< handlers abandoned for running past their handler_options::timeout
  std::uint64_t extended = 0;         ///< successful lease extensions
  std::uint64_t leases_lost = 0;      ///< fires whose lease really was lost (superseded, cancelled or not renewed in time)
  std::uint64_t no_handler = 0;       ///< fires claimed for a task nobody registered here
  std::uint64_t reconnects = 0;       ///< command connections re-established after a loss
  /// times this process found the namespace's data lost (its epoch changed
  /// or vanished: Redis restarted empty, FLUSHALL, failover to a replica
  /// that lost writes); each is also logged as "data_lost" (error::data_lost)
  std::uint64_t data_lost = 0;
  /// fires claimed here whose handler had not started when stop() began:
  /// given back at once for another process (the attempt does not count)
  std::uint64_t given_back = 0;
  /// How late each fire was claimed here: Redis's time at the claim minus
  /// the fire's due time, both on Redis's clock in its milliseconds (so
  /// whole milliseconds, and no skew between processes). Mergeable with
  /// other processes' to see a namespace's lag.
  latency_histogram claim_lag_histogram;
  /// How long each handler that started ran, to its return or throw (this
  /// process's steady clock); a timed-out handler counts when it returns.
  latency_histogram run_time_histogram;
};

/// Durable schedules on Redis, as one process sees them: creates and cancels
/// schedules, and claims and runs due fires of the task names registered
/// here (see the file's description and docs/durable.md for the
/// guarantees). Times are on the Redis server's clock.
///
/// @par Thread Safety
/// Every member but the destructor may be called from any thread (stop() not
/// from a fire's handler). Completions run on the handler's associated
/// executor (the work executor when it has none).
class scheduler {
 public:
  /// The work executor's type.
  using executor_type = boost::asio::any_io_executor;
  /// Fire times: wall-clock time points, as Redis keeps them.
  using time_point = std::chrono::system_clock::time_point;
  /// Runs one fire on the work executor. Returning acknowledges the fire;
  /// throwing gives it back, to be retried or dead-lettered per the
  /// schedule's failure_policy (the exception's text goes with it).
  using task_handler = std::function<void(const fire_context&)>;

  /// Connects to Redis in the background at once (scheduling works without
  /// start()); fires run on `work`.
  /// @throws std::invalid_argument for a namespace that is empty, longer than
  /// 256 bytes or contains '{', '}' or control characters, or for
  /// non-positive lease / batch sizes.
  scheduler(executor_type work, scheduler_options options);
  /// Calls stop().
  ~scheduler();
  scheduler(const scheduler&) = delete;             ///< not copyable
  scheduler& operator=(const scheduler&) = delete;  ///< not copyable

  /// The work executor: fires run there, and completions without an
  /// associated executor of their own.
  executor_type get_executor() const noexcept;
  /// The owner name recorded in this process's leases.
  const std::string& owner() const noexcept;

  /// Registers (or replaces) the handler for a task name. Thread-safe.
  /// @throws std::invalid_argument for an empty name or handler.
  void register_handler(std::string task, task_handler handler);
  /// The same, with a timeout for the handler's runs.
  /// @throws std::invalid_argument for an empty name or handler, or a
  /// negative options.timeout.
  void register_handler(std::string task, task_handler handler, handler_options options);

  /// Starts claiming fires. Idempotent.
  void start();

  /// Stops claiming, asks running handlers to stop, waits up to stop_timeout
  /// for them to return and be acknowledged, then closes the connections.
  /// Fires still running afterwards are not acknowledged; their leases expire
  /// and they run again elsewhere. Idempotent.
  /// @throws std::logic_error when called from a fire's handler.
  void stop();

  /// This process's counters since construction.
  scheduler_stats stats() const;

  /// Why the latest attempt to connect to Redis (connect, AUTH, load the
  /// function library) failed; success once connected. When Redis itself
  /// refused (error::auth_failed for a wrong or missing password,
  /// error::out_of_memory when the library cannot be loaded at maxmemory),
  /// the message carries Redis's text, every operation fails at once with
  /// this error, and the scheduler keeps retrying every reconnect_max until
  /// the operator fixes it. Thread-safe.
  boost::system::error_code connection_error() const;

  /// Creates a one-shot schedule firing at `at` (Redis's clock).
  /// @par Completion Signature
  /// @code void(error_code, time_point due) @endcode
  /// error::schedule_exists when a schedule with this id exists (one-shots
  /// take no schedule_options, so never replace one).
  template <class Duration, class Token>
  auto async_schedule_at(std::string id, std::string task, std::string payload,
                         std::chrono::time_point<std::chrono::system_clock, Duration> at,
                         Token&& token) {
    return put(make_request(std::move(id), std::move(task), std::move(payload), detail::schedule_kind::once, {},
                            true, detail::clamp_time_ms(at), 0),
               std::forward<Token>(token));
  }

  /// Creates a one-shot schedule firing `delay` after Redis's now.
  /// @par Completion Signature
  /// @code void(error_code, time_point due) @endcode
  template <class Rep, class Period, class Token>
  auto async_schedule(std::string id, std::string task, std::string payload,
                      std::chrono::duration<Rep, Period> delay, Token&& token) {
    return put(make_request(std::move(id), std::move(task), std::move(payload), detail::schedule_kind::once, {},
                            false, detail::clamp_delay_ms(delay), 0),
               std::forward<Token>(token));
  }

  /// Fixed rate: occurrences at first, first + period, first + 2 period, ...
  /// whatever the handlers' run time; the next one is scheduled when a fire
  /// is acknowledged, so runs never overlap (unless a lease expired).
  /// @throws std::invalid_argument for a non-positive period.
  /// @par Completion Signature
  /// @code void(error_code, time_point first_due) @endcode
  template <class Duration, class Rep, class Period, class Token>
  auto async_schedule_at_fixed_rate(std::string id, std::string task, std::string payload,
                                    std::chrono::time_point<std::chrono::system_clock, Duration> first,
                                    std::chrono::duration<Rep, Period> period,
                                    schedule_options options, Token&& token) {
    const std::int64_t period_ms = checked_period(period);
    return put(make_request(std::move(id), std::move(task), std::move(payload), detail::schedule_kind::fixed_rate,
                            options, true, detail::clamp_time_ms(first), period_ms),
               std::forward<Token>(token));
  }

  /// Fixed rate, first occurrence `initial_delay` after Redis's now.
  template <class Rep1, class Period1, class Rep2, class Period2, class Token>
  auto async_schedule_at_fixed_rate(std::string id, std::string task, std::string payload,
                                    std::chrono::duration<Rep1, Period1> initial_delay,
                                    std::chrono::duration<Rep2, Period2> period,
                                    schedule_options options, Token&& token) {
    const std::int64_t period_ms = checked_period(period);
    return put(make_request(std::move(id), std::move(task), std::move(payload), detail::schedule_kind::fixed_rate,
                            options, false, detail::clamp_delay_ms(initial_delay), period_ms),
               std::forward<Token>(token));
  }

  /// Fixed delay: each occurrence is `delay` after the previous fire was
  /// acknowledged (Redis's clock).
  /// @throws std::invalid_argument for a non-positive delay.
  /// @par Completion Signature
  /// @code void(error_code, time_point first_due) @endcode
  template <class Rep1, class Period1, class Rep2, class Period2, class Token>
  auto async_schedule_with_fixed_delay(std::string id, std::string task, std::string payload,
                                       std::chrono::duration<Rep1, Period1> initial_delay,
                                       std::chrono::duration<Rep2, Period2> delay,
                                       schedule_options options, Token&& token) {
    const std::int64_t period_ms = checked_period(delay);
    return put(make_request(std::move(id), std::move(task), std::move(payload), detail::schedule_kind::fixed_delay,
                            options, false, detail::clamp_delay_ms(initial_delay), period_ms),
               std::forward<Token>(token));
  }

  /// Cron: occurrences at the instants of a cron expression read in an IANA
  /// time zone, with chronopool::cron_schedule's syntax and DST rules (the
  /// same code computes them). The first is the first instant after Redis's
  /// now (read with TIME before the schedule is written); each next one is
  /// computed from the fire's own instant by the process that finishes it,
  /// and Redis's clock applies the misfire policy: the earliest missed
  /// instants are made up, at most 1 (fire_once_now), 0 (skip) or
  /// catch_up_max in a row, as cron_misfire does in process. See
  /// docs/durable.md, "Cron schedules in a time zone".
  /// @throws std::invalid_argument naming `expression` or `time_zone` and its
  /// value when the expression does not parse or the zone is unknown (nothing
  /// is written).
  /// @par Completion Signature
  /// @code void(error_code, time_point first_due) @endcode
  template <class Token>
  auto async_schedule_cron(std::string id, std::string task, std::string payload, std::string expression,
                           std::string time_zone, schedule_options options, Token&& token) {
    detail::put_request r = make_cron_request(std::move(id), std::move(task), std::move(payload),
                                              std::move(expression), std::move(time_zone), options);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, time_point)>(
        [this](auto handler, detail::put_request req) {
          initiate_put_cron(std::move(req), put_handler(std::move(handler)));
        },
        token, std::move(r));
  }

  /// Creates or upserts many schedules, of any kinds, in few requests: one
  /// function call per 500 schedules, up to four in flight (plus one TIME
  /// read when some are cron schedules), each schedule as its single call would (each spec's
  /// schedule_options::replace and update apply). Every spec gets its own
  /// result, in order: a spec refused here (bad parameters, named with
  /// their values) or by Redis (an existing id without replace or update)
  /// fails alone, and nothing of it is written; the others are not
  /// affected. A request that fails (Redis unreachable) completes with its
  /// error; the results then say which specs were written (calls
  /// answered), which may have been ("not confirmed": sent, no reply) and
  /// which were not sent.
  /// @par Completion Signature
  /// @code void(error_code, std::vector<upsert_result>) @endcode
  template <class Token>
  auto async_upsert_schedules(std::vector<schedule_spec> specs, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::vector<upsert_result>)>(
        [this](auto handler, std::vector<schedule_spec> s) {
          initiate_upsert(std::move(s), upsert_handler(std::move(handler)));
        },
        token, std::move(specs));
  }

  /// Deletes a schedule with its pending occurrence, its extra fires, its
  /// history and its pause (a paused schedule is deleted like any other;
  /// its dead letters stay). A fire of it that is running now finishes, but
  /// its acknowledgement changes nothing.
  /// @par Completion Signature
  /// @code void(error_code, bool existed) @endcode
  template <class Token>
  auto async_cancel(std::string id, Token&& token) {
    check_id(id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, bool)>(
        [this](auto handler, std::string i) {
          initiate_cancel(std::move(i), cancel_handler(std::move(handler)));
        },
        token, std::move(id));
  }

  /// Lists schedules of the namespace in id order (bytewise): up to
  /// query.limit of those whose id starts with query.prefix, after
  /// query.after. Page through them with schedule_page::next_cursor.
  /// @throws std::invalid_argument for a limit of 0 or above 1000.
  /// @par Completion Signature
  /// @code void(error_code, schedule_page) @endcode
  template <class Token>
  auto async_list_schedules(schedule_query query, Token&& token) {
    check_list_limit(query.limit);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, schedule_page)>(
        [this](auto handler, schedule_query q) { initiate_list(std::move(q), list_handler(std::move(handler))); },
        token, std::move(query));
  }

  /// One schedule in full: what listing shows, its counts, last error,
  /// lease and last runs (schedule_options::history_length of them).
  /// @par Completion Signature
  /// @code void(error_code, schedule_details) @endcode
  /// error::no_such_schedule when there is none with this id.
  template <class Token>
  auto async_inspect(std::string id, Token&& token) {
    check_id(id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, schedule_details)>(
        [this](auto handler, std::string i) { initiate_inspect(std::move(i), inspect_handler(std::move(handler))); },
        token, std::move(id));
  }

  /// Pauses a schedule: no process claims a fire of it until it is resumed.
  /// A fire of it running now runs on and is acknowledged as usual (the
  /// schedule moves on to its next occurrence, which waits).
  /// @par Completion Signature
  /// @code void(error_code, bool changed) @endcode
  /// changed is false when it was paused already; error::no_such_schedule.
  template <class Token>
  auto async_pause(std::string id, Token&& token) {
    check_id(id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, bool)>(
        [this](auto handler, std::string i) { initiate_pause(std::move(i), true, cancel_handler(std::move(handler))); },
        token, std::move(id));
  }

  /// Resumes a paused schedule. Its pending occurrence is claimed as after
  /// an outage: a periodic schedule that missed occurrences while paused
  /// follows its misfire_policy (fire once now, skip, catch up); a fire
  /// waiting for a retry runs at its retry time.
  /// @par Completion Signature
  /// @code void(error_code, bool changed) @endcode
  /// changed is false when it was not paused; error::no_such_schedule.
  template <class Token>
  auto async_resume(std::string id, Token&& token) {
    check_id(id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, bool)>(
        [this](auto handler, std::string i) { initiate_pause(std::move(i), false, cancel_handler(std::move(handler))); },
        token, std::move(id));
  }

  /// One extra run of a periodic schedule, due now (Redis's clock), with
  /// its own fire id; the periodic occurrences keep their times. Runs of a
  /// schedule never overlap: while a fire of it runs, the extra one is
  /// queued and runs after it (triggered_fire::queued_behind_running); while
  /// a failed fire waits for its retry, after that; while it is paused,
  /// after it is resumed. Triggering twice within one millisecond runs once.
  /// @par Completion Signature
  /// @code void(error_code, triggered_fire) @endcode
  /// error::no_such_schedule; error::not_periodic for a one-shot.
  template <class Token>
  auto async_trigger_now(std::string id, Token&& token) {
    check_id(id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, triggered_fire)>(
        [this](auto handler, std::string i) { initiate_trigger(std::move(i), trigger_handler(std::move(handler))); },
        token, std::move(id));
  }

  /// Runs the occurrences of a periodic schedule in [from, to) once each,
  /// as extra fires, oldest first, without moving the schedule: those on
  /// the grid of its pending occurrence (next_due + k period: a fixed-rate
  /// schedule's own grid), or a cron schedule's instants (computed here with
  /// its expression and zone: one call more), and before its pending
  /// occurrence (it runs the later ones itself).
  /// Each has the fire id it would have had ("<id>@<ms>"), so handlers that
  /// deduplicate on fire ids skip what already ran. An occurrence waiting
  /// already is not added twice. At most 1000 occurrences per call.
  /// @throws std::invalid_argument unless from < to (naming both).
  /// @par Completion Signature
  /// @code void(error_code, backfill_result) @endcode
  /// error::no_such_schedule; error::not_periodic for a one-shot;
  /// error::too_many_fires (nothing enqueued) above 1000 occurrences.
  template <class Duration1, class Duration2, class Token>
  auto async_backfill(std::string id, std::chrono::time_point<std::chrono::system_clock, Duration1> from,
                      std::chrono::time_point<std::chrono::system_clock, Duration2> to, Token&& token) {
    check_id(id);
    const std::int64_t from_ms = detail::clamp_time_ms(from);
    const std::int64_t to_ms = detail::clamp_time_ms(to);
    check_range(from_ms, to_ms);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, backfill_result)>(
        [this](auto handler, std::string i, std::int64_t f, std::int64_t t) {
          initiate_backfill(std::move(i), f, t, backfill_handler(std::move(handler)));
        },
        token, std::move(id), from_ms, to_ms);
  }

  /// Redis's clock, the one that decides what is due.
  /// @par Completion Signature
  /// @code void(error_code, time_point now) @endcode
  template <class Token>
  auto async_server_time(Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, time_point)>(
        [this](auto handler) { initiate_time(put_handler(std::move(handler))); }, token);
  }

  /// Lists up to `limit` dead letters of the namespace, oldest first.
  /// @throws std::invalid_argument for a zero limit.
  /// @par Completion Signature
  /// @code void(error_code, std::vector<dead_letter>) @endcode
  template <class Token>
  auto async_list_dead_letters(std::size_t limit, Token&& token) {
    check_limit(limit);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::vector<dead_letter>)>(
        [this](auto handler, std::size_t n) { initiate_list_dead(n, list_dead_handler(std::move(handler))); },
        token, limit);
  }

  /// Runs a dead letter again: it becomes a one-shot schedule due at the
  /// fire's own time (so at once), with the same task, payload and failure
  /// policy and a fresh count of attempts, and the dead letter is deleted.
  /// The schedule takes the dead letter's schedule id when no schedule has
  /// it (a one-shot comes back with its fire id), else the fire id (a
  /// periodic schedule that moved on is left alone).
  /// @par Completion Signature
  /// @code void(error_code, std::string schedule_id) @endcode
  /// schedule_id is empty when there is no such dead letter;
  /// error::schedule_exists when both ids are taken; error::out_of_memory
  /// at maxmemory (the dead letter stays).
  template <class Token>
  auto async_redrive_dead_letter(std::string fire_id, Token&& token) {
    check_id(fire_id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::string)>(
        [this](auto handler, std::string f) { initiate_redrive(std::move(f), redrive_handler(std::move(handler))); },
        token, std::move(fire_id));
  }

  /// Deletes a dead letter.
  /// @par Completion Signature
  /// @code void(error_code, bool existed) @endcode
  template <class Token>
  auto async_delete_dead_letter(std::string fire_id, Token&& token) {
    check_id(fire_id);
    return boost::asio::async_initiate<Token, void(boost::system::error_code, bool)>(
        [this](auto handler, std::string f) { initiate_delete_dead(std::move(f), cancel_handler(std::move(handler))); },
        token, std::move(fire_id));
  }

 private:
  using list_dead_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, std::vector<dead_letter>)>;
  using redrive_handler = boost::asio::any_completion_handler<void(boost::system::error_code, std::string)>;
  using put_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, time_point)>;
  using cancel_handler = boost::asio::any_completion_handler<void(boost::system::error_code, bool)>;
  using list_handler = boost::asio::any_completion_handler<void(boost::system::error_code, schedule_page)>;
  using inspect_handler = boost::asio::any_completion_handler<void(boost::system::error_code, schedule_details)>;
  using trigger_handler = boost::asio::any_completion_handler<void(boost::system::error_code, triggered_fire)>;
  using backfill_handler = boost::asio::any_completion_handler<void(boost::system::error_code, backfill_result)>;
  using upsert_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, std::vector<upsert_result>)>;

  template <class Token>
  auto put(detail::put_request r, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, time_point)>(
        [this](auto handler, detail::put_request req) {
          initiate_put(std::move(req), put_handler(std::move(handler)));
        },
        token, std::move(r));
  }

  template <class Rep, class Period>
  static std::int64_t checked_period(std::chrono::duration<Rep, Period> p) {
    // Below one millisecond is refused, not rounded up to one.
    if (!(p >= std::chrono::duration<long double, std::milli>(1))) throw_bad_period();
    return detail::clamp_delay_ms(p);
  }

  /// Checks id, task and options, then assembles the request; `absolute`:
  /// at_ms is a time point, else a delay from Redis's now.
  static detail::put_request make_request(std::string id, std::string task, std::string payload,
                                          detail::schedule_kind kind, const schedule_options& o, bool absolute,
                                          std::int64_t at_ms, std::int64_t period_ms);
  /// Checks a cron schedule's parameters (the expression and zone parse).
  static detail::put_request make_cron_request(std::string id, std::string task, std::string payload,
                                               std::string expression, std::string time_zone,
                                               const schedule_options& o);
  static void check_id(const std::string& id);
  static void check_limit(std::size_t limit);
  static void check_list_limit(std::size_t limit);
  static void check_range(std::int64_t from_ms, std::int64_t to_ms);
  [[noreturn]] static void throw_bad_period();
  void initiate_put(detail::put_request r, put_handler h);
  void initiate_cancel(std::string id, cancel_handler h);
  void initiate_list_dead(std::size_t limit, list_dead_handler h);
  void initiate_redrive(std::string fire_id, redrive_handler h);
  void initiate_delete_dead(std::string fire_id, cancel_handler h);
  void initiate_list(schedule_query q, list_handler h);
  void initiate_inspect(std::string id, inspect_handler h);
  void initiate_pause(std::string id, bool paused, cancel_handler h);
  void initiate_trigger(std::string id, trigger_handler h);
  void initiate_backfill(std::string id, std::int64_t from_ms, std::int64_t to_ms, backfill_handler h);
  void initiate_time(put_handler h);
  void initiate_put_cron(detail::put_request r, put_handler h);
  void initiate_upsert(std::vector<schedule_spec> specs, upsert_handler h);

  std::shared_ptr<detail::scheduler_impl> impl_;
};

}  // namespace chronopool::durable

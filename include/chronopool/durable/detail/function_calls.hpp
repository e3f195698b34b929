// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The Redis function library's calls: argument vectors out, typed results in.
// Pure functions, so the wire shapes are tested without a server.
#pragma once

#include <chronopool/durable/dead_letter.hpp>
#include <chronopool/durable/schedule_info.hpp>
#include <chronopool/durable/detail/key_space.hpp>
#include <chronopool/durable/detail/redis_value.hpp>
#include <chronopool/durable/scheduler_options.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::detail {

enum class schedule_kind { once, fixed_rate, fixed_delay, cron };

/// Deadlines travel as milliseconds since the Unix epoch on the server's
/// clock. Lua numbers are doubles, so everything is kept below 2^50 ms
/// (~35,000 years): later than that means "never" and is clamped there.
inline constexpr std::int64_t max_time_ms = std::int64_t{1} << 50;

/// Milliseconds on the server's clock as a system_clock time point,
/// saturating: "never" (max_time_ms) lies past system_clock's range (~2262).
inline std::chrono::system_clock::time_point to_time_point(std::int64_t ms) {
  using tp = std::chrono::system_clock::time_point;
  constexpr auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(tp::max().time_since_epoch()).count();
  if (ms >= limit) return tp::max();
  if (ms <= -limit) return tp::min();
  return tp(std::chrono::milliseconds(ms));
}

struct put_request {
  std::string id;
  std::string task;
  std::string payload;
  schedule_kind kind = schedule_kind::once;
  bool absolute = false;     ///< at_ms is a time point (else a delay from the server's now)
  std::int64_t at_ms = 0;
  std::int64_t period_ms = 0;
  /// kind cron: the expression and its IANA zone (checked by the caller),
  /// and the instant after at_ms (at_ms: the first after Redis's now).
  std::string cron;
  std::string time_zone;
  std::int64_t cron_next_ms = 0;
  schedule_options options;
  /// The failure policy sent: options.failure, or the scheduler's default.
  failure_policy failure;
};

struct claimed_fire {
  std::string id;
  std::string task;
  std::string payload;
  std::int64_t due_ms = 0;
  std::uint64_t token = 0;
  std::uint32_t attempt = 0;
  std::int64_t lease_expiry_ms = 0;
  std::string epoch;  ///< the namespace's epoch it was claimed in
  std::int64_t claimed_ms = 0;  ///< Redis's time at the claim (its claim lag: claimed_ms - due_ms)
  std::string cron;       ///< of a cron schedule: its expression, else empty
  std::string time_zone;  ///< of a cron schedule: its IANA zone
  std::uint32_t partition = 0;  ///< the namespace's partition it was claimed from
};

/// What an ack or nack of a cron fire tells the library (library.lua,
/// "Cron"): instants computed here with the shared cron code, among which
/// Redis's clock chooses the schedule's next occurrence. max_time_ms: none.
struct cron_plan {
  std::int64_t after_due = 0;        ///< a: the first instant after the fire's due
  std::int64_t after_after_due = 0;  ///< a2: the one after a
  std::int64_t after_now = 0;        ///< j: the first after a lower bound of Redis's now
  std::int64_t after_after_now = 0;  ///< j2: the one after j
};

/// One item's reply of cp_put_many_v5.
struct put_many_item {
  std::string outcome;  ///< created, replaced, updated, unchanged, or error
  std::int64_t due_ms = 0;
  std::string error_text;  ///< the library's text when outcome is error
};

struct claim_result {
  std::int64_t server_now_ms = 0;
  std::int64_t next_event_ms = -1;  ///< -1: nothing scheduled
  std::string epoch;                ///< the namespace's epoch (never empty)
  std::vector<claimed_fire> fires;
};

/// The name the library registers ("#!lua name=...").
inline constexpr const char library_name[] = "chronopool_v5";

/// Schedules per cp_put_many_v5 call (each takes 18 arguments).
inline constexpr std::size_t put_many_batch = 500;

/// The longest error text a nack carries to Redis (longer texts are cut).
inline constexpr std::size_t max_error_bytes = 1024;

std::vector<std::string> load_functions_call();
/// FUNCTION LIST of our library with its code: read-only, so Redis answers
/// it at maxmemory, where FUNCTION LOAD is refused.
std::vector<std::string> list_functions_call();
/// The revision a library's code states on its second line ("-- chronopool
/// library revision N"); 0 for code without one (builds before revisions).
std::uint64_t library_revision(std::string_view code) noexcept;
/// This build's library revision.
std::uint64_t our_library_revision() noexcept;

/// What to do about the library Redis has, from FUNCTION LIST.
enum class library_state {
  current,       ///< our library with exactly this build's code: nothing to load
  load,          ///< none, or one of a lower revision: load ours over it
  newer_loaded,  ///< one of a higher revision: keep it (same name, same calls)
};
/// Reads the FUNCTION LIST reply; version_mismatch (with the revisions in
/// its text) when Redis has our library's revision with other code: two
/// builds disagree on what that revision is, and neither may overwrite the
/// other.
boost::system::error_code parse_library_state(const redis_value& v, library_state& state);
std::vector<std::string> put_call(const key_space& ks, const put_request& r);
/// `max_bytes`: the fires' task names and payloads fit in it, but for the
/// first (0: no bound).
std::vector<std::string> claim_call(const key_space& ks, std::string_view owner,
                                    std::int64_t lease_ms, std::size_t n, std::size_t max_bytes = 0);
/// `epoch`: the one the fire was claimed in; the ack (nack, extension)
/// fails with data_lost when the namespace's is another. Empty: not checked.
std::vector<std::string> ack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                  std::string_view epoch = {}, const cron_plan* plan = nullptr);
/// cp_put_many_v5 of requests [first, last) of `rs`.
std::vector<std::string> put_many_call(const key_space& ks, const std::vector<put_request>& rs, std::size_t first,
                                       std::size_t last);
/// `jitter` in [0, 1000000]: where in [b/2, b] the backoff b lands;
/// `error_text` is cut to max_error_bytes.
std::vector<std::string> nack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                   std::uint32_t jitter, std::string_view error_text, std::string_view epoch = {},
                                   const cron_plan* plan = nullptr);
std::vector<std::string> extend_call(const key_space& ks, std::string_view id,
                                     std::uint64_t token, std::int64_t lease_ms, std::string_view epoch = {});
/// Gives back a claimed fire that never started, without counting an attempt.
std::vector<std::string> release_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                      std::string_view epoch = {});
std::vector<std::string> cancel_call(const key_space& ks, std::string_view id);
std::vector<std::string> get_call(const key_space& ks, std::string_view id);
std::vector<std::string> dead_list_call(const key_space& ks, std::size_t n);
std::vector<std::string> dead_redrive_call(const key_space& ks, std::string_view fire_id);
std::vector<std::string> dead_delete_call(const key_space& ks, std::string_view fire_id);
/// The most schedules one list call returns, and occurrences one backfill enqueues.
inline constexpr std::size_t max_list = 1000;
inline constexpr std::size_t max_backfill = 1000;
std::vector<std::string> list_call(const key_space& ks, std::string_view prefix, std::string_view after,
                                   std::size_t n);
std::vector<std::string> inspect_call(const key_space& ks, std::string_view id);
std::vector<std::string> pause_call(const key_space& ks, std::string_view id);
std::vector<std::string> resume_call(const key_space& ks, std::string_view id);
std::vector<std::string> trigger_call(const key_space& ks, std::string_view id);
/// [from_ms, to_ms), at most `limit` occurrences; `instants`: a cron
/// schedule's, computed here (see parse_backfill).
std::vector<std::string> backfill_call(const key_space& ks, std::string_view id, std::int64_t from_ms,
                                       std::int64_t to_ms, std::size_t limit = max_backfill,
                                       const std::vector<std::int64_t>& instants = {});
std::vector<std::string> time_call(const key_space& ks);
/// cp_partitions_v5 on the namespace's unpartitioned prefix @p meta: the
/// stored partition count (written as @p partitions on first use), read
/// with parse_integer.
std::vector<std::string> partitions_call(const key_space& meta, std::uint32_t partitions);

/// Maps an error reply of the library to an error_code: "STALE ..." to
/// stale_lease, "EXISTS ..." to schedule_exists, "DATA_LOST ..." to data_lost, "OOM ..." to out_of_memory
/// and "NOAUTH ..." / "WRONGPASS ..." to auth_failed (both with Redis's
/// text), "NOTFOUND ..." to no_such_schedule, "NOTPERIODIC ..." to
/// not_periodic, "RANGE ..." to too_many_fires (with Redis's text),
/// "PARTITIONS ..." to partitions_mismatch (with the library's text),
/// anything else to server_error. A non-error value maps to success.
boost::system::error_code error_of(const redis_value& v);

/// Each parser returns protocol_error when the reply has the wrong shape,
/// the mapped error for error replies, success otherwise.
boost::system::error_code parse_claim(const redis_value& v, claim_result& out);
/// {due_ms, server_now_ms} of cp_put_v1.
boost::system::error_code parse_put(const redis_value& v, std::int64_t& due_ms);
/// cp_ack_v1: `acked` is false for a repeated ack or a schedule that is gone.
boost::system::error_code parse_ack(const redis_value& v, bool& acked, std::int64_t& next_due_ms);
/// cp_nack_v5: `dead` when the fire was dead-lettered; `at` is then the
/// schedule's next due (-1: it ended), else when the fire may run again.
boost::system::error_code parse_nack(const redis_value& v, bool& dead, std::int64_t& at);
/// cp_dead_list_v5.
boost::system::error_code parse_dead_list(const redis_value& v, std::vector<dead_letter>& out);
/// A single text reply (re-drive: the schedule id created, empty for none).
boost::system::error_code parse_text(const redis_value& v, std::string& out);
/// A single integer reply (extend, cancel, deleting a dead letter, pause,
/// resume, time).
boost::system::error_code parse_integer(const redis_value& v, std::int64_t& out);
/// cp_list_v5.
boost::system::error_code parse_list(const redis_value& v, schedule_page& out);
/// cp_inspect_v5.
boost::system::error_code parse_inspect(const redis_value& v, schedule_details& out);
/// cp_trigger_v5 of schedule `id`.
boost::system::error_code parse_trigger(const redis_value& v, std::string_view id, triggered_fire& out);
/// A cron schedule's backfill needs its instants: cp_backfill_v5 called
/// without them answers with these.
struct cron_backfill_ask {
  bool asked = false;
  std::int64_t due_ms = 0;  ///< the pending occurrence: instants before it only
  std::string cron;
  std::string time_zone;
};
/// cp_backfill_v5; `ask` is filled (and out left alone) when the library
/// asks for a cron schedule's instants.
boost::system::error_code parse_backfill(const redis_value& v, backfill_result& out, cron_backfill_ask* ask = nullptr);
/// cp_put_many_v5: one entry per item sent, in order.
boost::system::error_code parse_put_many(const redis_value& v, std::vector<put_many_item>& out);
/// One history entry, "<due> <token> <finished> <attempt> <outcome> <error>",
/// of schedule `id`; false when it does not have that shape.
bool parse_run_record(std::string_view entry, std::string_view id, run_record& out);

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Settings of a durable scheduler and of one schedule.
#pragma once

#include <chronopool/durable/redis_options.hpp>
#include <chronopool/log.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace chronopool::durable {

struct fire_context;

/// What a periodic schedule does when it finds a whole period or more
/// missed (after an outage, or when no worker was running). One-shots
/// always fire. A cron schedule (scheduler::async_schedule_cron) runs its
/// pending instant however late, then makes up the *earliest* missed
/// instants, at most 1, 0 or catch_up_max in a row, as chronopool's
/// cron_misfire does in process, before the first instant still ahead.
enum class misfire_policy {
  /// Fire once now for the latest missed occurrence, then continue on the
  /// schedule (Quartz's "fire now"). The default.
  fire_once_now,
  /// Fire nothing for the missed occurrences; the next one fires on time.
  skip,
  /// Fire the latest catch_up_max missed occurrences one after another.
  catch_up,
};

/// What happens to a fire whose handler fails (throws, times out, or finds
/// no handler in the process that claimed it; a lease that runs out counts
/// too): attempt k is retried after a wait drawn from [b/2, b], where
/// b = min(max_backoff, initial_backoff * multiplier^(k-1)); when attempt
/// max_attempts fails as well, the fire becomes a dead letter
/// (scheduler::async_list_dead_letters) and a periodic schedule moves on to
/// its next occurrence. See docs/durable.md, "Failures". The defaults are
/// also the Redis library's (src/durable/functions/library.lua).
struct failure_policy {
  /// How many times one occurrence runs at most, the first run included; at least 1.
  std::uint32_t max_attempts = 5;
  /// The wait before the second attempt (before jitter); not negative.
  std::chrono::milliseconds initial_backoff{1000};
  /// Each further wait is this many times the previous one; finite, at least 1.
  double multiplier = 2.0;
  /// No wait is longer than this (before jitter); not negative.
  std::chrono::milliseconds max_backoff{60000};
};

/// Settings of one task name's handler in this process.
struct handler_options {
  /// A run longer than this is abandoned: its stop token is requested, its
  /// lease given back as a failed attempt (so it is retried or dead-lettered
  /// per the schedule's failure_policy), and its eventual return ignored.
  /// Zero: no limit (the default); not negative.
  std::chrono::milliseconds timeout{0};
};

/// Per-schedule settings.
struct schedule_options {
  /// What a periodic schedule does about missed occurrences.
  misfire_policy misfire = misfire_policy::fire_once_now;
  /// With misfire_policy::catch_up: how many missed occurrences to fire; at least 1.
  std::uint32_t catch_up_max = 1;
  /// Replace an existing schedule with the same id instead of failing with
  /// error::schedule_exists. One created with the same start time point and
  /// exactly these parameters (task, payload, kind, period, misfire
  /// settings, failure policy) is kept as it is, with its position and
  /// counts, so re-creating schedules at each deploy does not run again
  /// what already ran. A start given as a delay from now always replaces.
  bool replace = false;
  /// Update in place: an existing schedule with the same id takes these
  /// task, payload, kind, period, misfire settings and failure policy, and
  /// keeps its pending occurrence, its lease and its counts (what ran stays
  /// ran; the new start is not applied, a new period from the next
  /// occurrence on). Without one, the schedule is created. Wins over replace.
  bool update = false;
  /// Retries and dead letters of this schedule's fires; empty: the
  /// scheduler's scheduler_options::failure. Fixed when the schedule is created.
  std::optional<failure_policy> failure;
  /// How many of its last runs the schedule keeps in Redis, for
  /// scheduler::async_inspect (each acknowledged, failed or expired
  /// attempt is one, recorded in the same step as the acknowledgement);
  /// 0 to 1000, 0: none.
  std::uint32_t history_length = 10;
};

/// The most partitions a namespace may have (scheduler_options::partitions).
inline constexpr std::uint32_t max_partitions = 1024;

/// Settings of one scheduler (one process's view of a namespace).
struct scheduler_options {
  /// Where the Redis server is and how to log in.
  redis_options redis;
  /// Schedules live under the keys "cp:{<name_space>}:...": one hash tag, so
  /// one cluster slot. Processes sharing a namespace share its schedules and
  /// must register the same task names. 1 to 256 bytes, without '{', '}' or
  /// control characters (the scheduler's constructor checks).
  std::string name_space = "default";
  /// How many partitions the namespace's schedules are spread over, 1 to
  /// max_partitions. Each partition has a Redis hash tag of its own
  /// ("cp:{<name_space>{<k>}:...", or the one-slot layout above for 1, the
  /// default), so Redis Cluster places partitions on different masters;
  /// every Redis call touches one partition. A schedule's partition is a
  /// fixed hash of its id (the part before its first '@': see
  /// docs/durable.md, "Partitions"). The first process to use a namespace
  /// stores its count; a scheduler configured with another one fails every
  /// operation with error::partitions_mismatch (connection_error() reports
  /// it, with both counts) and touches nothing. A namespace that holds data
  /// from before partitions has 1.
  std::uint32_t partitions = 1;
  /// Recorded in each lease; empty means "<hostname>:<pid>:<random>".
  std::string owner;
  /// How long a claimed fire is reserved for this process. Extended every
  /// lease / 3 while its handler runs; must be longer than the worst pause
  /// (GC-like stalls, SIGSTOP, network partition) for at-most-one-holder.
  std::chrono::milliseconds lease{30000};
  /// Upper bound on the sleep between claims when no pub/sub wake-up comes.
  std::chrono::milliseconds max_poll{1000};
  /// At most this many fires are claimed per request ...
  std::size_t claim_batch = 16;
  /// ... and at most this many run here at once.
  std::size_t max_in_flight = 64;
  /// The largest payload a schedule may be created with, in bytes; a larger
  /// one is refused with error::payload_too_large, whose message names both
  /// sizes (nothing is written). Positive. Schedules stored already, and
  /// dead letters re-driven, are not checked.
  std::size_t max_payload_bytes = std::size_t{1} << 20;
  /// A claim returns no more fires than fit in this many bytes of task
  /// names and payloads, and always at least one: fires with big payloads
  /// come a few per claim (the rest stay due for the next one) instead of
  /// all in one reply that delays every fire behind it. Positive.
  std::size_t max_claim_reply_bytes = std::size_t{4} << 20;
  /// The failure policy of schedules created without one of their own
  /// (schedule_options::failure), one-shots included.
  failure_policy failure;
  /// Reconnection backoff: doubles from min to max, with jitter. The first
  /// wait; positive.
  std::chrono::milliseconds reconnect_min{50};
  /// The longest wait between reconnection attempts; at least reconnect_min.
  std::chrono::milliseconds reconnect_max{2000};
  /// A handler without a handler_options::timeout of its own that runs
  /// longer than this is treated as one that ran past its timeout: asked to
  /// stop, its lease no longer extended but given back as a failed attempt
  /// (retried or dead-lettered per the failure_policy), its late return
  /// ignored. So a hung handler does not hold its fire for ever. Zero: no
  /// bound (the lease is extended for as long as the handler runs); not negative.
  std::chrono::milliseconds max_run_time{std::chrono::hours(1)};
  /// stop() gives back at once the fires it claimed whose handlers have not
  /// started (they never start here), then waits this long for running
  /// handlers to return and be acknowledged.
  std::chrono::milliseconds stop_timeout{5000};
  /// Called (on the worker that ran it) when a handler throws; the fire is
  /// given back, to be retried or dead-lettered per its failure_policy. Empty: the error is logged
  /// (a warning, event "handler_failed") to log_handler.
  std::function<void(const fire_context&, std::exception_ptr)> on_handler_error;
  /// Where this scheduler's log records go (component "durable"): links
  /// failing and coming back ("connection_failed", "auth_failed",
  /// "out_of_memory", "connected": each logged when it changes, not at every
  /// retry), handler errors nobody took, fires dead-lettered or timed out
  /// here (warnings "dead_lettered", "handler_timed_out"), control loop errors. Empty: the
  /// process-wide handler (chronopool::set_log_handler).
  chronopool::log_handler log_handler{};
};

}  // namespace chronopool::durable

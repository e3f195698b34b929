// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::durable::scheduler: argument checks, then the impl.
#include <chronopool/durable/scheduler.hpp>

#include "scheduler_impl.hpp"

#include <chronopool/cron_schedule.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace chronopool::durable {

namespace {

// The value for an error message: control bytes as \xNN, long names cut.
std::string printable(std::string_view v) {
  std::string out;
  for (const char ch : v.substr(0, 64)) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (v.size() > 64) out += "... (" + std::to_string(v.size()) + " bytes)";
  return out;
}

// Keys are "cp:{<name_space>}:<suffix>". A '}' would end the hash tag early
// ("x}:s:y" shares a slot and key names with namespace "x"), a '{' would
// make the tag ambiguous, and control bytes have no business in key names
// (they also break redis-cli and logs). Everything else, ':' included, sits
// safely between the braces, so names accepted before (and the schedules
// stored under them) stay usable.
void check_name_space(const std::string& ns) {
  constexpr std::size_t max_size = 256;
  const auto fail = [&](const char* why) {
    throw std::invalid_argument("chronopool::durable::scheduler: name_space \"" + printable(ns) + "\" " + why);
  };
  if (ns.empty()) fail("must not be empty");
  if (ns.size() > max_size) fail("is longer than 256 bytes");
  for (const char ch : ns) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '{' || c == '}') fail("must not contain '{' or '}' (they delimit the Redis hash tag)");
    if (c < 0x20 || c == 0x7f) fail("must not contain control characters");
  }
}

// A failure policy's parameters, each named with its value when wrong;
// `where` says whose policy it is (scheduler_options.failure, ...).
void check_failure_policy(const failure_policy& f, const char* where) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("chronopool::durable::scheduler: " + std::string(where) + "." + what);
  };
  if (f.max_attempts == 0) fail("max_attempts must be at least 1, got 0");
  if (f.initial_backoff.count() < 0)
    fail("initial_backoff must not be negative, got " + std::to_string(f.initial_backoff.count()) + " ms");
  if (f.max_backoff.count() < 0)
    fail("max_backoff must not be negative, got " + std::to_string(f.max_backoff.count()) + " ms");
  if (!std::isfinite(f.multiplier) || f.multiplier < 1.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", f.multiplier);
    fail(std::string("multiplier must be finite and at least 1, got ") + buf);
  }
}

}  // namespace

scheduler::scheduler(executor_type work, scheduler_options options) {
  check_name_space(options.name_space);
  if (options.partitions < 1 || options.partitions > max_partitions)
    throw std::invalid_argument("chronopool::durable::scheduler: scheduler_options.partitions must be 1 to " +
                                std::to_string(max_partitions) + ", got " + std::to_string(options.partitions));
  if (options.lease < std::chrono::milliseconds(3))
    throw std::invalid_argument("chronopool::durable::scheduler: lease must be at least 3 ms");
  if (options.claim_batch == 0 || options.max_in_flight == 0)
    throw std::invalid_argument("chronopool::durable::scheduler: claim_batch and max_in_flight must be positive");
  if (options.max_payload_bytes == 0 || options.max_claim_reply_bytes == 0)
    throw std::invalid_argument(
        std::string("chronopool::durable::scheduler: scheduler_options.") +
        (options.max_payload_bytes == 0 ? "max_payload_bytes" : "max_claim_reply_bytes") + " must be positive, got 0");
  if (options.max_poll <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("chronopool::durable::scheduler: max_poll must be positive");
  if (options.reconnect_min <= std::chrono::milliseconds::zero() || options.reconnect_max < options.reconnect_min)
    throw std::invalid_argument("chronopool::durable::scheduler: need 0 < reconnect_min <= reconnect_max");
  check_failure_policy(options.failure, "scheduler_options.failure");
  if (options.max_run_time.count() < 0)
    throw std::invalid_argument(
        "chronopool::durable::scheduler: scheduler_options.max_run_time must not be negative, got " +
        std::to_string(options.max_run_time.count()) + " ms");
  if (!work)
    throw std::invalid_argument("chronopool::durable::scheduler: the work executor is empty");
  impl_ = std::make_shared<detail::scheduler_impl>(std::move(work), std::move(options));
  impl_->launch();
}

scheduler::~scheduler() {
  if (impl_) impl_->stop();
}

scheduler::executor_type scheduler::get_executor() const noexcept { return impl_->work_executor(); }

const std::string& scheduler::owner() const noexcept { return impl_->owner(); }

void scheduler::register_handler(std::string task, task_handler handler) {
  if (task.empty()) throw std::invalid_argument("chronopool::durable::scheduler::register_handler: empty task name");
  if (!handler) throw std::invalid_argument("chronopool::durable::scheduler::register_handler: empty handler");
  impl_->register_handler(std::move(task), std::move(handler), {});
}

void scheduler::register_handler(std::string task, task_handler handler, handler_options options) {
  if (task.empty()) throw std::invalid_argument("chronopool::durable::scheduler::register_handler: empty task name");
  if (!handler) throw std::invalid_argument("chronopool::durable::scheduler::register_handler: empty handler");
  if (options.timeout.count() < 0)
    throw std::invalid_argument(
        "chronopool::durable::scheduler::register_handler: handler_options.timeout must not be negative, got " +
        std::to_string(options.timeout.count()) + " ms");
  impl_->register_handler(std::move(task), std::move(handler), options);
}

void scheduler::start() { impl_->start(); }

void scheduler::stop() { impl_->stop(); }

scheduler_stats scheduler::stats() const { return impl_->stats(); }

boost::system::error_code scheduler::connection_error() const { return impl_->connection_error(); }

detail::put_request scheduler::make_request(std::string id, std::string task, std::string payload,
                                            detail::schedule_kind kind, const schedule_options& o, bool absolute,
                                            std::int64_t at_ms, std::int64_t period_ms) {
  check_id(id);
  if (task.empty()) throw std::invalid_argument("chronopool::durable::scheduler: empty task name");
  if (o.misfire == misfire_policy::catch_up && o.catch_up_max == 0)
    throw std::invalid_argument("chronopool::durable::scheduler: catch_up_max must be at least 1");
  if (o.failure) check_failure_policy(*o.failure, "schedule_options.failure");
  if (o.history_length > 1000)
    throw std::invalid_argument("chronopool::durable::scheduler: schedule_options.history_length must be at most 1000, got " +
                                std::to_string(o.history_length));
  detail::put_request r;
  r.id = std::move(id);
  r.task = std::move(task);
  r.payload = std::move(payload);
  r.kind = kind;
  r.absolute = absolute;
  r.at_ms = at_ms;
  r.period_ms = period_ms;
  r.options = o;
  return r;
}

detail::put_request scheduler::make_cron_request(std::string id, std::string task, std::string payload,
                                                 std::string expression, std::string time_zone,
                                                 const schedule_options& o) {
  // The expression alone first (in UTC), so an error names the parameter
  // that is wrong; then in its zone.
  try {
    chronopool::cron_schedule check(expression, "UTC");
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("chronopool::durable::scheduler: expression '" + printable(expression) +
                                "' is not a valid cron expression: " + e.what());
  }
  try {
    chronopool::cron_schedule check(expression, time_zone);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("chronopool::durable::scheduler: time_zone '" + printable(time_zone) +
                                "' is not a known IANA time zone: " + e.what());
  }
  detail::put_request r = make_request(std::move(id), std::move(task), std::move(payload),
                                       detail::schedule_kind::cron, o, true, 0, 0);
  r.cron = std::move(expression);
  r.time_zone = std::move(time_zone);
  return r;
}

void scheduler::check_id(const std::string& id) {
  if (id.empty()) throw std::invalid_argument("chronopool::durable::scheduler: empty schedule id");
}

void scheduler::check_limit(std::size_t limit) {
  if (limit == 0) throw std::invalid_argument("chronopool::durable::scheduler::async_list_dead_letters: limit must be positive, got 0");
}

void scheduler::check_list_limit(std::size_t limit) {
  if (limit == 0 || limit > detail::max_list)
    throw std::invalid_argument(
        "chronopool::durable::scheduler::async_list_schedules: schedule_query.limit must be 1 to 1000, got " +
        std::to_string(limit));
}

void scheduler::check_range(std::int64_t from_ms, std::int64_t to_ms) {
  if (from_ms >= to_ms)
    throw std::invalid_argument("chronopool::durable::scheduler::async_backfill: from (" + std::to_string(from_ms) +
                                " ms since the epoch) must be before to (" + std::to_string(to_ms) + " ms)");
}

void scheduler::throw_bad_period() {
  throw std::invalid_argument("chronopool::durable::scheduler: the period must be at least one millisecond");
}

void scheduler::initiate_put(detail::put_request r, put_handler h) { impl_->put(std::move(r), std::move(h)); }

void scheduler::initiate_cancel(std::string id, cancel_handler h) { impl_->cancel(std::move(id), std::move(h)); }

void scheduler::initiate_list_dead(std::size_t limit, list_dead_handler h) { impl_->list_dead(limit, std::move(h)); }

void scheduler::initiate_redrive(std::string fire_id, redrive_handler h) {
  impl_->redrive(std::move(fire_id), std::move(h));
}

void scheduler::initiate_delete_dead(std::string fire_id, cancel_handler h) {
  impl_->delete_dead(std::move(fire_id), std::move(h));
}

void scheduler::initiate_list(schedule_query q, list_handler h) { impl_->list_schedules(std::move(q), std::move(h)); }

void scheduler::initiate_inspect(std::string id, inspect_handler h) { impl_->inspect(std::move(id), std::move(h)); }

void scheduler::initiate_pause(std::string id, bool paused, cancel_handler h) {
  impl_->pause(std::move(id), paused, std::move(h));
}

void scheduler::initiate_trigger(std::string id, trigger_handler h) { impl_->trigger_now(std::move(id), std::move(h)); }

void scheduler::initiate_backfill(std::string id, std::int64_t from_ms, std::int64_t to_ms, backfill_handler h) {
  impl_->backfill(std::move(id), from_ms, to_ms, std::move(h));
}

void scheduler::initiate_time(put_handler h) { impl_->server_time(std::move(h)); }

void scheduler::initiate_put_cron(detail::put_request r, put_handler h) { impl_->put_cron(std::move(r), std::move(h)); }

void scheduler::initiate_upsert(std::vector<schedule_spec> specs, upsert_handler h) {
  // Each spec checked as its single call would check it, each refusal
  // naming the parameter and its value; refused specs are not sent.
  std::vector<detail::put_request> requests;
  std::vector<upsert_result> results(specs.size());
  std::vector<std::size_t> sent;  // for each request, its spec's index
  requests.reserve(specs.size());
  sent.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    schedule_spec& s = specs[i];
    results[i].id = s.id;
    const auto refuse = [&](const std::string& why) {
      throw std::invalid_argument("chronopool::durable::scheduler::async_upsert_schedules: schedule '" +
                                  printable(s.id) + "': " + why);
    };
    try {
      if (s.delay.count() < 0)
        refuse("schedule_spec.delay must not be negative, got " + std::to_string(s.delay.count()) + " ms");
      const bool absolute = s.start.has_value();
      const std::int64_t at_ms = absolute ? detail::clamp_time_ms(*s.start) : detail::clamp_delay_ms(s.delay);
      if (s.kind != schedule_kind::cron && !s.cron.empty())
        refuse("schedule_spec.cron '" + printable(s.cron) + "' is set, but kind is not cron");
      switch (s.kind) {
        case schedule_kind::one_shot:
          if (s.period.count() != 0)
            refuse("schedule_spec.period must be 0 for a one-shot, got " + std::to_string(s.period.count()) + " ms");
          requests.push_back(make_request(std::move(s.id), std::move(s.task), std::move(s.payload),
                                          detail::schedule_kind::once, s.options, absolute, at_ms, 0));
          break;
        case schedule_kind::fixed_rate:
        case schedule_kind::fixed_delay: {
          if (s.period.count() < 1)
            refuse("schedule_spec.period must be at least 1 ms, got " + std::to_string(s.period.count()) + " ms");
          if (s.kind == schedule_kind::fixed_delay && absolute)
            refuse("schedule_spec.start must be empty for a fixed-delay schedule (it starts after delay)");
          requests.push_back(make_request(std::move(s.id), std::move(s.task), std::move(s.payload),
                                          s.kind == schedule_kind::fixed_rate ? detail::schedule_kind::fixed_rate
                                                                              : detail::schedule_kind::fixed_delay,
                                          s.options, absolute, at_ms, detail::clamp_delay_ms(s.period)));
          break;
        }
        case schedule_kind::cron:
          // A cron expression is its own period: a fixed one beside it
          // would be a second schedule to reconcile.
          if (s.period.count() != 0)
            refuse("schedule_spec.period must be 0 for a cron schedule (its expression '" + printable(s.cron) +
                   "' sets the times), got " + std::to_string(s.period.count()) + " ms");
          if (absolute || s.delay.count() != 0)
            refuse("schedule_spec.start and delay must be empty for a cron schedule (it starts at the first "
                   "instant after Redis's now)");
          if (s.cron.empty()) refuse("schedule_spec.cron must not be empty for a cron schedule");
          requests.push_back(make_cron_request(std::move(s.id), std::move(s.task), std::move(s.payload),
                                               std::move(s.cron), std::move(s.time_zone), s.options));
          break;
      }
      sent.push_back(i);
    } catch (const std::invalid_argument& e) {
      results[i].outcome = upsert_outcome::failed;
      results[i].error = e.what();
    }
  }
  impl_->upsert(std::move(requests), std::move(sent), std::move(results), std::move(h));
}

}  // namespace chronopool::durable

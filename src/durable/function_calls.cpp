// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Argument vectors for, and replies of, the chronopool_v5 Redis functions.
#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/error.hpp>

#include "functions_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace chronopool::durable::detail {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }
std::string num(std::uint64_t v) { return std::to_string(v); }

std::int64_t clamp_ms(std::int64_t v) { return std::clamp<std::int64_t>(v, -max_time_ms, max_time_ms); }

// FCALL <fn> 1 <due key> args...
std::vector<std::string> fcall(const key_space& ks, const char* fn, std::vector<std::string> args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 4);
  out.emplace_back("FCALL");
  out.emplace_back(fn);
  out.emplace_back("1");
  out.push_back(ks.due_key());
  for (auto& a : args) out.push_back(std::move(a));
  return out;
}

const char* kind_name(schedule_kind k) {
  switch (k) {
    case schedule_kind::once: return "once";
    case schedule_kind::fixed_rate: return "rate";
    case schedule_kind::fixed_delay: return "delay";
    case schedule_kind::cron: return "cron";
  }
  return "once";
}

const char* misfire_name(misfire_policy m) {
  switch (m) {
    case misfire_policy::fire_once_now: return "once";
    case misfire_policy::skip: return "skip";
    case misfire_policy::catch_up: return "catch_up";
  }
  return "once";
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool to_int64(const redis_value& v, std::int64_t& out) {
  if (v.is_integer()) {
    out = v.integer;
    return true;
  }
  if (!v.is_text()) return false;
  const auto* b = v.str.data();
  const auto* e = b + v.str.size();
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc{} && p == e;
}

bool to_text(const redis_value& v, std::string& out) {
  if (!v.is_text()) return false;
  out = v.str;
  return true;
}

const boost::system::error_code protocol_error = make_error_code(error::protocol_error);

}  // namespace

std::vector<std::string> load_functions_call() {
  return {"FUNCTION", "LOAD", "REPLACE", functions_source};
}

std::vector<std::string> list_functions_call() {
  return {"FUNCTION", "LIST", "LIBRARYNAME", library_name, "WITHCODE"};
}

std::uint64_t library_revision(std::string_view code) noexcept {
  // Only the line after "#!lua name=...": a revision mentioned elsewhere
  // (a comment) does not count.
  constexpr std::string_view marker = "\n-- chronopool library revision ";
  const auto first_line = code.find('\n');
  if (first_line == std::string_view::npos || code.compare(first_line, marker.size(), marker) != 0) return 0;
  const char* b = code.data() + first_line + marker.size();
  std::uint64_t n = 0;
  const auto [p, ec] = std::from_chars(b, code.data() + code.size(), n);
  return ec == std::errc{} && p != b ? n : 0;
}

std::uint64_t our_library_revision() noexcept {
  static const std::uint64_t r = library_revision(functions_source);
  return r;
}

boost::system::error_code parse_library_state(const redis_value& v, library_state& state) {
  state = library_state::load;
  if (v.is_error()) return error_of(v);
  if (!v.is_array()) return protocol_error;
  // One entry per library whose name matches (LIBRARYNAME is a pattern, so
  // look at the name too), each a flat list of field name, value, ...
  for (const auto& lib : v.elements) {
    if (!lib.is_array()) return protocol_error;
    bool ours = false;
    const redis_value* code = nullptr;
    for (std::size_t i = 0; i + 1 < lib.elements.size(); i += 2) {
      const auto& key = lib.elements[i];
      if (!key.is_text()) continue;
      const auto& value = lib.elements[i + 1];
      if (key.text() == "library_name") ours = value.is_text() && value.text() == library_name;
      if (key.text() == "library_code") code = &value;
    }
    if (!ours || code == nullptr || !code->is_text()) continue;
    const std::string_view loaded = code->text();
    if (loaded == std::string_view(functions_source)) {
      state = library_state::current;
      return {};
    }
    const auto theirs = library_revision(loaded);
    const auto mine = our_library_revision();
    if (theirs > mine) {
      state = library_state::newer_loaded;
    } else if (theirs == mine) {
      return make_error_code(error::version_mismatch,
                             fmt::format("{} revision {} is loaded with other code than this build's revision {}: "
                                         "two builds disagree on that revision",
                                         library_name, theirs, mine));
    }
  }
  return {};
}

namespace {

// The 18 arguments of one schedule for cp_put_v5 and cp_put_many_v5
// (schedules.lua: put_one), appended to `out`.
void append_put_args(std::vector<std::string>& out, const put_request& r) {
  out.push_back(r.id);
  out.push_back(r.task);
  out.push_back(r.payload);
  out.emplace_back(kind_name(r.kind));
  out.emplace_back(r.absolute ? "abs" : "in");
  out.push_back(num(clamp_ms(r.at_ms)));
  out.push_back(num(clamp_ms(r.period_ms)));
  out.emplace_back(misfire_name(r.options.misfire));
  out.push_back(num(static_cast<std::int64_t>(r.options.catch_up_max)));
  out.emplace_back(r.options.update ? "2" : r.options.replace ? "1" : "0");
  out.push_back(num(static_cast<std::int64_t>(r.options.history_length)));
  // The default policy is the library's too: sent empty, not stored, so a
  // schedule with it costs no more than before there were policies.
  const failure_policy d{};
  const auto& f = r.failure;
  if (f.max_attempts != d.max_attempts || f.initial_backoff != d.initial_backoff || f.multiplier != d.multiplier ||
      f.max_backoff != d.max_backoff) {
    out.push_back(num(static_cast<std::int64_t>(f.max_attempts)));
    out.push_back(num(clamp_ms(f.initial_backoff.count())));
    out.push_back(fmt::format("{}", f.multiplier));
    out.push_back(num(clamp_ms(f.max_backoff.count())));
  } else {
    out.insert(out.end(), 4, std::string());
  }
  if (r.kind == schedule_kind::cron) {
    out.push_back(r.cron);
    out.push_back(r.time_zone);
    out.push_back(num(clamp_ms(r.cron_next_ms)));
  } else {
    out.insert(out.end(), 3, std::string());
  }
}

constexpr std::size_t put_args = 18;

void append_plan(std::vector<std::string>& args, const cron_plan& p) {
  args.push_back(num(clamp_ms(p.after_due)));
  args.push_back(num(clamp_ms(p.after_after_due)));
  args.push_back(num(clamp_ms(p.after_now)));
  args.push_back(num(clamp_ms(p.after_after_now)));
}

}  // namespace

std::vector<std::string> put_call(const key_space& ks, const put_request& r) {
  std::vector<std::string> args;
  args.reserve(put_args);
  append_put_args(args, r);
  return fcall(ks, "cp_put_v5", std::move(args));
}

std::vector<std::string> put_many_call(const key_space& ks, const std::vector<put_request>& rs, std::size_t first,
                                       std::size_t last) {
  std::vector<std::string> args;
  args.reserve((last - first) * put_args);
  for (std::size_t i = first; i < last; ++i) append_put_args(args, rs[i]);
  return fcall(ks, "cp_put_many_v5", std::move(args));
}

std::vector<std::string> claim_call(const key_space& ks, std::string_view owner, std::int64_t lease_ms,
                                    std::size_t n, std::size_t max_bytes) {
  std::vector<std::string> args{std::string(owner), num(lease_ms), num(static_cast<std::uint64_t>(n))};
  if (max_bytes > 0) args.push_back(num(static_cast<std::uint64_t>(max_bytes)));
  return fcall(ks, "cp_claim_v5", std::move(args));
}

std::vector<std::string> ack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                  std::string_view epoch, const cron_plan* plan) {
  std::vector<std::string> args{std::string(id), num(token)};
  if (!epoch.empty() || plan != nullptr) args.emplace_back(epoch);  // empty: not checked
  if (plan != nullptr) append_plan(args, *plan);
  return fcall(ks, "cp_ack_v5", std::move(args));
}

std::vector<std::string> nack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                   std::uint32_t jitter, std::string_view error_text, std::string_view epoch,
                                   const cron_plan* plan) {
  std::vector<std::string> args{std::string(id), num(token), num(static_cast<std::uint64_t>(jitter)),
                                std::string(error_text.substr(0, max_error_bytes))};
  if (!epoch.empty() || plan != nullptr) args.emplace_back(epoch);
  if (plan != nullptr) append_plan(args, *plan);
  return fcall(ks, "cp_nack_v5", std::move(args));
}

std::vector<std::string> extend_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                     std::int64_t lease_ms, std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token), num(lease_ms)};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_extend_v5", std::move(args));
}

std::vector<std::string> release_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                      std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token)};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_release_v5", std::move(args));
}

std::vector<std::string> cancel_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_cancel_v5", {std::string(id)});
}

std::vector<std::string> get_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_get_v5", {std::string(id)});
}

std::vector<std::string> dead_list_call(const key_space& ks, std::size_t n) {
  return fcall(ks, "cp_dead_list_v5", {num(static_cast<std::uint64_t>(n))});
}

std::vector<std::string> dead_redrive_call(const key_space& ks, std::string_view fire_id) {
  return fcall(ks, "cp_dead_redrive_v5", {std::string(fire_id)});
}

std::vector<std::string> dead_delete_call(const key_space& ks, std::string_view fire_id) {
  return fcall(ks, "cp_dead_delete_v5", {std::string(fire_id)});
}

std::vector<std::string> list_call(const key_space& ks, std::string_view prefix, std::string_view after,
                                   std::size_t n) {
  return fcall(ks, "cp_list_v5", {std::string(prefix), std::string(after), num(static_cast<std::uint64_t>(n))});
}

std::vector<std::string> inspect_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_inspect_v5", {std::string(id)});
}

std::vector<std::string> pause_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_pause_v5", {std::string(id)});
}

std::vector<std::string> resume_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_resume_v5", {std::string(id)});
}

std::vector<std::string> trigger_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_trigger_v5", {std::string(id)});
}

std::vector<std::string> backfill_call(const key_space& ks, std::string_view id, std::int64_t from_ms,
                                       std::int64_t to_ms, std::size_t limit, const std::vector<std::int64_t>& instants) {
  std::vector<std::string> args{std::string(id), num(clamp_ms(from_ms)), num(clamp_ms(to_ms)),
                                num(static_cast<std::uint64_t>(limit))};
  for (const std::int64_t t : instants) args.push_back(num(clamp_ms(t)));
  return fcall(ks, "cp_backfill_v5", std::move(args));
}

std::vector<std::string> time_call(const key_space& ks) { return fcall(ks, "cp_time_v5", {}); }

std::vector<std::string> partitions_call(const key_space& meta, std::uint32_t partitions) {
  return fcall(meta, "cp_partitions_v5", {num(static_cast<std::uint64_t>(partitions))});
}

boost::system::error_code error_of(const redis_value& v) {
  if (!v.is_error()) return {};
  if (starts_with(v.str, "STALE")) return make_error_code(error::stale_lease);
  if (starts_with(v.str, "EXISTS")) return make_error_code(error::schedule_exists);
  if (starts_with(v.str, "DATA_LOST")) return make_error_code(error::data_lost);
  // The library's own wording, naming the libraries (no secrets).
  if (starts_with(v.str, "VERSION")) return make_error_code(error::version_mismatch, v.str.substr(8));
  if (starts_with(v.str, "PARTITIONS")) return make_error_code(error::partitions_mismatch, v.str.substr(11));
  if (starts_with(v.str, "NOTFOUND")) return make_error_code(error::no_such_schedule);
  if (starts_with(v.str, "NOTPERIODIC")) return make_error_code(error::not_periodic);
  // The library's own wording with the range's count (no secrets).
  if (starts_with(v.str, "RANGE")) return make_error_code(error::too_many_fires, v.str.substr(6));
  // Redis's own wording, which never echoes a password: kept in the message.
  if (starts_with(v.str, "OOM")) return make_error_code(error::out_of_memory, v.str);
  if (starts_with(v.str, "NOAUTH") || starts_with(v.str, "WRONGPASS"))
    return make_error_code(error::auth_failed, v.str);
  return make_error_code(error::server_error);
}

boost::system::error_code parse_claim(const redis_value& v, claim_result& out) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array() || v.elements.size() < 3) return protocol_error;
  if (!to_int64(v.elements[0], out.server_now_ms) || !to_int64(v.elements[1], out.next_event_ms) ||
      !to_text(v.elements[2], out.epoch) || out.epoch.empty())
    return protocol_error;
  out.fires.clear();
  for (std::size_t i = 3; i < v.elements.size(); ++i) {
    const auto& f = v.elements[i];
    // Seven fields, and a cron schedule's expression and zone after them.
    if (!f.is_array() || (f.elements.size() != 7 && f.elements.size() != 9)) return protocol_error;
    claimed_fire c;
    std::int64_t token = 0;
    std::int64_t attempt = 0;
    if (!to_text(f.elements[0], c.id) || !to_int64(f.elements[1], c.due_ms) ||
        !to_int64(f.elements[2], token) || !to_int64(f.elements[3], attempt) ||
        !to_text(f.elements[4], c.task) || !to_text(f.elements[5], c.payload) ||
        !to_int64(f.elements[6], c.lease_expiry_ms) || token <= 0 || attempt <= 0)
      return protocol_error;
    if (f.elements.size() == 9 && (!to_text(f.elements[7], c.cron) || !to_text(f.elements[8], c.time_zone)))
      return protocol_error;
    c.token = static_cast<std::uint64_t>(token);
    c.attempt = static_cast<std::uint32_t>(attempt);
    c.epoch = out.epoch;
    c.claimed_ms = out.server_now_ms;
    out.fires.push_back(std::move(c));
  }
  return {};
}

boost::system::error_code parse_put(const redis_value& v, std::int64_t& due_ms) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array() || v.elements.size() != 2 || !to_int64(v.elements[0], due_ms)) return protocol_error;
  return {};
}

boost::system::error_code parse_ack(const redis_value& v, bool& acked, std::int64_t& next_due_ms) {
  if (v.is_error()) return error_of(v);
  std::int64_t flag = 0;
  if (!v.is_array() || v.elements.size() != 2 || !to_int64(v.elements[0], flag) ||
      !to_int64(v.elements[1], next_due_ms))
    return protocol_error;
  acked = flag == 1;
  return {};
}

boost::system::error_code parse_nack(const redis_value& v, bool& dead, std::int64_t& at) {
  if (v.is_error()) return error_of(v);
  std::int64_t flag = 0;
  if (!v.is_array() || v.elements.size() != 2 || !to_int64(v.elements[0], flag) || !to_int64(v.elements[1], at))
    return protocol_error;
  dead = flag == 1;
  return {};
}

boost::system::error_code parse_dead_list(const redis_value& v, std::vector<dead_letter>& out) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array()) return protocol_error;
  out.clear();
  for (const auto& e : v.elements) {
    if (!e.is_array() || e.elements.size() != 7) return protocol_error;
    dead_letter d;
    std::int64_t due = 0;
    std::int64_t attempts = 0;
    std::int64_t at = 0;
    if (!to_text(e.elements[0], d.schedule_id) || !to_text(e.elements[1], d.fire_id) ||
        !to_text(e.elements[2], d.task) || !to_int64(e.elements[3], due) || !to_int64(e.elements[4], attempts) ||
        !to_text(e.elements[5], d.last_error) || !to_int64(e.elements[6], at) || attempts < 0)
      return protocol_error;
    d.due = to_time_point(due);
    d.attempts = static_cast<std::uint32_t>(attempts);
    d.dead_lettered_at = to_time_point(at);
    out.push_back(std::move(d));
  }
  return {};
}

boost::system::error_code parse_text(const redis_value& v, std::string& out) {
  if (v.is_error()) return error_of(v);
  if (!to_text(v, out)) return protocol_error;
  return {};
}

boost::system::error_code parse_integer(const redis_value& v, std::int64_t& out) {
  if (v.is_error()) return error_of(v);
  if (!to_int64(v, out)) return protocol_error;
  return {};
}

namespace {

bool to_count(const redis_value& v, std::uint64_t& out) {
  std::int64_t n = 0;
  if (!to_int64(v, n) || n < 0) return false;
  out = static_cast<std::uint64_t>(n);
  return true;
}

// {id, task, kind, period, due, state, attempts, eligible, extras, cron, tz} of cp_list_v5.
bool parse_summary(const redis_value& v, schedule_summary& s) {
  if (!v.is_array() || v.elements.size() != 11) return false;
  const auto& e = v.elements;
  std::string kind, state;
  std::int64_t period = 0, due = 0, eligible = 0;
  std::uint64_t attempts = 0, extras = 0;
  if (!to_text(e[0], s.id) || !to_text(e[1], s.task) || !to_text(e[2], kind) || !to_int64(e[3], period) ||
      !to_int64(e[4], due) || !to_text(e[5], state) || !to_count(e[6], attempts) || !to_int64(e[7], eligible) ||
      !to_count(e[8], extras) || attempts > UINT32_MAX || extras > UINT32_MAX || !to_text(e[9], s.cron) ||
      !to_text(e[10], s.time_zone))
    return false;
  if (kind == "once") s.kind = durable::schedule_kind::one_shot;
  else if (kind == "rate") s.kind = durable::schedule_kind::fixed_rate;
  else if (kind == "delay") s.kind = durable::schedule_kind::fixed_delay;
  else if (kind == "cron") s.kind = durable::schedule_kind::cron;
  else return false;
  if (state == "active") s.state = schedule_state::active;
  else if (state == "paused") s.state = schedule_state::paused;
  else if (state == "running") s.state = schedule_state::running;
  else return false;
  s.period = std::chrono::milliseconds(period);
  s.next_due = to_time_point(due);
  if (eligible >= 0) s.eligible = to_time_point(eligible); else s.eligible.reset();
  s.attempts = static_cast<std::uint32_t>(attempts);
  s.extra_fires = static_cast<std::uint32_t>(extras);
  return true;
}

bool field_int(std::string_view text, std::int64_t& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && p == text.data() + text.size();
}

}  // namespace

bool parse_run_record(std::string_view entry, std::string_view id, run_record& out) {
  // Five space-separated words, then the error text (spaces and all).
  std::string_view words[5];
  std::string_view rest = entry;
  for (auto& w : words) {
    const auto sp = rest.find(' ');
    if (sp == std::string_view::npos) return false;
    w = rest.substr(0, sp);
    rest.remove_prefix(sp + 1);
  }
  std::int64_t due = 0, token = 0, finished = 0, attempt = 0;
  if (!field_int(words[0], due) || !field_int(words[1], token) || !field_int(words[2], finished) ||
      !field_int(words[3], attempt) || attempt < 0 || attempt > INT32_MAX || token < 0)
    return false;
  if (words[4] == "ok") out.outcome = run_outcome::succeeded;
  else if (words[4] == "failed") out.outcome = run_outcome::failed;
  else if (words[4] == "dead_lettered") out.outcome = run_outcome::dead_lettered;
  else if (words[4] == "lease_expired") out.outcome = run_outcome::lease_expired;
  else return false;
  out.fire_id = fmt::format("{}@{}", id, due);
  out.due = to_time_point(due);
  // Tokens start at 1000 per millisecond of the claim's time (the library's
  // tokens_per_ms, "Tokens" in library.lua): the token says when.
  out.token = static_cast<std::uint64_t>(token);
  if (token > 0) out.started = to_time_point(token / 1000); else out.started.reset();
  out.finished = to_time_point(finished);
  out.attempt = static_cast<std::uint32_t>(attempt);
  out.error = std::string(rest);
  return true;
}

boost::system::error_code parse_list(const redis_value& v, schedule_page& out) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array() || v.elements.size() != 2 || !to_text(v.elements[0], out.next_cursor) ||
      !v.elements[1].is_array())
    return protocol_error;
  out.schedules.clear();
  for (const auto& e : v.elements[1].elements) {
    schedule_summary s;
    if (!parse_summary(e, s)) return protocol_error;
    out.schedules.push_back(std::move(s));
  }
  return {};
}

boost::system::error_code parse_inspect(const redis_value& v, schedule_details& out) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array() || v.elements.size() != 4 || !parse_summary(v.elements[0], out.summary)) return protocol_error;
  const auto& fields = v.elements[1];
  const auto& runs = v.elements[2];
  const auto& extras = v.elements[3];
  if (!fields.is_array() || !runs.is_array() || !extras.is_array() || fields.elements.size() % 2 != 0)
    return protocol_error;
  out.history_length = 10;  // the library's default, stored only when another was asked for
  out.lease_expires.reset();
  for (std::size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    const auto& key = fields.elements[i];
    const auto& value = fields.elements[i + 1];
    if (!key.is_text() || !value.is_text()) return protocol_error;
    const std::string_view k = key.text();
    std::int64_t n = 0;
    const bool numeric = to_int64(value, n) && n >= 0;
    if (k == "payload") out.payload = value.str;
    else if (k == "last_error") out.last_error = value.str;
    else if (k == "lease_owner") out.lease_owner = value.str;
    else if (k == "created" && numeric) out.created = to_time_point(n);
    else if (k == "fires" && numeric) out.runs = static_cast<std::uint64_t>(n);
    else if (k == "failures" && numeric) out.failures = static_cast<std::uint64_t>(n);
    else if (k == "dead_letters" && numeric) out.dead_letters = static_cast<std::uint64_t>(n);
    else if (k == "history" && numeric && n <= UINT32_MAX) out.history_length = static_cast<std::uint32_t>(n);
    else if (k == "lease_expires" && numeric) out.lease_expires = to_time_point(n);
  }
  out.history.clear();
  for (const auto& r : runs.elements) {
    run_record rec;
    if (!r.is_text() || !parse_run_record(r.text(), out.summary.id, rec)) return protocol_error;
    out.history.push_back(std::move(rec));
  }
  out.extra_fires.clear();
  for (const auto& x : extras.elements) {
    std::int64_t ms = 0;
    if (!to_int64(x, ms)) return protocol_error;
    out.extra_fires.push_back(to_time_point(ms));
  }
  return {};
}

boost::system::error_code parse_trigger(const redis_value& v, std::string_view id, triggered_fire& out) {
  if (v.is_error()) return error_of(v);
  std::int64_t due = 0, running = 0;
  if (!v.is_array() || v.elements.size() != 2 || !to_int64(v.elements[0], due) ||
      !to_int64(v.elements[1], running))
    return protocol_error;
  out.fire_id = fmt::format("{}@{}", id, due);
  out.due = to_time_point(due);
  out.queued_behind_running = running == 1;
  return {};
}

boost::system::error_code parse_backfill(const redis_value& v, backfill_result& out, cron_backfill_ask* ask) {
  if (v.is_error()) return error_of(v);
  if (ask != nullptr && v.is_array() && v.elements.size() == 4 && v.elements[0].is_text() &&
      v.elements[0].text() == "cron") {
    ask->asked = true;
    if (!to_int64(v.elements[1], ask->due_ms) || !to_text(v.elements[2], ask->cron) ||
        !to_text(v.elements[3], ask->time_zone))
      return protocol_error;
    return {};
  }
  std::uint64_t occurrences = 0, added = 0;
  if (!v.is_array() || v.elements.size() != 2 || !to_count(v.elements[0], occurrences) ||
      !to_count(v.elements[1], added))
    return protocol_error;
  out.occurrences = static_cast<std::size_t>(occurrences);
  out.added = static_cast<std::size_t>(added);
  return {};
}

boost::system::error_code parse_put_many(const redis_value& v, std::vector<put_many_item>& out) {
  if (v.is_error()) return error_of(v);
  if (!v.is_array() || v.elements.empty()) return protocol_error;
  out.clear();
  for (std::size_t i = 1; i < v.elements.size(); ++i) {
    const auto& e = v.elements[i];
    put_many_item item;
    if (!e.is_array() || e.elements.size() != 2 || !to_text(e.elements[0], item.outcome)) return protocol_error;
    if (item.outcome == "error") {
      if (!to_text(e.elements[1], item.error_text)) return protocol_error;
    } else if (!to_int64(e.elements[1], item.due_ms)) {
      return protocol_error;
    }
    out.push_back(std::move(item));
  }
  return {};
}

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Argument vectors for, and replies of, the chronopool_v3 Redis functions.
#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/error.hpp>

#include "functions_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
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

key_space::key_space(std::string_view name_space)
    : prefix_("cp:{" + std::string(name_space) + "}:") {}

std::vector<std::string> load_functions_call() {
  return {"FUNCTION", "LOAD", "REPLACE", functions_source};
}

std::vector<std::string> list_functions_call() {
  return {"FUNCTION", "LIST", "LIBRARYNAME", library_name, "WITHCODE"};
}

boost::system::error_code parse_library_is_current(const redis_value& v, bool& current) {
  current = false;
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
    if (ours && code != nullptr && code->is_text() && code->text() == std::string_view(functions_source))
      current = true;
  }
  return {};
}

std::vector<std::string> put_call(const key_space& ks, const put_request& r) {
  std::vector<std::string> args{r.id, r.task, r.payload, kind_name(r.kind), r.absolute ? "abs" : "in",
                                num(clamp_ms(r.at_ms)), num(clamp_ms(r.period_ms)), misfire_name(r.options.misfire),
                                num(static_cast<std::int64_t>(r.options.catch_up_max)),
                                r.options.update ? "2" : r.options.replace ? "1" : "0"};
  // The default policy is the library's too: not sent, not stored, so a
  // schedule with it costs no more than before there were policies.
  const failure_policy d{};
  const auto& f = r.failure;
  if (f.max_attempts != d.max_attempts || f.initial_backoff != d.initial_backoff || f.multiplier != d.multiplier ||
      f.max_backoff != d.max_backoff) {
    args.push_back(num(static_cast<std::int64_t>(f.max_attempts)));
    args.push_back(num(clamp_ms(f.initial_backoff.count())));
    args.push_back(fmt::format("{}", f.multiplier));
    args.push_back(num(clamp_ms(f.max_backoff.count())));
  }
  return fcall(ks, "cp_put_v3", std::move(args));
}

std::vector<std::string> claim_call(const key_space& ks, std::string_view owner, std::int64_t lease_ms,
                                    std::size_t n) {
  return fcall(ks, "cp_claim_v3", {std::string(owner), num(lease_ms), num(static_cast<std::uint64_t>(n))});
}

std::vector<std::string> ack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                  std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token)};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_ack_v3", std::move(args));
}

std::vector<std::string> nack_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                   std::uint32_t jitter, std::string_view error_text, std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token), num(static_cast<std::uint64_t>(jitter)),
                                std::string(error_text.substr(0, max_error_bytes))};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_nack_v3", std::move(args));
}

std::vector<std::string> extend_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                     std::int64_t lease_ms, std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token), num(lease_ms)};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_extend_v3", std::move(args));
}

std::vector<std::string> release_call(const key_space& ks, std::string_view id, std::uint64_t token,
                                      std::string_view epoch) {
  std::vector<std::string> args{std::string(id), num(token)};
  if (!epoch.empty()) args.emplace_back(epoch);
  return fcall(ks, "cp_release_v3", std::move(args));
}

std::vector<std::string> cancel_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_cancel_v3", {std::string(id)});
}

std::vector<std::string> get_call(const key_space& ks, std::string_view id) {
  return fcall(ks, "cp_get_v3", {std::string(id)});
}

std::vector<std::string> dead_list_call(const key_space& ks, std::size_t n) {
  return fcall(ks, "cp_dead_list_v3", {num(static_cast<std::uint64_t>(n))});
}

std::vector<std::string> dead_redrive_call(const key_space& ks, std::string_view fire_id) {
  return fcall(ks, "cp_dead_redrive_v3", {std::string(fire_id)});
}

std::vector<std::string> dead_delete_call(const key_space& ks, std::string_view fire_id) {
  return fcall(ks, "cp_dead_delete_v3", {std::string(fire_id)});
}

boost::system::error_code error_of(const redis_value& v) {
  if (!v.is_error()) return {};
  if (starts_with(v.str, "STALE")) return make_error_code(error::stale_lease);
  if (starts_with(v.str, "EXISTS")) return make_error_code(error::schedule_exists);
  if (starts_with(v.str, "DATA_LOST")) return make_error_code(error::data_lost);
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
    if (!f.is_array() || f.elements.size() != 7) return protocol_error;
    claimed_fire c;
    std::int64_t token = 0;
    std::int64_t attempt = 0;
    if (!to_text(f.elements[0], c.id) || !to_int64(f.elements[1], c.due_ms) ||
        !to_int64(f.elements[2], token) || !to_int64(f.elements[3], attempt) ||
        !to_text(f.elements[4], c.task) || !to_text(f.elements[5], c.payload) ||
        !to_int64(f.elements[6], c.lease_expiry_ms) || token <= 0 || attempt <= 0)
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

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable upsert's options, gathered into a schedule_spec.
#include "schedule_arguments.hpp"

#include "arguments.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <limits>

namespace chronopool::durable::cli {

namespace {

template <class Int>
bool whole_number(std::string_view s, Int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

std::uint32_t count_option(std::string_view option, const std::string& text, std::uint32_t min) {
  std::uint32_t n = 0;
  if (!whole_number(std::string_view(text), n) || n < min)
    throw usage_error(fmt::format("{} must be a whole number of at least {}, got \"{}\"", option, min, text));
  return n;
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what) {
  const auto digits = text.find_first_not_of("0123456789");
  const std::string_view unit = digits == std::string_view::npos ? std::string_view{} : text.substr(digits);
  std::int64_t n = 0;
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else if (unit == "d") scale = 86'400'000;
  if (scale == 0 || !whole_number(text.substr(0, digits), n) ||
      n > std::numeric_limits<std::int64_t>::max() / scale)
    throw usage_error(
        fmt::format("{}: \"{}\" is not a duration (a whole number and ms, s, m, h or d: 500ms, 15m)", what, text));
  return std::chrono::milliseconds(n * scale);
}

void schedule_arguments::kind(schedule_kind k, std::string_view option) {
  if (!kind_option_.empty())
    throw usage_error(fmt::format("{} and {} both choose the schedule's kind: give one", kind_option_, option));
  kind_option_ = std::string(option);
  spec_.kind = k;
}

bool schedule_arguments::take(std::string_view option, const std::function<std::string()>& value) {
  auto& o = spec_.options;
  if (option == "--once") {
    kind(schedule_kind::one_shot, option);
  } else if (option == "--every") {
    kind(schedule_kind::fixed_rate, option);
    spec_.period = parse_duration(value(), option);
  } else if (option == "--fixed-delay") {
    kind(schedule_kind::fixed_delay, option);
    spec_.period = parse_duration(value(), option);
  } else if (option == "--cron") {
    kind(schedule_kind::cron, option);
    spec_.cron = value();
  } else if (option == "--time-zone") {
    spec_.time_zone = value();
    zone_given_ = true;
  } else if (option == "--start") {
    spec_.start = parse_time(value(), option);
  } else if (option == "--delay") {
    spec_.delay = parse_duration(value(), option);
  } else if (option == "--payload") {
    spec_.payload = value();
  } else if (option == "--misfire") {
    const auto v = value();
    if (v == "fire-once-now") o.misfire = misfire_policy::fire_once_now;
    else if (v == "skip") o.misfire = misfire_policy::skip;
    else if (v == "catch-up") o.misfire = misfire_policy::catch_up;
    else throw usage_error(fmt::format("--misfire must be fire-once-now, skip or catch-up, got \"{}\"", v));
  } else if (option == "--catch-up-max") {
    o.catch_up_max = count_option(option, value(), 1);
  } else if (option == "--max-attempts") {
    if (!o.failure) o.failure = failure_policy{};
    o.failure->max_attempts = count_option(option, value(), 1);
  } else if (option == "--backoff") {
    if (!o.failure) o.failure = failure_policy{};
    o.failure->initial_backoff = parse_duration(value(), option);
  } else if (option == "--max-backoff") {
    if (!o.failure) o.failure = failure_policy{};
    o.failure->max_backoff = parse_duration(value(), option);
  } else if (option == "--history") {
    o.history_length = count_option(option, value(), 0);
  } else if (option == "--replace") {
    replace_ = true;
  } else {
    return false;
  }
  if (first_.empty()) first_ = std::string(option);
  return true;
}

schedule_spec schedule_arguments::build(std::string id, std::string task) const {
  if (kind_option_.empty())
    throw usage_error("upsert needs the schedule's kind: --every D, --fixed-delay D, --cron EXPR or --once");
  if (spec_.start && spec_.delay.count() != 0)
    throw usage_error("--start and --delay both set the first occurrence: give one");
  if (spec_.kind != schedule_kind::cron && zone_given_)
    throw usage_error(fmt::format("--time-zone is for --cron schedules, not {}", kind_option_));
  schedule_spec s = spec_;
  s.id = std::move(id);
  s.task = std::move(task);
  // Deploys run upsert again and again: by default it updates in place, so
  // what ran stays ran; --replace starts the schedule over.
  (replace_ ? s.options.replace : s.options.update) = true;
  return s;
}

}  // namespace chronopool::durable::cli

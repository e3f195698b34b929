// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// cron_schedule: the next instant a cron expression names. The search runs on
// the zone's wall clock, field by field: a month not allowed is skipped
// whole, then a day not allowed, then the first allowed hour, minute and
// second of the day are found from the bit sets (a few bit scans), so a
// call costs a few dozen day checks at most for ordinary expressions and
// never walks seconds one by one. The wall-clock time found is then turned
// into an instant by the zone seam's DST rules.
//
// Why the first wall-clock match is the answer: zone::to_sys is
// non-decreasing in local time, and zone::first_local_after(t) is the least
// local time whose instant is after t. So every local time from there on
// maps after t, every earlier one does not, and the first match is the
// earliest instant.
#include <chronopool/cron_schedule.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace chronopool {

namespace {

using namespace std::chrono;
using detail::calendar::cron_fields;

/// Every day pattern recurs within the Gregorian calendar's 400-year cycle;
/// a search that has seen that much and found nothing never will.
constexpr int horizon_years = 401;

/// The first allowed time of day at or after @p h : @p m : @p s, or none
/// that day.
std::optional<seconds> time_on_day(const cron_fields& f, int h, int m, int s) noexcept {
  const int first_second = cron_fields::next_bit(f.seconds, 0);
  const int first_minute = cron_fields::next_bit(f.minutes, 0);
  auto at = [](int hh, int mm, int ss) { return hours(hh) + minutes(mm) + seconds(ss); };
  const int hour = cron_fields::next_bit(f.hours, h);
  if (hour >= 24) return std::nullopt;
  if (hour > h) return at(hour, first_minute, first_second);
  // Hour h is allowed: the rest of it first.
  if (const int minute = cron_fields::next_bit(f.minutes, m); minute < 60) {
    if (minute > m) return at(h, minute, first_second);
    if (const int second = cron_fields::next_bit(f.seconds, s); second < 60) return at(h, m, second);
    if (const int later = cron_fields::next_bit(f.minutes, m + 1); later < 60) return at(h, later, first_second);
  }
  const int later_hour = cron_fields::next_bit(f.hours, h + 1);
  if (later_hour >= 24) return std::nullopt;
  return at(later_hour, first_minute, first_second);
}

/// The first wall-clock time at or after @p from that the fields allow.
std::optional<local_seconds> first_match(const cron_fields& f, local_seconds from) noexcept {
  const local_days from_day = floor<days>(from);
  const hh_mm_ss<seconds> tod{from - from_day};
  int h = static_cast<int>(tod.hours().count());
  int m = static_cast<int>(tod.minutes().count());
  int s = static_cast<int>(tod.seconds().count());
  const year_month_day start{sys_days{from_day.time_since_epoch()}};
  year_month ym = start.year() / start.month();
  unsigned d = static_cast<unsigned>(start.day());
  const year end_year = start.year() + years(horizon_years);
  for (; ym.year() < end_year; ym += months(1), d = 1, h = m = s = 0) {
    if (!(f.months >> static_cast<unsigned>(ym.month()) & 1U)) continue;
    const unsigned last = static_cast<unsigned>((ym / std::chrono::last).day());
    for (; d <= last; ++d, h = m = s = 0) {
      const year_month_day day = ym / std::chrono::day(d);
      if (!detail::calendar::day_matches(f, day)) continue;
      if (const auto t = time_on_day(f, h, m, s)) return local_days{sys_days{day}.time_since_epoch()} + *t;
    }
  }
  return std::nullopt;
}

}  // namespace

cron_schedule::cron_schedule(std::string_view expression, std::string_view time_zone)
    : expression_(expression),
      fields_(detail::calendar::parse_cron(expression)),
      zone_(detail::calendar::zone::locate(time_zone)) {}

std::optional<system_clock::time_point> cron_schedule::next_after(system_clock::time_point after) const {
  const auto local = first_match(fields_, zone_.first_local_after(after));
  if (!local) return std::nullopt;
  const sys_seconds at = zone_.to_sys(*local);
  // Past what the clock's time_point can hold: no instant to give.
  if (at > floor<seconds>(system_clock::time_point::max())) return std::nullopt;
  return time_point_cast<system_clock::duration>(at);
}

std::vector<system_clock::time_point> cron_schedule::next(std::size_t count, system_clock::time_point after) const {
  std::vector<system_clock::time_point> out;
  out.reserve(std::min<std::size_t>(count, 1024));
  while (out.size() < count) {
    const auto t = next_after(after);
    if (!t) break;
    out.push_back(*t);
    after = *t;
  }
  return out;
}

}  // namespace chronopool

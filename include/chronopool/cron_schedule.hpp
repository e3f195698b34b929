// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Calendar schedules: a cron expression in an IANA time zone, and the
/// instants it names.
#pragma once

#include <chronopool/detail/calendar/cron_fields.hpp>
#include <chronopool/detail/calendar/time_zone.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool {

/// A cron expression read in an IANA time zone: which wall-clock times it
/// names, and at which instants those happen.
///
/// **Forms.** Five fields `minute hour day-of-month month day-of-week`, or
/// six with a seconds field first (five fields run at second 0). Each field
/// is `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from
/// a to the field's end), or a comma-separated list of these. Months may be
/// named `JAN`-`DEC` and weekdays `SUN`-`SAT`, in any case; day-of-week 0
/// and 7 are both Sunday. `?` is `*` in the two day fields. Macros:
/// `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`),
/// `@hourly`. Day-of-month also takes `L` (the last day of the month), `LW`
/// (its last Monday-Friday) and `nW` (the Monday-Friday nearest day n,
/// within the month; no run in a month without day n); day-of-week takes
/// `wL` (the month's last weekday w, e.g. `5L`, `FRIL`) and `w#n` (its n-th
/// weekday w, n 1-5, e.g. `MON#1`).
///
/// **Days.** Cron's OR rule: when both day fields are restricted, a day
/// matching either runs; when one of them is exactly `*` (or `?`), only the
/// other counts. (Unlike Vixie cron, a field such as `*/2` counts as
/// restricted.)
///
/// **Daylight saving time.** Times are matched on the zone's wall clock.
/// A wall-clock time skipped by a spring-forward runs once, at the first
/// instant after the gap (the transition): `30 2 * * *` in America/New_York
/// runs at 03:00 EDT on 2026-03-08. Several times in one gap, and the time
/// right after it, run once together. A wall-clock time repeated by a
/// fall-back runs once, at its first occurrence: `30 1 * * *` runs at 01:30
/// EDT on 2026-11-01, not again at 01:30 EST. This holds for every form,
/// so an hourly schedule runs once per wall-clock hour: on a fall-back day
/// two hours pass between its 01:00 (EDT) and 02:00 (EST) runs. For a
/// schedule of elapsed time, use a fixed-rate task, or the zone "UTC".
///
/// Immutable: copies are cheap to make and safe to share between threads.
/// Time zones come from the OS tz database (through Howard Hinnant's date
/// library), read once per process.
class cron_schedule {
 public:
  /// Parses @p expression, read in the IANA zone @p time_zone (e.g.
  /// "Europe/Berlin"). Throws std::invalid_argument naming the field and
  /// the offending text (`minute field: 61 is out of range 0-59 in
  /// '61 * * * *'`), an expression no day can ever match (`0 0 30 2 *`),
  /// or an unknown time zone.
  explicit cron_schedule(std::string_view expression, std::string_view time_zone = "UTC");

  /// The first instant strictly after @p after that the schedule names.
  /// Empty when there is none that system_clock::time_point can hold (every
  /// expression accepted names a day within any 400-year span, the
  /// calendar's cycle). Takes microseconds: the search skips whole months,
  /// days, hours and minutes that cannot match.
  std::optional<std::chrono::system_clock::time_point> next_after(std::chrono::system_clock::time_point after) const;

  /// The next @p count instants after @p after, strictly increasing: what
  /// next_after returns, called again on each answer. Fewer when the
  /// schedule ends first (see next_after).
  std::vector<std::chrono::system_clock::time_point> next(std::size_t count,
                                                         std::chrono::system_clock::time_point after) const;

  /// The expression as given.
  const std::string& expression() const noexcept { return expression_; }

  /// The time zone's name as given.
  const std::string& time_zone() const noexcept { return zone_.name(); }

 private:
  std::string expression_;
  detail::calendar::cron_fields fields_;
  detail::calendar::zone zone_;
};

}  // namespace chronopool

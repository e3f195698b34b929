// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Which days a cron expression allows: the day-of-month part (plain days, L,
// LW, nW), the day-of-week part (plain weekdays, nL, w#n), and cron's OR rule
// between them: when both fields are restricted a day matching either runs;
// when one is `*` (or `?`), only the other decides.
#include <chronopool/detail/calendar/cron_fields.hpp>

#include <chrono>

namespace chronopool::detail::calendar {

namespace {

using namespace std::chrono;

/// Monday to Friday.
bool is_weekday(weekday w) noexcept { return w != Saturday && w != Sunday; }

/// The Monday-Friday nearest day @p n of the month starting at @p first,
/// never leaving the month: a Saturday moves back to Friday (forward to
/// Monday the 3rd when n is the 1st), a Sunday forward to Monday (back to
/// Friday when n is the month's last day). 0 when the month has no day n.
unsigned nearest_weekday(sys_days first, unsigned n, unsigned last) noexcept {
  if (n > last) return 0;
  const weekday w{first + days(n - 1)};
  if (w == Saturday) return n == 1 ? 3 : n - 1;
  if (w == Sunday) return n == last ? n - 2 : n + 1;
  return n;
}

bool day_of_month_matches(const cron_fields& f, const year_month_day& ymd, unsigned d, unsigned last,
                          weekday w) noexcept {
  if (f.days_of_month >> d & 1U) return true;
  if (f.last_day_of_month && d == last) return true;
  if (f.last_weekday_of_month && is_weekday(w)) {
    // The last Monday-Friday: the last day, or the Friday before a weekend ending the month.
    const weekday last_w{sys_days{ymd.year() / ymd.month() / std::chrono::day{last}}};
    const unsigned back = last_w == Saturday ? 1U : last_w == Sunday ? 2U : 0U;
    if (d == last - back) return true;
  }
  if (f.nearest_weekday != 0 && is_weekday(w)) {
    // Only days n within two days of d can move onto d.
    const sys_days first{ymd.year() / ymd.month() / 1};
    for (unsigned n = d > 2 ? d - 2 : 1; n <= d + 2 && n <= 31; ++n)
      if ((f.nearest_weekday >> n & 1U) && nearest_weekday(first, n, last) == d) return true;
  }
  return false;
}

bool day_of_week_matches(const cron_fields& f, unsigned d, unsigned last, weekday w) noexcept {
  const unsigned wi = w.c_encoding();  // 0 = Sunday
  if (f.days_of_week >> wi & 1U) return true;
  if ((f.last_weekday_in_month >> wi & 1U) && d + 7 > last) return true;
  if (f.nth_weekday[wi] >> ((d - 1) / 7 + 1) & 1U) return true;
  return false;
}

}  // namespace

bool day_matches(const cron_fields& f, year_month_day ymd) noexcept {
  if (f.any_day_of_month && f.any_day_of_week) return true;
  const unsigned d = static_cast<unsigned>(ymd.day());
  const unsigned last = static_cast<unsigned>((ymd.year() / ymd.month() / std::chrono::last).day());
  const weekday w{sys_days{ymd}};
  if (f.any_day_of_month) return day_of_week_matches(f, d, last, w);
  if (f.any_day_of_week) return day_of_month_matches(f, ymd, d, last, w);
  return day_of_month_matches(f, ymd, d, last, w) || day_of_week_matches(f, d, last, w);
}

}  // namespace chronopool::detail::calendar

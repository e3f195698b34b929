// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// cron_schedule::next_after and next against instants computed independently
// of this code.
//
// How the table was computed: a Python 3 script walked each zone's wall-clock
// days and minutes (seconds for the seconds-field case) with plain Python
// predicates written per row (no cron parsing: e.g. "hour == 2 and minute ==
// 30", "weekday is Monday and day <= 7"), turned every matching wall-clock
// time into UTC with zoneinfo (tzdata 2025b, /usr/share/zoneinfo) under the
// documented rules (a time in a spring-forward gap: the first UTC minute whose
// wall clock is past it, i.e. the transition; a repeated time: fold=0, the
// first occurrence), kept those strictly after the row's instant, and printed
// the first few. The rows were pasted here as printed.
#include <chronopool/cron_schedule.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono;
using chronopool::cron_schedule;

namespace {

/// "2026-03-08T07:00:00Z" as a time point.
system_clock::time_point utc(const std::string& text) {
  int y = 0;
  unsigned mo = 0, d = 0;
  int h = 0, mi = 0, s = 0;
  BOOST_REQUIRE(std::sscanf(text.c_str(), "%d-%u-%uT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s) == 6);
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s};
}

struct row {
  const char* expression;
  const char* zone;
  const char* after;
  std::vector<std::string> expected;
};

// clang-format off
const std::vector<row> table = {
    // America/New_York: spring-forward 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z);
    // fall-back 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
    {"30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", {"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
    {"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"}},
    {"0 * * * *", "America/New_York", "2026-03-08T04:30:00Z", {"2026-03-08T05:00:00Z", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z", "2026-03-08T09:00:00Z"}},
    {"0 * * * *", "America/New_York", "2026-11-01T03:30:00Z", {"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z", "2026-11-01T09:00:00Z"}},
    {"*/15 2 * * *", "America/New_York", "2026-03-08T06:00:00Z", {"2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", "2026-03-09T06:15:00Z"}},
    {"45 1 * * *", "America/New_York", "2026-11-01T06:30:00Z", {"2026-11-02T06:45:00Z", "2026-11-03T06:45:00Z"}},
    {"0 2 * * *", "America/New_York", "2026-11-01T06:30:00Z", {"2026-11-01T07:00:00Z", "2026-11-02T07:00:00Z"}},
    {"15,45 30 1 * * *", "America/New_York", "2026-11-01T05:30:20Z", {"2026-11-01T05:30:45Z", "2026-11-02T06:30:15Z", "2026-11-02T06:30:45Z"}},
    // Europe/Berlin: 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
    {"30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", {"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
    {"30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
    {"0 * * * *", "Europe/Berlin", "2026-10-24T23:30:00Z", {"2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z", "2026-10-25T04:00:00Z"}},
    {"0 9 * * MON#1", "Europe/Berlin", "2026-01-01T00:00:00Z", {"2026-01-05T08:00:00Z", "2026-02-02T08:00:00Z", "2026-03-02T08:00:00Z", "2026-04-06T07:00:00Z"}},
    // Australia/Lord_Howe (30-minute DST): 2026-04-05 02:00 +11 -> 01:30 +10:30 (15:00Z on the 4th);
    // 2026-10-04 02:00 +10:30 -> 02:30 +11 (15:30Z on the 3rd).
    {"15 2 * * *", "Australia/Lord_Howe", "2026-10-03T00:00:00Z", {"2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}},
    {"45 1 * * *", "Australia/Lord_Howe", "2026-04-04T00:00:00Z", {"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}},
    {"*/30 * * * *", "Australia/Lord_Howe", "2026-04-04T13:50:00Z", {"2026-04-04T14:00:00Z", "2026-04-04T14:30:00Z", "2026-04-04T15:30:00Z", "2026-04-04T16:00:00Z"}},
    {"*/30 * * * *", "Australia/Lord_Howe", "2026-10-03T14:50:00Z", {"2026-10-03T15:00:00Z", "2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z", "2026-10-03T16:30:00Z"}},
    // No DST (Asia/Tokyo, UTC); month ends, leap days, L, W, #, the OR rule, names, steps, macros.
    {"0 9 * * *", "Asia/Tokyo", "2026-03-01T00:00:00Z", {"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z"}},
    {"0 0 31 * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
    {"0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z", {"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
    {"0 0 L * *", "UTC", "2026-01-15T00:00:00Z", {"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"}},
    {"0 0 L 2 *", "UTC", "2026-01-01T00:00:00Z", {"2026-02-28T00:00:00Z", "2027-02-28T00:00:00Z", "2028-02-29T00:00:00Z"}},
    {"0 0 LW * *", "UTC", "2026-01-01T00:00:00Z", {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z"}},
    {"0 0 1W * *", "UTC", "2026-07-15T00:00:00Z", {"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z"}},
    {"0 0 31W * *", "UTC", "2026-04-15T00:00:00Z", {"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
    {"0 0 15W * *", "UTC", "2026-02-01T00:00:00Z", {"2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z"}},
    {"0 0 * * 5L", "UTC", "2026-01-01T00:00:00Z", {"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z"}},
    {"0 0 * 2 MON#5", "UTC", "2026-01-01T00:00:00Z", {"2044-02-29T00:00:00Z"}},
    {"0 0 13 * FRI", "UTC", "2026-02-01T00:00:00Z", {"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-20T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"}},
    {"0 0 13 * *", "UTC", "2026-02-01T00:00:00Z", {"2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"}},
    {"0 0 * * FRI", "UTC", "2026-02-01T00:00:00Z", {"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z"}},
    {"0 0 */10 * MON", "UTC", "2026-03-01T00:00:00Z", {"2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-11T00:00:00Z", "2026-03-16T00:00:00Z", "2026-03-21T00:00:00Z", "2026-03-23T00:00:00Z"}},
    {"0 12 * * 7", "UTC", "2026-03-01T00:00:00Z", {"2026-03-01T12:00:00Z", "2026-03-08T12:00:00Z"}},
    {"0 12 * * 5-7", "UTC", "2026-03-02T00:00:00Z", {"2026-03-06T12:00:00Z", "2026-03-07T12:00:00Z", "2026-03-08T12:00:00Z", "2026-03-13T12:00:00Z"}},
    {"0 0 1 jan,Jul *", "UTC", "2026-03-01T00:00:00Z", {"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z", "2027-07-01T00:00:00Z"}},
    {"5-10/5 */6 * * *", "UTC", "2026-03-01T00:00:00Z", {"2026-03-01T00:05:00Z", "2026-03-01T00:10:00Z", "2026-03-01T06:05:00Z", "2026-03-01T06:10:00Z"}},
    {"@hourly", "Asia/Tokyo", "2026-03-01T00:00:00Z", {"2026-03-01T01:00:00Z", "2026-03-01T02:00:00Z"}},
    {"@daily", "Europe/Berlin", "2026-03-28T00:00:00Z", {"2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z"}},
    {"@weekly", "UTC", "2026-03-01T00:00:00Z", {"2026-03-08T00:00:00Z", "2026-03-15T00:00:00Z"}},
    {"@monthly", "America/New_York", "2026-03-01T00:00:00Z", {"2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"}},
    {"@yearly", "UTC", "2026-03-01T00:00:00Z", {"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
};
// clang-format on

std::string text(system_clock::time_point t) {
  const auto s = floor<seconds>(t);
  const auto d = floor<days>(s);
  const year_month_day ymd{d};
  const hh_mm_ss<seconds> tod{s - d};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long>(tod.hours().count()), static_cast<long>(tod.minutes().count()),
                static_cast<long>(tod.seconds().count()));
  return buf;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cron_instants)

BOOST_AUTO_TEST_CASE(next_gives_the_independently_computed_instants) {
  for (const row& r : table) {
    BOOST_TEST_CONTEXT("'" << r.expression << "' in " << r.zone << " after " << r.after) {
      const cron_schedule c(r.expression, r.zone);
      std::vector<std::string> got;
      for (auto t : c.next(r.expected.size(), utc(r.after))) got.push_back(text(t));
      BOOST_TEST(got == r.expected, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(next_is_next_after_repeated_and_strictly_increasing) {
  for (const row& r : table) {
    BOOST_TEST_CONTEXT("'" << r.expression << "' in " << r.zone) {
      const cron_schedule c(r.expression, r.zone);
      // 40 runs, or fewer when they pass 2262 (`0 0 * 2 MON#5` runs every 28 years or so).
      const auto all = c.next(40, utc(r.after));
      BOOST_TEST(all.size() >= r.expected.size());
      auto t = utc(r.after);
      for (auto instant : all) {
        const auto n = c.next_after(t);
        BOOST_REQUIRE(n.has_value());
        BOOST_TEST((*n == instant));
        BOOST_TEST((instant > t));
        t = instant;
      }
      if (all.size() < 40U) BOOST_TEST(!c.next_after(t).has_value());
    }
  }
}

BOOST_AUTO_TEST_CASE(strictly_after_even_within_a_second) {
  const cron_schedule c("* * * * * *");
  const auto t = utc("2026-05-01T10:00:00Z");
  BOOST_TEST((c.next_after(t) == t + 1s));
  BOOST_TEST((c.next_after(t - 1ns) == t));
  BOOST_TEST((c.next_after(t + 500ms) == t + 1s));
  const cron_schedule minutely("* * * * *");
  BOOST_TEST((minutely.next_after(t) == t + 1min));
  BOOST_TEST((minutely.next_after(t - 1ns) == t));
}

BOOST_AUTO_TEST_CASE(the_gap_collapses_into_one_run_then_the_schedule_resumes) {
  // Every second of 02:00-02:59 New York on 2026-03-08 is skipped: one run at
  // the transition (07:00Z, 03:00 EDT), then 03:00:01 EDT.
  const cron_schedule c("* * 2-3 * * *", "America/New_York");
  const auto runs = c.next(3, utc("2026-03-08T06:59:59Z"));
  BOOST_TEST(text(runs[0]) == "2026-03-08T07:00:00Z");
  BOOST_TEST(text(runs[1]) == "2026-03-08T07:00:01Z");
  BOOST_TEST(text(runs[2]) == "2026-03-08T07:00:02Z");
}

BOOST_AUTO_TEST_CASE(no_instant_representable_is_nullopt) {
  // 2262-04-11 is the last day system_clock (nanoseconds) can hold.
  const cron_schedule c("0 0 1 1 *");
  BOOST_TEST(!c.next_after(system_clock::time_point::max()).has_value());
  BOOST_TEST(!c.next_after(utc("2262-01-01T00:00:00Z")).has_value());
  BOOST_TEST(c.next(5, utc("2260-06-01T00:00:00Z")).size() == 2U);  // 2261-01-01, 2262-01-01
  BOOST_TEST(c.next(0, utc("2026-01-01T00:00:00Z")).empty());
  // The far past is fine.
  BOOST_TEST(text(*c.next_after(utc("1900-06-01T00:00:00Z"))) == "1901-01-01T00:00:00Z");
}

BOOST_AUTO_TEST_CASE(unknown_time_zones_are_named) {
  BOOST_CHECK_EXCEPTION(cron_schedule("* * * * *", "Mars/Olympus_Mons"), std::invalid_argument, [](const auto& e) {
    return std::string(e.what()).find("cron_schedule: unknown time zone 'Mars/Olympus_Mons'") == 0;
  });
  BOOST_CHECK_THROW(cron_schedule("* * * * *", ""), std::invalid_argument);
  BOOST_CHECK_THROW(cron_schedule("* * * * *", "../../etc/passwd"), std::invalid_argument);
  // The expression is checked first.
  BOOST_CHECK_EXCEPTION(cron_schedule("61 * * * *", "Mars/Olympus_Mons"), std::invalid_argument,
                        [](const auto& e) { return std::string(e.what()).find("minute field") == 0; });
}

BOOST_AUTO_TEST_CASE(accessors_copies_and_sharing) {
  const cron_schedule c("0 9 * * MON-FRI", "Europe/Berlin");
  BOOST_TEST(c.expression() == "0 9 * * MON-FRI");
  BOOST_TEST(c.time_zone() == "Europe/Berlin");
  const cron_schedule copy = c;  // NOLINT(performance-unnecessary-copy-initialization)
  const auto from = utc("2026-10-20T00:00:00Z");
  BOOST_TEST((copy.next(10, from) == c.next(10, from)));
  BOOST_TEST(cron_schedule("* * * * *").time_zone() == "UTC");
  // Shared between threads without locks: same answers everywhere.
  const auto expected = c.next(200, from);
  std::vector<std::thread> threads;
  std::vector<int> same(4, 0);
  for (std::size_t i = 0; i < same.size(); ++i)
    threads.emplace_back([&, i] { same[i] = c.next(200, from) == expected ? 1 : 0; });
  for (auto& t : threads) t.join();
  BOOST_TEST(same == std::vector<int>(4, 1), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

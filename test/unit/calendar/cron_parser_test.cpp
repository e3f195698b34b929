// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The cron parser: every accepted form gives the bit sets written out by hand
// here, and every error names the field, the offending text and the
// expression, word for word.
#include <chronopool/cron_schedule.hpp>
#include <chronopool/detail/calendar/cron_fields.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

using chronopool::detail::calendar::cron_fields;
using chronopool::detail::calendar::parse_cron;

namespace {

std::uint64_t bits(std::initializer_list<int> values) {
  std::uint64_t b = 0;
  for (int v : values) b |= std::uint64_t{1} << v;
  return b;
}

/// Bits first..last.
std::uint64_t span(int first, int last) {
  std::uint64_t b = 0;
  for (int v = first; v <= last; ++v) b |= std::uint64_t{1} << v;
  return b;
}

/// The message parse_cron throws for @p expression (fails the test if none).
std::string error_of(const std::string& expression) {
  try {
    (void)parse_cron(expression);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  BOOST_ERROR("accepted: '" << expression << "'");
  return {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cron_parser)

BOOST_AUTO_TEST_CASE(five_fields_run_at_second_zero) {
  const cron_fields f = parse_cron("* * * * *");
  BOOST_TEST(f.seconds == bits({0}));
  BOOST_TEST(f.minutes == span(0, 59));
  BOOST_TEST(f.hours == span(0, 23));
  BOOST_TEST(f.days_of_month == span(1, 31));
  BOOST_TEST(f.months == span(1, 12));
  BOOST_TEST(f.days_of_week == span(0, 6));
  BOOST_TEST(f.any_day_of_month);
  BOOST_TEST(f.any_day_of_week);
}

BOOST_AUTO_TEST_CASE(six_fields_put_seconds_first) {
  const cron_fields f = parse_cron("*/15 30 2 * * *");
  BOOST_TEST(f.seconds == bits({0, 15, 30, 45}));
  BOOST_TEST(f.minutes == bits({30}));
  BOOST_TEST(f.hours == bits({2}));
}

BOOST_AUTO_TEST_CASE(values_ranges_lists_and_steps) {
  const cron_fields f = parse_cron("5,10-12,40-50/5 1-23/11 3/10 */5 *");
  BOOST_TEST(f.minutes == bits({5, 10, 11, 12, 40, 45, 50}));
  BOOST_TEST(f.hours == bits({1, 12, 23}));
  BOOST_TEST(f.days_of_month == bits({3, 13, 23}));  // a/n: from a to the field's end
  BOOST_TEST(f.months == bits({1, 6, 11}));
  BOOST_TEST(!f.any_day_of_month);
  BOOST_TEST(f.any_day_of_week);
  BOOST_TEST(parse_cron("007 * * * *").minutes == bits({7}));  // leading zeros
  BOOST_TEST(parse_cron("\t0  0\t* * *  ").hours == bits({0}));  // any blanks between fields
}

BOOST_AUTO_TEST_CASE(month_and_weekday_names_in_any_case) {
  const cron_fields f = parse_cron("0 0 * jan,Mar-may,DEC sun,Wed-FRI");
  BOOST_TEST(f.months == bits({1, 3, 4, 5, 12}));
  BOOST_TEST(f.days_of_week == bits({0, 3, 4, 5}));
  BOOST_TEST(parse_cron("0 0 * JAN-DEC/3 *").months == bits({1, 4, 7, 10}));
}

BOOST_AUTO_TEST_CASE(sunday_is_zero_and_seven) {
  BOOST_TEST(parse_cron("0 0 * * 7").days_of_week == bits({0}));
  BOOST_TEST(parse_cron("0 0 * * 0").days_of_week == bits({0}));
  BOOST_TEST(parse_cron("0 0 * * 5-7").days_of_week == bits({0, 5, 6}));
  BOOST_TEST(parse_cron("0 0 * * */7").days_of_week == bits({0}));  // 0 and 7
}

BOOST_AUTO_TEST_CASE(question_mark_is_any_in_the_day_fields) {
  const cron_fields f = parse_cron("0 0 ? * MON");
  BOOST_TEST(f.any_day_of_month);
  BOOST_TEST(!f.any_day_of_week);
  BOOST_TEST(parse_cron("0 0 1 * ?").any_day_of_week);
}

BOOST_AUTO_TEST_CASE(a_stepped_star_restricts_its_day_field) {
  // Only `*` and `?` leave a day field unrestricted for the OR rule.
  BOOST_TEST(!parse_cron("0 0 */2 * MON").any_day_of_month);
  BOOST_TEST(!parse_cron("0 0 1 * */2").any_day_of_week);
  BOOST_TEST(!parse_cron("0 0 1-31 * *").any_day_of_month);
}

BOOST_AUTO_TEST_CASE(macros) {
  auto same = [](const char* macro, const char* expansion) {
    const cron_fields a = parse_cron(macro);
    const cron_fields b = parse_cron(expansion);
    BOOST_TEST_CONTEXT(macro) {
      BOOST_TEST(a.seconds == b.seconds);
      BOOST_TEST(a.minutes == b.minutes);
      BOOST_TEST(a.hours == b.hours);
      BOOST_TEST(a.days_of_month == b.days_of_month);
      BOOST_TEST(a.months == b.months);
      BOOST_TEST(a.days_of_week == b.days_of_week);
      BOOST_TEST(a.any_day_of_month == b.any_day_of_month);
      BOOST_TEST(a.any_day_of_week == b.any_day_of_week);
    }
  };
  same("@yearly", "0 0 1 1 *");
  same("@annually", "0 0 1 1 *");
  same("@monthly", "0 0 1 * *");
  same("@weekly", "0 0 * * 0");
  same("@daily", "0 0 * * *");
  same("@midnight", "0 0 * * *");
  same("@hourly", "0 * * * *");
  same("@DAILY", "0 0 * * *");
  same("  @hourly ", "0 * * * *");
}

BOOST_AUTO_TEST_CASE(last_nearest_and_nth_forms) {
  const cron_fields f = parse_cron("0 0 L,LW,15W,1w * *");
  BOOST_TEST(f.last_day_of_month);
  BOOST_TEST(f.last_weekday_of_month);
  BOOST_TEST(f.nearest_weekday == bits({1, 15}));
  BOOST_TEST(f.days_of_month == 0U);
  BOOST_TEST(!f.any_day_of_month);

  const cron_fields g = parse_cron("0 0 * * 5L,MON#1,sun#5,7#2,1");
  BOOST_TEST(g.last_weekday_in_month == bits({5}));
  BOOST_TEST(g.nth_weekday[1] == bits({1}));
  BOOST_TEST(g.nth_weekday[0] == bits({2, 5}));
  BOOST_TEST(g.days_of_week == bits({1}));
  BOOST_TEST(parse_cron("0 0 * * friL").last_weekday_in_month == bits({5}));
}

BOOST_AUTO_TEST_CASE(every_error_names_field_text_and_expression) {
  const std::pair<const char*, const char*> cases[] = {
      // ranges of every field
      {"61 * * * *", "minute field: 61 is out of range 0-59 in '61 * * * *'"},
      {"60 * * * * *", "second field: 60 is out of range 0-59 in '60 * * * * *'"},
      {"0 24 * * *", "hour field: 24 is out of range 0-23 in '0 24 * * *'"},
      {"0 0 0 * *", "day-of-month field: 0 is out of range 1-31 in '0 0 0 * *'"},
      {"0 0 32 * *", "day-of-month field: 32 is out of range 1-31 in '0 0 32 * *'"},
      {"0 0 * 0 *", "month field: 0 is out of range 1-12 in '0 0 * 0 *'"},
      {"0 0 * 13 *", "month field: 13 is out of range 1-12 in '0 0 * 13 *'"},
      {"0 0 * * 8", "day-of-week field: 8 is out of range 0-7 in '0 0 * * 8'"},
      {"99999999999999999999 * * * *",
       "minute field: 99999999999999999999 is out of range 0-59 in '99999999999999999999 * * * *'"},
      {"0 1-24 * * *", "hour field: 24 is out of range 0-23 in '0 1-24 * * *'"},
      // steps
      {"*/0 * * * *", "minute field: step 0 in '*/0' is out of range 1-59 in '*/0 * * * *'"},
      {"*/60 * * * *", "minute field: step 60 in '*/60' is out of range 1-59 in '*/60 * * * *'"},
      {"0 0 * */x *", "month field: step 'x' is not a number in '0 0 * */x *'"},
      {"*/ * * * *", "minute field: missing step after '/' in '*/' in '*/ * * * *'"},
      {"/5 * * * *", "minute field: missing range before '/' in '/5' in '/5 * * * *'"},
      // reversed ranges
      {"0 20-10 * * *", "hour field: range 20-10 is reversed in '0 20-10 * * *'"},
      {"0 0 * * FRI-MON", "day-of-week field: range FRI-MON is reversed in '0 0 * * FRI-MON'"},
      // names
      {"0 0 * FOO *", "month field: 'FOO' is not a number or a month name (JAN-DEC) in '0 0 * FOO *'"},
      {"0 0 * * MOON", "day-of-week field: 'MOON' is not a number or a weekday name (SUN-SAT) in '0 0 * * MOON'"},
      {"0 0 * * JAN", "day-of-week field: 'JAN' is not a number or a weekday name (SUN-SAT) in '0 0 * * JAN'"},
      {"0 MON * * *", "hour field: 'MON' is not a number in '0 MON * * *'"},
      // lists and garbage
      {"1,,2 * * * *", "minute field: empty list element in '1,,2 * * * *'"},
      {"1, * * * *", "minute field: empty list element in '1, * * * *'"},
      {"? * * * *", "minute field: '?' is not a number in '? * * * *'"},
      {"-5 * * * *", "minute field: '' is not a number in '-5 * * * *'"},
      {"0 0 * * L", "day-of-week field: 'L' is not a number or a weekday name (SUN-SAT) in '0 0 * * L'"},
      {"0 0 L-3 * *", "day-of-month field: 'L' is not a number in '0 0 L-3 * *'"},
      {"0 0 32W * *", "day-of-month field: 32 is out of range 1-31 in '0 0 32W * *'"},
      {"0 0 * * MON#6", "day-of-week field: '#6' in 'MON#6' is not an occurrence 1-5 in '0 0 * * MON#6'"},
      {"0 0 * * MON#0", "day-of-week field: '#0' in 'MON#0' is not an occurrence 1-5 in '0 0 * * MON#0'"},
      {"0 0 * * 8L", "day-of-week field: 8 is out of range 0-7 in '0 0 * * 8L'"},
      {"\xC3\xA9 * * * *", "minute field: '\xC3\xA9' is not a number in '\xC3\xA9 * * * *'"},
      // shape of the expression
      {"", "cron expression is empty"},
      {" \t ", "cron expression is empty"},
      {"* * *",
       "cron expression: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), got 3 "
       "in '* * *'"},
      {"* * * * * * *",
       "cron expression: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), got 7 "
       "in '* * * * * * *'"},
      {"@reboot",
       "cron expression: unknown macro '@reboot' (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, "
       "@hourly)"},
      // a day that never comes
      {"0 0 30 2 *", "day-of-month field: no month allowed by the month field has day 30 in '0 0 30 2 *'"},
      {"0 0 31 4,6,9,11 *", "day-of-month field: no month allowed by the month field has day 31 in '0 0 31 4,6,9,11 *'"},
      {"0 0 30W 2 *", "day-of-month field: no month allowed by the month field has day 30W in '0 0 30W 2 *'"},
  };
  for (const auto& [expression, message] : cases) BOOST_TEST(error_of(expression) == message);
}

BOOST_AUTO_TEST_CASE(impossible_days_are_accepted_when_another_form_can_match) {
  // The day-of-week field supplies days (OR rule); L always exists; Feb 29 does in leap years.
  BOOST_CHECK_NO_THROW(parse_cron("0 0 30 2 MON"));
  BOOST_CHECK_NO_THROW(parse_cron("0 0 30,L 2 *"));
  BOOST_CHECK_NO_THROW(parse_cron("0 0 29 2 *"));
  BOOST_CHECK_NO_THROW(parse_cron("0 0 31 1-12 *"));
}

BOOST_AUTO_TEST_CASE(the_public_constructor_reports_the_same_errors) {
  BOOST_CHECK_EXCEPTION(chronopool::cron_schedule("61 * * * *"), std::invalid_argument, [](const auto& e) {
    return std::string(e.what()) == "minute field: 61 is out of range 0-59 in '61 * * * *'";
  });
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The cron parser: text to cron_fields, with errors that name the field, the
// offending text and the whole expression, e.g.
//   minute field: 61 is out of range 0-59 in '61 * * * *'
// Written here: no maintained C++ cron parser is packaged by Debian.
#include <chronopool/detail/calendar/cron_fields.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::detail::calendar {

namespace {

enum class names : std::uint8_t { none, months, weekdays };

struct field_spec {
  const char* name;
  int min;
  int max;
  names named;
  bool day;  // day-of-month or day-of-week: `?` allowed, special forms
};

constexpr field_spec second_spec{"second", 0, 59, names::none, false};
constexpr field_spec minute_spec{"minute", 0, 59, names::none, false};
constexpr field_spec hour_spec{"hour", 0, 23, names::none, false};
constexpr field_spec dom_spec{"day-of-month", 1, 31, names::none, true};
constexpr field_spec month_spec{"month", 1, 12, names::months, false};
constexpr field_spec dow_spec{"day-of-week", 0, 7, names::weekdays, true};  // 0 and 7: Sunday

constexpr std::array<std::string_view, 12> month_names{"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::array<std::string_view, 7> weekday_names{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

// 'text', built by appending: g++ 12 at -O3 warns falsely (-Wrestrict) on
// `"'" + std::string(text)`, so the release build would not be quiet.
std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

char upper(char c) noexcept { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (upper(a[i]) != upper(b[i])) return false;
  return true;
}

bool is_space(char c) noexcept { return c == ' ' || c == '\t'; }

bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

/// Throws the parser's error: "<field> field: <what> in '<expression>'".
class field_parser {
 public:
  field_parser(const field_spec& spec, std::string_view expression) : spec_(spec), expression_(expression) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(std::string(spec_.name) + " field: " + what + " in '" + std::string(expression_) + "'");
  }

  /// A number or (in the month and day-of-week fields) a name, in range.
  int value(std::string_view text) const {
    if (all_digits(text)) {
      // Compared digit-wise first, so that no length of digits overflows.
      const std::string_view trimmed = text.substr(std::min(text.find_first_not_of('0'), text.size() - 1));
      int v = 0;
      if (trimmed.size() <= 3)
        for (char c : trimmed) v = v * 10 + (c - '0');
      if (trimmed.size() > 3 || v < spec_.min || v > spec_.max)
        fail(std::string(text) + " is out of range " + range_text());
      return v;
    }
    if (spec_.named == names::months)
      for (std::size_t i = 0; i < month_names.size(); ++i)
        if (equals_ignoring_case(text, month_names[i])) return static_cast<int>(i) + 1;
    if (spec_.named == names::weekdays)
      for (std::size_t i = 0; i < weekday_names.size(); ++i)
        if (equals_ignoring_case(text, weekday_names[i])) return static_cast<int>(i);
    switch (spec_.named) {
      case names::months: fail(quoted(text) + " is not a number or a month name (JAN-DEC)");
      case names::weekdays: fail(quoted(text) + " is not a number or a weekday name (SUN-SAT)");
      case names::none: break;
    }
    fail(quoted(text) + " is not a number");
  }

  /// The bits of one list element: `*`, `?`, `a`, `a-b`, each with `/step`.
  std::uint64_t element(std::string_view text) const {
    if (text.empty()) fail("empty list element");
    std::string_view base = text;
    int step = 1;
    if (const auto slash = text.find('/'); slash != std::string_view::npos) {
      base = text.substr(0, slash);
      const std::string_view step_text = text.substr(slash + 1);
      if (step_text.empty()) fail("missing step after '/' in '" + std::string(text) + "'");
      if (!all_digits(step_text)) fail("step '" + std::string(step_text) + "' is not a number");
      const bool small = step_text.size() <= 3;
      step = small ? std::stoi(std::string(step_text)) : 0;
      if (!small || step < 1 || step > spec_.max)
        fail("step " + std::string(step_text) + " in '" + std::string(text) + "' is out of range 1-" +
             std::to_string(spec_.max));
      if (base.empty()) fail("missing range before '/' in '" + std::string(text) + "'");
    }
    int first = spec_.min;
    int last = spec_.max;
    if (base == "*" || (spec_.day && base == "?")) {
      // the whole range
    } else if (const auto dash = base.find('-'); dash != std::string_view::npos) {
      first = value(base.substr(0, dash));
      last = value(base.substr(dash + 1));
      if (first > last) fail("range " + std::string(base) + " is reversed");
    } else {
      first = value(base);
      // `a/n` means from a to the field's end in steps of n.
      if (step == 1 && text.find('/') == std::string_view::npos) last = first;
    }
    std::uint64_t bits = 0;
    for (int v = first; v <= last; v += step) bits |= std::uint64_t{1} << v;
    return bits;
  }

  std::string range_text() const { return std::to_string(spec_.min) + "-" + std::to_string(spec_.max); }
  const field_spec& spec() const noexcept { return spec_; }

 private:
  const field_spec& spec_;
  std::string_view expression_;
};

/// Calls @p each for every comma-separated element of @p text.
template <class F>
void for_each_element(std::string_view text, F each) {
  std::size_t from = 0;
  while (true) {
    const auto comma = text.find(',', from);
    each(text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
    if (comma == std::string_view::npos) return;
    from = comma + 1;
  }
}

std::uint64_t plain_field(const field_spec& spec, std::string_view text, std::string_view expression) {
  const field_parser p(spec, expression);
  std::uint64_t bits = 0;
  for_each_element(text, [&](std::string_view e) { bits |= p.element(e); });
  return bits;
}

void day_of_month_field(cron_fields& f, std::string_view text, std::string_view expression) {
  const field_parser p(dom_spec, expression);
  f.any_day_of_month = text == "*" || text == "?";
  for_each_element(text, [&](std::string_view e) {
    if (equals_ignoring_case(e, "L")) {
      f.last_day_of_month = true;
    } else if (equals_ignoring_case(e, "LW")) {
      f.last_weekday_of_month = true;
    } else if (e.size() > 1 && upper(e.back()) == 'W' && all_digits(e.substr(0, e.size() - 1))) {
      f.nearest_weekday |= std::uint32_t{1} << p.value(e.substr(0, e.size() - 1));
    } else {
      f.days_of_month |= static_cast<std::uint32_t>(p.element(e));
    }
  });
}

void day_of_week_field(cron_fields& f, std::string_view text, std::string_view expression) {
  const field_parser p(dow_spec, expression);
  auto weekday = [&](std::string_view t) { return p.value(t) % 7; };  // 7 is Sunday too
  f.any_day_of_week = text == "*" || text == "?";
  for_each_element(text, [&](std::string_view e) {
    if (const auto hash = e.find('#'); hash != std::string_view::npos) {
      const int w = weekday(e.substr(0, hash));
      const std::string_view n = e.substr(hash + 1);
      if (!(n.size() == 1 && n[0] >= '1' && n[0] <= '5'))
        p.fail("'#" + std::string(n) + "' in '" + std::string(e) + "' is not an occurrence 1-5");
      f.nth_weekday[static_cast<std::size_t>(w)] |= static_cast<std::uint8_t>(1U << (n[0] - '0'));
    } else if (e.size() > 1 && upper(e.back()) == 'L') {
      f.last_weekday_in_month |= static_cast<std::uint8_t>(1U << weekday(e.substr(0, e.size() - 1)));
    } else {
      const std::uint64_t bits = p.element(e);
      // Bit 7 (Sunday written as 7) folds onto bit 0.
      f.days_of_week |= static_cast<std::uint8_t>((bits & 0x7F) | (bits >> 7));
    }
  });
}

/// The most days month @p m ever has (February: 29).
int max_days(int m) noexcept {
  constexpr std::array<int, 13> days{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return days[static_cast<std::size_t>(m)];
}

/// Rejects a day-of-month that no allowed month ever has (`0 0 30 2 *`),
/// when the day-of-week field cannot supply days instead. Anything else
/// happens at least once in the Gregorian calendar's 400-year cycle.
void check_some_day_exists(const cron_fields& f, std::string_view dom_text, std::string_view expression) {
  if (!f.any_day_of_week || f.any_day_of_month || f.last_day_of_month || f.last_weekday_of_month) return;
  for (int m = 1; m <= 12; ++m) {
    if (!(f.months >> m & 1U)) continue;
    const std::uint32_t days_in_m = static_cast<std::uint32_t>((std::uint64_t{1} << (max_days(m) + 1)) - 2);
    if ((f.days_of_month | f.nearest_weekday) & days_in_m) return;
  }
  field_parser(dom_spec, expression)
      .fail("no month allowed by the month field has day " + std::string(dom_text));
}

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

/// The macros, as 6-field expressions.
std::string_view macro(std::string_view name) noexcept {
  if (equals_ignoring_case(name, "@yearly") || equals_ignoring_case(name, "@annually")) return "0 0 0 1 1 *";
  if (equals_ignoring_case(name, "@monthly")) return "0 0 0 1 * *";
  if (equals_ignoring_case(name, "@weekly")) return "0 0 0 * * 0";
  if (equals_ignoring_case(name, "@daily") || equals_ignoring_case(name, "@midnight")) return "0 0 0 * * *";
  if (equals_ignoring_case(name, "@hourly")) return "0 0 * * * *";
  return {};
}

}  // namespace

cron_fields parse_cron(std::string_view expression) {
  std::vector<std::string_view> fields = split_fields(expression);
  if (fields.empty()) throw std::invalid_argument("cron expression is empty");
  if (fields.size() == 1 && fields[0].front() == '@') {
    const std::string_view expansion = macro(fields[0]);
    if (expansion.empty())
      throw std::invalid_argument("cron expression: unknown macro '" + std::string(fields[0]) +
                                  "' (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)");
    fields = split_fields(expansion);
  } else if (fields.size() == 5) {
    fields.insert(fields.begin(), std::string_view("0"));  // 5 fields: at second 0
  } else if (fields.size() != 6) {
    throw std::invalid_argument("cron expression: expected 5 fields (minute hour day-of-month month day-of-week) "
                                "or 6 (second first), got " +
                                std::to_string(fields.size()) + " in '" + std::string(expression) + "'");
  }
  cron_fields f;
  f.seconds = plain_field(second_spec, fields[0], expression);
  f.minutes = plain_field(minute_spec, fields[1], expression);
  f.hours = static_cast<std::uint32_t>(plain_field(hour_spec, fields[2], expression));
  day_of_month_field(f, fields[3], expression);
  f.months = static_cast<std::uint16_t>(plain_field(month_spec, fields[4], expression));
  day_of_week_field(f, fields[5], expression);
  check_some_day_exists(f, fields[3], expression);
  return f;
}

}  // namespace chronopool::detail::calendar

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A parsed cron expression: one bit set per field, plus the day-of-month and
// day-of-week forms that are not plain sets (L, W, #). The parser
// (src/calendar/cron_parser.cpp) fills it; the day rule
// (src/calendar/cron_days.cpp) and the search (src/calendar/cron_schedule.cpp)
// read it. Immutable once parsed, so a schedule can be shared between threads.
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace chronopool::detail::calendar {

struct cron_fields {
  std::uint64_t seconds = 0;        // bit s: second s (0-59)
  std::uint64_t minutes = 0;        // bit m: minute m (0-59)
  std::uint32_t hours = 0;          // bit h: hour h (0-23)
  std::uint32_t days_of_month = 0;  // bit d: day d (1-31); bit 0 unused
  std::uint16_t months = 0;         // bit m: month m (1-12); bit 0 unused
  std::uint8_t days_of_week = 0;    // bit w: weekday w (0 = Sunday ... 6)

  // The OR rule needs to know whether a day field was written as `*` (or `?`):
  // then it does not restrict, and only the other day field counts.
  bool any_day_of_month = false;
  bool any_day_of_week = false;

  bool last_day_of_month = false;           // `L`
  bool last_weekday_of_month = false;       // `LW`: the last Monday-Friday of the month
  std::uint32_t nearest_weekday = 0;        // `nW`: bit n, the weekday nearest day n, in its month
  std::uint8_t last_weekday_in_month = 0;   // `nL`: bit w, the last weekday w of the month
  std::array<std::uint8_t, 7> nth_weekday{};  // `w#n`: bit n of [w], the n-th weekday w (n 1-5)

  /// The first bit set in @p bits at or after @p from, or 64 when none is.
  static constexpr int next_bit(std::uint64_t bits, int from) noexcept {
    if (from >= 64) return 64;
    return std::countr_zero(bits >> from << from);
  }
};

/// Parses @p expression (5 or 6 fields, or a macro such as `@daily`).
/// Throws std::invalid_argument naming the field and the offending text.
cron_fields parse_cron(std::string_view expression);

/// Whether the fields' day-of-month and day-of-week parts (with the OR rule)
/// accept @p day. The month is not checked here.
bool day_matches(const cron_fields& f, std::chrono::year_month_day day) noexcept;

}  // namespace chronopool::detail::calendar

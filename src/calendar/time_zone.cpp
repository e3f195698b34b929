// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The time-zone seam over Howard Hinnant's date/tz (USE_OS_TZDB: the zones
// are read from the OS tz database, /usr/share/zoneinfo). This is the one
// file to change for std::chrono::locate_zone: the same three questions
// (sys_info at an instant, local_info at a wall-clock time) exist there
// under the same names.
#include <chronopool/detail/calendar/time_zone.hpp>

#include <date/tz.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace chronopool::detail::calendar {

namespace {

const date::time_zone& impl_of(const void* impl) { return *static_cast<const date::time_zone*>(impl); }

date::local_seconds to_date(std::chrono::local_seconds l) { return date::local_seconds{l.time_since_epoch()}; }

std::chrono::local_seconds from_date(date::local_seconds l) {
  return std::chrono::local_seconds{l.time_since_epoch()};
}

}  // namespace

zone zone::locate(std::string_view name) {
  const date::time_zone* found = nullptr;
  try {
    found = date::locate_zone(name);
  } catch (const std::exception& e) {
    // date reports an unknown zone (and an unreadable database) as
    // std::runtime_error; to the caller it is a bad argument.
    throw std::invalid_argument("cron_schedule: unknown time zone '" + std::string(name) +
                                "' (not in the IANA tz database: " + e.what() + ")");
  }
  return zone(std::string(name), found);
}

std::chrono::local_seconds zone::to_local(std::chrono::sys_seconds t) const {
  const auto info = impl_of(impl_).get_info(t);
  return std::chrono::local_seconds{(t + info.offset).time_since_epoch()};
}

std::chrono::sys_seconds zone::to_sys(std::chrono::local_seconds l) const {
  const auto info = impl_of(impl_).get_info(to_date(l));
  switch (info.result) {
    case date::local_info::nonexistent:
      // In a spring-forward gap: the first instant after it, the transition.
      return info.second.begin;
    case date::local_info::ambiguous:
      // Repeated by a fall-back: the first occurrence, on the earlier
      // (pre-transition) offset.
    case date::local_info::unique:
      break;
  }
  return std::chrono::sys_seconds{l.time_since_epoch() - info.first.offset};
}

std::chrono::local_seconds zone::first_local_after(std::chrono::sys_time<std::chrono::nanoseconds> t) const {
  const auto whole = std::chrono::floor<std::chrono::seconds>(t);
  const auto next = to_local(whole) + std::chrono::seconds(1);
  const auto info = impl_of(impl_).get_info(to_date(next));
  if (info.result == date::local_info::ambiguous &&
      std::chrono::sys_seconds{next.time_since_epoch() - info.first.offset} <= t) {
    // t is in the second pass of a repeated hour: every local time of that
    // hour ran (or was due) in the first pass. The first local time after t
    // that has not is where the repetition ends: the first offset's end.
    return from_date(date::local_seconds{(info.first.end + info.first.offset).time_since_epoch()});
  }
  return next;
}

}  // namespace chronopool::detail::calendar

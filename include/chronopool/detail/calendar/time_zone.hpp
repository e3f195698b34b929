// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The time-zone seam: the only place that knows which library supplies IANA
// time zones (Howard Hinnant's date/tz, reading the OS tz database, in
// src/calendar/time_zone.cpp). When the compilers ship std::chrono::zoned_time
// and locate_zone, only that file changes. This header names no date/tz type,
// so users of <chronopool/cron_schedule.hpp> do not need date's headers.
//
// Local times are std::chrono::local_seconds, counted in the zone's wall
// clock; instants are sys_seconds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace chronopool::detail::calendar {

class zone {
 public:
  /// The IANA zone @p name (e.g. "Europe/Berlin", "UTC"). Throws
  /// std::invalid_argument naming it when the tz database has no such zone.
  static zone locate(std::string_view name);

  /// The zone's name as asked for.
  const std::string& name() const noexcept { return name_; }

  /// The wall-clock time at @p t.
  std::chrono::local_seconds to_local(std::chrono::sys_seconds t) const;

  /// The instant a run planned at local time @p l happens, by chronopool's
  /// DST rules: a local time that exists once is that instant; one skipped
  /// by a spring-forward gap runs at the first instant after the gap (the
  /// transition itself); one repeated by a fall-back runs at its first
  /// occurrence. Non-decreasing in @p l, which the search relies on.
  std::chrono::sys_seconds to_sys(std::chrono::local_seconds l) const;

  /// The least local time l with to_sys(l) > @p t: the wall clock one second
  /// after t, except during the second pass of a repeated hour, whose local
  /// times have all run in the first pass; then the end of that hour.
  std::chrono::local_seconds first_local_after(std::chrono::sys_time<std::chrono::nanoseconds> t) const;

 private:
  zone(std::string name, const void* impl) : name_(std::move(name)), impl_(impl) {}
  std::string name_;
  const void* impl_;  // the library's zone; lives as long as its tz database (the process)
};

}  // namespace chronopool::detail::calendar

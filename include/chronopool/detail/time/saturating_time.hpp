// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Deadline arithmetic that saturates instead of overflowing.
//
// Callers hand us delays in any std::chrono unit, and some of them are
// untrusted (a timeout computed from a client's request) or sentinel values
// such as hours::max() meaning "never". Converting those naively to
// nanoseconds overflows, and adding them to now() wraps into the past, which
// would make a "never" task run at once and break the heap's ordering. Every
// deadline in chronopool is computed through these helpers.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ratio>
#include <stdexcept>
#include <type_traits>

namespace chronopool::detail {

using clock = std::chrono::steady_clock;
using duration = clock::duration;
using time_point = clock::time_point;

// A 128-bit integer for exact intermediate products (GCC and Clang).
__extension__ using int128 = __int128;

/// Converts any duration to clock::duration, clamping to [min, max].
/// NaN is rejected with std::invalid_argument naming @p what.
template <class Rep, class Period>
constexpr duration saturating_duration(std::chrono::duration<Rep, Period> d,
                                       const char* what = "duration") {
  using target_period = duration::period;
  using rep = duration::rep;
  constexpr rep hi = std::numeric_limits<rep>::max();
  constexpr rep lo = std::numeric_limits<rep>::min();
  if constexpr (std::is_floating_point_v<Rep>) {
    if (std::isnan(d.count())) throw std::invalid_argument(std::string("chronopool: ") + what + " is NaN");
    // Convert in long double: exact enough to decide clamping; values well
    // inside the range then go through duration_cast.
    using ratio = std::ratio_divide<Period, target_period>;
    const long double v = static_cast<long double>(d.count()) * ratio::num / ratio::den;
    if (v >= static_cast<long double>(hi)) return duration::max();
    if (v <= static_cast<long double>(lo)) return duration::min();
    return duration(static_cast<rep>(v));
  } else {
    // Integer reps: exact 128-bit arithmetic with overflow checks.
    using ratio = std::ratio_divide<Period, target_period>;
    int128 v = static_cast<int128>(d.count());
    int128 scaled = 0;
    if (__builtin_mul_overflow(v, static_cast<int128>(ratio::num), &scaled))
      return v > 0 ? duration::max() : duration::min();
    scaled /= static_cast<int128>(ratio::den);
    if (scaled > static_cast<int128>(hi)) return duration::max();
    if (scaled < static_cast<int128>(lo)) return duration::min();
    return duration(static_cast<rep>(scaled));
  }
}

/// t + d, clamped to [time_point::min(), time_point::max()].
constexpr time_point saturating_add(time_point t, duration d) noexcept {
  duration::rep out = 0;
  if (__builtin_add_overflow(t.time_since_epoch().count(), d.count(), &out))
    return d.count() > 0 ? time_point::max() : time_point::min();
  return time_point(duration(out));
}

/// a − b, clamped to [duration::min(), duration::max()]: lateness and
/// remaining delay of deadlines at the far ends of the clock.
constexpr duration saturating_difference(time_point a, time_point b) noexcept {
  duration::rep out = 0;
  if (__builtin_sub_overflow(a.time_since_epoch().count(), b.time_since_epoch().count(), &out))
    return a > b ? duration::max() : duration::min();
  return duration(out);
}

/// The deadline of a delay measured from @p now: negative delays mean "now",
/// and a delay too large to represent means "never" (time_point::max()).
constexpr time_point deadline_after(time_point now, duration delay) noexcept {
  return delay <= duration::zero() ? now : saturating_add(now, delay);
}

/// a − b on durations, clamped to [duration::min(), duration::max()].
constexpr duration saturating_sub(duration a, duration b) noexcept {
  duration::rep out = 0;
  if (__builtin_sub_overflow(a.count(), b.count(), &out)) return a > b ? duration::max() : duration::min();
  return duration(out);
}

/// The steady deadline of @p t, a time point of another clock: its distance
/// from that clock's now(), measured once and carried over to steady time.
/// Every step saturates, so the other clock's min() means "already due" and
/// its max() means "never", whatever its duration type. Carried over to
/// @p steady_now (a manual clock's virtual time; the other clock is still
/// read for real).
template <class Clock, class Duration>
time_point steady_deadline_of(std::chrono::time_point<Clock, Duration> t, const char* what, time_point steady_now) {
  const duration until = saturating_sub(saturating_duration(t.time_since_epoch(), what),
                                        saturating_duration(Clock::now().time_since_epoch(), what));
  return deadline_after(steady_now, until);
}

/// steady_deadline_of() carried over to steady_clock::now().
template <class Clock, class Duration>
time_point steady_deadline_of(std::chrono::time_point<Clock, Duration> t, const char* what) {
  return steady_deadline_of(t, what, clock::now());
}

/// True for the sentinel deadline that means "never".
constexpr bool is_never(time_point t) noexcept { return t == time_point::max(); }

/// A leeway of any unit (a timer's, a sleep's), saturating; a negative one
/// (or NaN) throws std::invalid_argument.
template <class Rep, class Period>
duration checked_leeway(std::chrono::duration<Rep, Period> leeway) {
  const duration l = saturating_duration(leeway, "leeway");
  if (l < duration::zero()) throw std::invalid_argument("chronopool: a leeway must not be negative");
  return l;
}

/// @p t moved up to the next multiple of @p leeway on the clock's epoch (@p t
/// itself when it is one): every time point in the same leeway-wide slot
/// maps to the slot's end, so deadlines that land in one slot become one
/// deadline. A leeway of zero (or less) leaves @p t as it is; "never" stays
/// "never", and a slot end past the clock's range saturates to it.
constexpr time_point round_up_to_slot(time_point t, duration leeway) noexcept {
  if (leeway <= duration::zero() || is_never(t)) return t;
  const duration::rep l = leeway.count();
  const duration::rep since = t.time_since_epoch().count();
  duration::rep into = since % l;
  if (into == 0) return t;
  if (into < 0) into += l;  // floor modulo before the epoch (|into| < l: no overflow)
  return saturating_add(t, duration(l - into));
}

}  // namespace chronopool::detail

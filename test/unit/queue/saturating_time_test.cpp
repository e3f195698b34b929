// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Saturating deadline arithmetic: no overflow, no wrap into the past.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

using namespace queue_test;
using cpd::duration;
using cpd::saturating_add;
using cpd::saturating_duration;
using rep = duration::rep;

constexpr rep dmax = std::numeric_limits<rep>::max();
constexpr rep dmin = std::numeric_limits<rep>::min();

template <class D>
rep sat(D d) {
  return saturating_duration(d).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(saturating_time)

BOOST_AUTO_TEST_CASE(clock_is_nanosecond_int64) {
  // The edge values below assume a signed 64-bit nanosecond tick.
  BOOST_TEST((std::is_same_v<duration::period, std::nano>));
  BOOST_TEST(std::numeric_limits<rep>::digits == 63);
}

BOOST_AUTO_TEST_CASE(huge_integer_durations_clamp) {
  BOOST_TEST(sat(std::chrono::hours::max()) == dmax);
  BOOST_TEST(sat(std::chrono::hours::min()) == dmin);
  BOOST_TEST(sat(std::chrono::days::max()) == dmax);
  BOOST_TEST(sat(std::chrono::days::min()) == dmin);
  BOOST_TEST(sat(std::chrono::years::max()) == dmax);
  BOOST_TEST(sat(std::chrono::milliseconds::max()) == dmax);
  BOOST_TEST(sat(std::chrono::milliseconds::min()) == dmin);
  BOOST_TEST(sat(std::chrono::microseconds::min()) == dmin);
  BOOST_TEST(sat(std::chrono::seconds::max()) == dmax);
  // A very coarse period whose product with count does not fit 64 bits.
  using centuries = std::chrono::duration<long long, std::ratio<3'155'695'200>>;
  BOOST_TEST(sat(centuries::max()) == dmax);
  BOOST_TEST(sat(centuries::min()) == dmin);
  BOOST_TEST(sat(centuries(1000)) == dmax);
  // Unsigned reps.
  BOOST_TEST(sat(std::chrono::duration<unsigned long long>(std::numeric_limits<unsigned long long>::max())) == dmax);
  BOOST_TEST(sat(std::chrono::duration<unsigned long long, std::nano>(std::numeric_limits<unsigned long long>::max())) ==
             dmax);
  BOOST_TEST(sat(std::chrono::duration<unsigned, std::milli>(7)) == 7'000'000);
}

BOOST_AUTO_TEST_CASE(representable_values_convert_exactly) {
  BOOST_TEST(sat(std::chrono::nanoseconds::max()) == dmax);
  BOOST_TEST(sat(std::chrono::nanoseconds::min()) == dmin);
  BOOST_TEST(sat(std::chrono::nanoseconds(0)) == 0);
  BOOST_TEST(sat(std::chrono::hours(0)) == 0);
  BOOST_TEST(sat(std::chrono::days(0)) == 0);
  BOOST_TEST(sat(std::chrono::milliseconds(-5)) == -5'000'000);
  BOOST_TEST(sat(std::chrono::hours(-1)) == -3'600'000'000'000);
  BOOST_TEST(sat(std::chrono::days(1)) == 86'400'000'000'000);
  BOOST_TEST(sat(std::chrono::days(-106'751)) == -106'751LL * 86'400'000'000'000LL);  // fits
  BOOST_TEST(sat(std::chrono::days(106'752)) == dmax);                                 // does not
  BOOST_TEST(sat(std::chrono::days(-106'752)) == dmin);
  // The exact boundary in seconds and microseconds.
  BOOST_TEST(sat(std::chrono::seconds(9'223'372'036)) == 9'223'372'036'000'000'000);
  BOOST_TEST(sat(std::chrono::seconds(9'223'372'037)) == dmax);
  BOOST_TEST(sat(std::chrono::seconds(-9'223'372'036)) == -9'223'372'036'000'000'000);
  BOOST_TEST(sat(std::chrono::seconds(-9'223'372'037)) == dmin);
  BOOST_TEST(sat(std::chrono::microseconds(9'223'372'036'854'775)) == 9'223'372'036'854'775'000);
  BOOST_TEST(sat(std::chrono::microseconds(9'223'372'036'854'776)) == dmax);
  BOOST_TEST(sat(std::chrono::microseconds(-9'223'372'036'854'775)) == -9'223'372'036'854'775'000);
  BOOST_TEST(sat(std::chrono::microseconds(-9'223'372'036'854'776)) == dmin);
}

BOOST_AUTO_TEST_CASE(sub_nanosecond_ratios_truncate_toward_zero) {
  using picoseconds = std::chrono::duration<long long, std::pico>;
  using femtoseconds = std::chrono::duration<long long, std::femto>;
  BOOST_TEST(sat(picoseconds(1'500)) == 1);
  BOOST_TEST(sat(picoseconds(999)) == 0);
  BOOST_TEST(sat(picoseconds(-1'500)) == -1);  // like duration_cast
  BOOST_TEST(sat(picoseconds(-1'500)) == std::chrono::duration_cast<duration>(picoseconds(-1'500)).count());
  BOOST_TEST(sat(picoseconds(0)) == 0);
  BOOST_TEST(sat(picoseconds::max()) == picoseconds::max().count() / 1'000);
  BOOST_TEST(sat(picoseconds::min()) == picoseconds::min().count() / 1'000);
  BOOST_TEST(sat(femtoseconds(3'000'000)) == 3);
  BOOST_TEST(sat(femtoseconds::max()) == femtoseconds::max().count() / 1'000'000);
  // Ratio num/den that does not reduce to a power of ten.
  using thirds = std::chrono::duration<long long, std::ratio<1, 3>>;
  BOOST_TEST(sat(thirds(3)) == 1'000'000'000);
  BOOST_TEST(sat(thirds(1)) == 333'333'333);
  BOOST_TEST(sat(thirds::max()) == dmax);
  BOOST_TEST(sat(thirds::min()) == dmin);
}

BOOST_AUTO_TEST_CASE(floating_point_durations) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  using dsec = std::chrono::duration<double>;
  using dms = std::chrono::duration<double, std::milli>;
  BOOST_TEST(sat(dsec(inf)) == dmax);
  BOOST_TEST(sat(dsec(-inf)) == dmin);
  BOOST_TEST(sat(dsec(1e300)) == dmax);
  BOOST_TEST(sat(dsec(-1e300)) == dmin);
  BOOST_TEST(sat(dsec(1e10)) == dmax);  // ~317 years > ~292 years of nanoseconds
  BOOST_TEST(sat(dsec(0.0)) == 0);
  BOOST_TEST(sat(dsec(-0.0)) == 0);
  BOOST_TEST(sat(dsec(1.5)) == 1'500'000'000);
  BOOST_TEST(sat(dms(-2.5)) == -2'500'000);
  BOOST_TEST(sat(std::chrono::duration<float>(std::numeric_limits<float>::infinity())) == dmax);
  BOOST_TEST(sat(std::chrono::duration<long double, std::ratio<3600>>(-inf)) == dmin);

  BOOST_CHECK_THROW(saturating_duration(dsec(nan)), std::invalid_argument);
  BOOST_CHECK_THROW(saturating_duration(std::chrono::duration<float>(std::numeric_limits<float>::quiet_NaN())),
                    std::invalid_argument);
  // The message names what was NaN.
  BOOST_CHECK_EXCEPTION(saturating_duration(dms(nan), "my_timeout"), std::invalid_argument,
                        [](const std::invalid_argument& e) { return std::string(e.what()).find("my_timeout") != std::string::npos; });
}

BOOST_AUTO_TEST_CASE(saturating_add_at_the_edges) {
  const time_point tmax = time_point::max();
  const time_point tmin = time_point::min();
  const duration one{1};
  BOOST_TEST(ticks(saturating_add(tmax, one)) == ticks(tmax));
  BOOST_TEST(ticks(saturating_add(tmax, duration::max())) == ticks(tmax));
  BOOST_TEST(ticks(saturating_add(tmax - one, one)) == ticks(tmax));  // exact, no overflow
  BOOST_TEST(ticks(saturating_add(tmax, -one)) == ticks(tmax) - 1);
  BOOST_TEST(ticks(saturating_add(tmin, -one)) == ticks(tmin));
  BOOST_TEST(ticks(saturating_add(tmin, duration::min())) == ticks(tmin));
  BOOST_TEST(ticks(saturating_add(tmin, one)) == ticks(tmin) + 1);
  BOOST_TEST(ticks(saturating_add(time_point(duration(1)), duration::max())) == ticks(tmax));
  BOOST_TEST(ticks(saturating_add(time_point(duration(-1)), duration::min())) == ticks(tmin));
  BOOST_TEST(ticks(saturating_add(time_point{}, duration::max())) == ticks(tmax));
  BOOST_TEST(ticks(saturating_add(time_point{}, duration::min())) == ticks(tmin));
  BOOST_TEST(ticks(saturating_add(tmax, duration::min())) == -1);  // max + min = -1, representable
  BOOST_TEST(ticks(saturating_add(time_point(duration(100)), duration(5))) == 105);
  BOOST_TEST(ticks(saturating_add(time_point(duration(100)), duration(-500))) == -400);
  const time_point now = clock::now();
  BOOST_TEST(ticks(saturating_add(now, duration::zero())) == ticks(now));
  BOOST_TEST(ticks(saturating_add(now, duration::max())) == ticks(tmax));
  // Usable in constant expressions.
  static_assert(saturating_add(time_point::max(), duration(1)) == time_point::max());
  static_assert(saturating_duration(std::chrono::hours::max()) == duration::max());
}

BOOST_AUTO_TEST_CASE(deadline_after_and_never) {
  const time_point now = clock::now();
  BOOST_TEST(ticks(cpd::deadline_after(now, duration(-1))) == ticks(now));
  BOOST_TEST(ticks(cpd::deadline_after(now, duration::min())) == ticks(now));
  BOOST_TEST(ticks(cpd::deadline_after(now, duration::zero())) == ticks(now));
  BOOST_TEST(ticks(cpd::deadline_after(now, saturating_duration(std::chrono::milliseconds(-5)))) == ticks(now));
  BOOST_TEST(ticks(cpd::deadline_after(now, duration(10'000'000))) == ticks(now) + 10'000'000);

  const time_point never = cpd::deadline_after(now, duration::max());
  BOOST_TEST(ticks(never) == ticks(time_point::max()));
  BOOST_TEST(cpd::is_never(never));
  BOOST_TEST(cpd::is_never(cpd::deadline_after(now, saturating_duration(std::chrono::hours::max()))));
  BOOST_TEST(cpd::is_never(cpd::deadline_after(now, saturating_duration(std::chrono::days::max()))));
  BOOST_TEST(cpd::is_never(
      cpd::deadline_after(now, saturating_duration(std::chrono::duration<double>(std::numeric_limits<double>::infinity())))));
  // Only an overflowing sum is "never": from the far past the sum is exact.
  const time_point from_min = cpd::deadline_after(time_point::min(), duration::max());
  BOOST_TEST(ticks(from_min) == -1);
  BOOST_TEST(!cpd::is_never(from_min));

  BOOST_TEST(!cpd::is_never(now));
  BOOST_TEST(!cpd::is_never(time_point::max() - duration(1)));
  BOOST_TEST(!cpd::is_never(time_point::min()));
  // A long but representable delay is not "never".
  BOOST_TEST(!cpd::is_never(cpd::deadline_after(now, saturating_duration(std::chrono::hours(24 * 365)))));
  BOOST_TEST(ticks(cpd::deadline_after(now, saturating_duration(std::chrono::hours(24 * 365)))) >
             ticks(now));
}

BOOST_AUTO_TEST_CASE(round_up_to_slot_moves_a_time_to_the_end_of_its_slot) {
  const duration ms(1'000'000);
  // Inside a slot: up to its end; on a slot boundary: unchanged.
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(1)), ms)) == 1'000'000);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(999'999)), ms)) == 1'000'000);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(1'000'000)), ms)) == 1'000'000);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(1'000'001)), ms)) == 2'000'000);
  // Before the epoch, still up (floor modulo), never down.
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(-1)), ms)) == 0);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(-1'000'001)), ms)) == -1'000'000);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point::min(), ms)) >= ticks(time_point::min()));
  // No leeway: exact.
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(123)), duration::zero())) == 123);
  BOOST_TEST(ticks(cpd::round_up_to_slot(time_point(duration(123)), duration(-5))) == 123);
  // "Never" stays never; a slot end past the range saturates to never, not
  // into the past.
  BOOST_TEST(cpd::is_never(cpd::round_up_to_slot(time_point::max(), ms)));
  BOOST_TEST(cpd::is_never(cpd::round_up_to_slot(time_point::max() - duration(1), ms)));
  BOOST_TEST(cpd::is_never(cpd::round_up_to_slot(time_point(duration(1)), duration::max())));
  // Any two times in one slot become one time; the slot after is another.
  const time_point now = clock::now();
  const time_point end = cpd::round_up_to_slot(now, ms);
  BOOST_TEST(ticks(end) >= ticks(now));
  BOOST_TEST(ticks(end) - ticks(now) < 1'000'000);
  BOOST_TEST(ticks(cpd::round_up_to_slot(end - duration(999'999), ms)) == ticks(end));
  BOOST_TEST(ticks(cpd::round_up_to_slot(end + duration(1), ms)) == ticks(end) + 1'000'000);
}

BOOST_AUTO_TEST_SUITE_END()

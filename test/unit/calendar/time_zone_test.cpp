// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The time-zone seam's DST rules, against instants worked out by hand from
// the zones' offsets (and checked with Python's zoneinfo: fold=0 and fold=1
// bracket each gap and repeat):
//   America/New_York 2026-03-08: 02:00 EST (-5) -> 03:00 EDT (-4) at 07:00Z.
//   America/New_York 2026-11-01: 02:00 EDT (-4) -> 01:00 EST (-5) at 06:00Z.
//   Australia/Lord_Howe 2026-04-05: 02:00 (+11) -> 01:30 (+10:30) at 15:00Z on the 4th.
//   Australia/Lord_Howe 2026-10-04: 02:00 (+10:30) -> 02:30 (+11) at 15:30Z on the 3rd.
#include <chronopool/detail/calendar/time_zone.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

using namespace std::chrono;
using chronopool::detail::calendar::zone;

namespace {

sys_seconds utc(year_month_day d, hours h, minutes m, seconds s = seconds(0)) { return sys_days{d} + h + m + s; }
local_seconds local(year_month_day d, hours h, minutes m, seconds s = seconds(0)) {
  return local_days{d} + h + m + s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(time_zone_seam)

BOOST_AUTO_TEST_CASE(a_skipped_time_runs_at_the_transition) {
  const zone ny = zone::locate("America/New_York");
  BOOST_TEST((ny.to_sys(local(2026y / 3 / 8, 2h, 30min)) == utc(2026y / 3 / 8, 7h, 0min)));
  BOOST_TEST((ny.to_sys(local(2026y / 3 / 8, 2h, 0min)) == utc(2026y / 3 / 8, 7h, 0min)));
  BOOST_TEST((ny.to_sys(local(2026y / 3 / 8, 3h, 0min)) == utc(2026y / 3 / 8, 7h, 0min)));
  BOOST_TEST((ny.to_sys(local(2026y / 3 / 8, 1h, 59min, 59s)) == utc(2026y / 3 / 8, 6h, 59min, 59s)));
  const zone lh = zone::locate("Australia/Lord_Howe");
  BOOST_TEST((lh.to_sys(local(2026y / 10 / 4, 2h, 15min)) == utc(2026y / 10 / 3, 15h, 30min)));
}

BOOST_AUTO_TEST_CASE(a_repeated_time_runs_at_its_first_occurrence) {
  const zone ny = zone::locate("America/New_York");
  BOOST_TEST((ny.to_sys(local(2026y / 11 / 1, 1h, 30min)) == utc(2026y / 11 / 1, 5h, 30min)));
  BOOST_TEST((ny.to_sys(local(2026y / 11 / 1, 2h, 0min)) == utc(2026y / 11 / 1, 7h, 0min)));
  const zone lh = zone::locate("Australia/Lord_Howe");
  BOOST_TEST((lh.to_sys(local(2026y / 4 / 5, 1h, 45min)) == utc(2026y / 4 / 4, 14h, 45min)));
}

BOOST_AUTO_TEST_CASE(wall_clock_of_an_instant) {
  const zone ny = zone::locate("America/New_York");
  BOOST_TEST((ny.to_local(utc(2026y / 11 / 1, 5h, 30min)) == local(2026y / 11 / 1, 1h, 30min)));
  BOOST_TEST((ny.to_local(utc(2026y / 11 / 1, 6h, 30min)) == local(2026y / 11 / 1, 1h, 30min)));
  const zone tokyo = zone::locate("Asia/Tokyo");
  BOOST_TEST((tokyo.to_local(utc(2026y / 7 / 1, 0h, 0min)) == local(2026y / 7 / 1, 9h, 0min)));
}

BOOST_AUTO_TEST_CASE(first_local_after_skips_the_second_pass_of_a_repeat) {
  const zone ny = zone::locate("America/New_York");
  // Ordinary times, and the first pass: one second later on the wall clock.
  BOOST_TEST((ny.first_local_after(utc(2026y / 7 / 1, 12h, 0min)) == local(2026y / 7 / 1, 8h, 0min, 1s)));
  BOOST_TEST((ny.first_local_after(utc(2026y / 11 / 1, 5h, 30min)) == local(2026y / 11 / 1, 1h, 30min, 1s)));
  BOOST_TEST((ny.first_local_after(utc(2026y / 7 / 1, 12h, 0min) + 999ms) == local(2026y / 7 / 1, 8h, 0min, 1s)));
  // The second pass (01:30 EST), and the last second of the first: 01:xx ran already.
  BOOST_TEST((ny.first_local_after(utc(2026y / 11 / 1, 6h, 30min)) == local(2026y / 11 / 1, 2h, 0min)));
  BOOST_TEST((ny.first_local_after(utc(2026y / 11 / 1, 5h, 59min, 59s) + 500ms) == local(2026y / 11 / 1, 2h, 0min)));
  const zone lh = zone::locate("Australia/Lord_Howe");
  BOOST_TEST((lh.first_local_after(utc(2026y / 4 / 4, 15h, 10min)) == local(2026y / 4 / 5, 2h, 0min)));
}

BOOST_AUTO_TEST_CASE(unknown_zone_is_named) {
  BOOST_CHECK_EXCEPTION(zone::locate("Nowhere/Atlantis"), std::invalid_argument, [](const auto& e) {
    return std::string(e.what()).find("unknown time zone 'Nowhere/Atlantis'") != std::string::npos;
  });
  BOOST_TEST(zone::locate("Europe/Berlin").name() == "Europe/Berlin");
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: absolute times and delays become whole milliseconds in integer
// arithmetic, rounded up, so no fire is due before the instant given.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <cstdint>
#include <random>
#include <string>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::system::error_code;
using dt::fast_options;
using dt::wait_until;

namespace {

std::int64_t ceil_ms(std::int64_t ns) { return ns / 1'000'000 + (ns % 1'000'000 > 0 ? 1 : 0); }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_time_rounding, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(absolute_times_are_rounded_up_to_the_millisecond_never_down) {
  // Time points of today's epoch range: whole milliseconds must stay as they
  // are (a double conversion made about one in eight of them 1 ms early) and
  // anything finer rounds up, so a fire never comes before the instant given.
  std::mt19937_64 rng(20261128);
  std::uniform_int_distribution<std::int64_t> ms_dist(1'600'000'000'000, 2'100'000'000'000);
  std::uniform_int_distribution<std::int64_t> sub_ns(1, 999'999);
  int wrong_whole = 0;
  int wrong_sub = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t ms = ms_dist(rng);
    const std::chrono::sys_time<std::chrono::nanoseconds> whole{std::chrono::nanoseconds(ms * 1'000'000)};
    if (cd::detail::clamp_time_ms(whole) != ms) ++wrong_whole;
    if (cd::detail::clamp_time_ms(std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ms))) != ms)
      ++wrong_whole;
    const std::int64_t nanos = ms * 1'000'000 + sub_ns(rng);
    if (cd::detail::clamp_time_ms(std::chrono::sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(nanos))) !=
        ceil_ms(nanos))
      ++wrong_sub;
    const std::int64_t us = nanos / 1000;
    if (cd::detail::clamp_time_ms(std::chrono::sys_time<std::chrono::microseconds>(std::chrono::microseconds(us))) !=
        ceil_ms(us * 1000))
      ++wrong_sub;
  }
  BOOST_TEST(wrong_whole == 0);
  BOOST_TEST(wrong_sub == 0);
  // Delays too: a fraction of a millisecond is a whole one, never none.
  BOOST_TEST(cd::detail::clamp_delay_ms(1ns) == 1);
  BOOST_TEST(cd::detail::clamp_delay_ms(1500us) == 2);
  BOOST_TEST(cd::detail::clamp_delay_ms(7ms) == 7);
  BOOST_TEST(cd::detail::clamp_delay_ms(std::chrono::hours::max()) == cd::detail::max_time_ms);
  BOOST_TEST(cd::detail::clamp_delay_ms(-3ms) == 0);
}

BOOST_AUTO_TEST_CASE(a_schedule_at_a_sub_millisecond_time_point_is_never_due_before_it) {
  cd::scheduler s(pool.get_executor(), fast_options(ns, dt::test_redis_options()));
  const auto base = std::chrono::system_clock::now() + 1h;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> offset(0, 10'000'000'000);  // within 10 s, in ns
  for (int i = 0; i < 200; ++i) {
    const auto at = std::chrono::time_point_cast<std::chrono::nanoseconds>(base) + std::chrono::nanoseconds(offset(rng));
    const auto id = "at-" + std::to_string(i);
    const auto due = s.async_schedule_at(id, "job", "", at, boost::asio::use_future).get();
    BOOST_TEST((due >= at), id);
    BOOST_TEST((due - at < 1ms), id);
  }
}

BOOST_AUTO_TEST_SUITE_END()

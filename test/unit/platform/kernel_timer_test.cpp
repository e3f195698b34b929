// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail/platform/kernel_timer.hpp, and the arming cost measured with it.
#include "platform_expectation.hpp"

#include <chronopool/detail/platform/kernel_timer.hpp>
#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

namespace cpd = chronopool::detail;
namespace cpp = chronopool::detail::platform;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(kernel_timer)

BOOST_AUTO_TEST_CASE(a_timer_is_available_on_linux_only_and_arms_and_disarms) {
  const bool on_linux = platform_test::expect_linux();
  cpp::one_shot_kernel_timer t;
  BOOST_TEST(t.available() == on_linux);
  // Armed, disarmed, re-armed, expired, disarmed again: none of it fails or
  // blocks, on either implementation.
  t.arm_at(std::chrono::steady_clock::now() + 1ms);
  t.disarm();
  t.arm_at(std::chrono::steady_clock::now() + 20us);
  std::this_thread::sleep_for(1ms);
  t.disarm();
  cpp::one_shot_kernel_timer second;  // each holds a timer of its own
  BOOST_TEST(second.available() == on_linux);
}

BOOST_AUTO_TEST_CASE(the_arming_cost_is_measured_where_a_timer_exists) {
  const auto cost = cpd::near_kernel_timer_cost();
  if (platform_test::expect_linux()) {
    BOOST_TEST((cost > cpd::duration::zero()));
    BOOST_TEST((cost <= std::chrono::microseconds(50)));  // the cap
  } else {
    BOOST_TEST((cost == cpd::duration::zero()));  // "not measured"
  }
}

BOOST_AUTO_TEST_SUITE_END()

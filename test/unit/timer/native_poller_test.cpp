// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail::native_poller's choice between polling for a deadline and leaving
// it to a native timer: what arming a kernel timer costs, plus the wake-up
// latency the shards' native timers show it, and the poll window.
#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/timer/native_poller.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;

namespace {

/// The arm's cost, which every figure below adds to; zero where it cannot be
/// measured (no timerfd), where the checks still hold.
cpd::duration arm_cost() { return cpd::near_kernel_timer_cost(); }

constexpr cpd::duration tick{1};

}  // namespace

BOOST_AUTO_TEST_SUITE(native_poller)

BOOST_AUTO_TEST_CASE(before_any_wake_up_a_poll_weighs_only_the_arm) {
  cpd::native_poller p;
  BOOST_TEST((p.wakeup_latency() == cpd::duration::zero()));
  const auto c = arm_cost();
  BOOST_TEST(p.covers(c));
  BOOST_TEST(!p.covers(c + tick));
  BOOST_TEST(p.claim());  // a running poll goes on no farther than it would start for
  BOOST_TEST(p.covers(c));
  BOOST_TEST(!p.covers(c + tick));
  p.unclaim();
  BOOST_TEST(!p.covers(c + tick));  // c is zero where it is not measured
}

BOOST_AUTO_TEST_CASE(an_observed_wake_up_latency_extends_the_threshold) {
  cpd::native_poller p;
  p.observe_wakeup(40us);  // the first counts whole
  BOOST_TEST((p.wakeup_latency() == 40us));
  const auto c = arm_cost();
  BOOST_TEST(p.covers(c + 40us));
  BOOST_TEST(!p.covers(c + 40us + tick));
  BOOST_TEST((p.threshold() == c + 40us));
  BOOST_TEST(p.claim());  // a poll runs, at no pace yet: no farther than it would start for
  BOOST_TEST(p.covers(c + 40us));
  BOOST_TEST(!p.covers(c + 40us + tick));
}

BOOST_AUTO_TEST_CASE(a_poll_reaches_twice_as_far_only_while_it_serves_a_dense_stream) {
  const auto c = arm_cost();
  const auto threshold = c + 40us;
  const cpd::time_point t0 = cpd::clock::now();
  {
    // Eight due shards within a fifth of the threshold: dense, twice as far.
    cpd::native_poller p;
    p.observe_wakeup(40us);
    BOOST_TEST(p.claim());
    p.note_turn(t0, 7);
    BOOST_TEST(!p.covers(threshold + tick));  // seven served are no pace yet
    p.note_turn(t0 + 8us, 1);
    BOOST_TEST((p.reach() == 2 * threshold));
    BOOST_TEST(p.covers(2 * threshold));
    BOOST_TEST(!p.covers(2 * threshold + tick));
    // Dense until the poll stops, however the pace slows: shards may have
    // left gates to it that far ahead.
    p.note_turn(t0 + 100 * threshold, 0);
    BOOST_TEST(p.covers(2 * threshold));
    p.unclaim();
    BOOST_TEST(!p.covers(threshold + tick));  // no poll runs
  }
  {
    // One due shard per half threshold: sparse, the threshold alone, even
    // while running. Spinning a gap longer than a wake-up costs more CPU
    // than the wake-up.
    cpd::native_poller p;
    p.observe_wakeup(40us);
    BOOST_TEST(p.claim());
    for (int i = 0; i < 16; ++i) p.note_turn(t0 + i * threshold / 2, 1);
    BOOST_TEST((p.reach() == threshold));
    BOOST_TEST(p.covers(threshold));
    BOOST_TEST(!p.covers(threshold + tick));
  }
}

BOOST_AUTO_TEST_CASE(with_a_slack_only_the_arm_is_polled_for_and_a_window_asks_for_exact_waits) {
  cpd::native_poller p;
  BOOST_TEST((p.slack() == cpd::duration::zero()));  // the default: exact
  p.set_slack(50us);
  p.observe_wakeup(40us);
  const auto c = arm_cost();
  // The slack allows the wake-up's latency: only the arm counts, even while a poll runs.
  BOOST_TEST(p.covers(c));
  BOOST_TEST(!p.covers(c + tick));
  BOOST_TEST(p.claim());
  BOOST_TEST(!p.covers(c + tick));
  p.unclaim();
  // A poll window asks for exact waits: no slack, and the window is polled for.
  p.set_window(200us);
  BOOST_TEST((p.slack() == cpd::duration::zero()));
  BOOST_TEST(p.covers(150us));
  p.set_window(cpd::duration::zero());
  BOOST_TEST((p.slack() == 50us));
}

BOOST_AUTO_TEST_CASE(the_latency_is_a_moving_average_of_clamped_samples) {
  cpd::native_poller p;
  p.observe_wakeup(40us);
  // A wake-up seconds late (a preempted thread) counts as the cap, for an
  // eighth: the poll must not spin for seconds after it.
  p.observe_wakeup(10s);
  const auto expected = 40us + (cpd::wakeup_latency_average::cap - 40us) / 8;
  BOOST_TEST((p.wakeup_latency() == expected));
  BOOST_TEST(!p.covers(1ms));
  // A sample before the expiry (clocks read on two CPUs) counts as zero.
  p.observe_wakeup(-5us);
  BOOST_TEST((p.wakeup_latency() == expected - expected / 8));
  for (int i = 0; i < 200; ++i) p.observe_wakeup(10s);
  BOOST_TEST((p.wakeup_latency() <= cpd::wakeup_latency_average::cap));
  BOOST_TEST((p.wakeup_latency() > cpd::wakeup_latency_average::cap * 9 / 10));
}

BOOST_AUTO_TEST_CASE(a_poll_window_wider_than_cost_and_latency_decides_alone) {
  cpd::native_poller p;
  p.observe_wakeup(20us);
  p.set_window(900us);
  BOOST_TEST(p.covers(900us));
  BOOST_TEST(!p.covers(900us + tick));
  BOOST_TEST(p.claim());
  BOOST_TEST(!p.covers(900us + tick));  // the native timer wakes a window early anyway
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail::handoff_latency_level: how long before a deadline a use_pool shard
// hands its waits to the io_context. It must allow for a hand-off to a
// sleeping thread, so it rises at once and falls slowly.
#include <chronopool/detail/wakeup/wakeup_latency.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(handoff_latency)

BOOST_AUTO_TEST_CASE(before_any_hand_off_it_allows_the_cap) {
  const cpd::handoff_latency_level l;
  BOOST_TEST((l.get() == cpd::handoff_latency_level::cap));
}

BOOST_AUTO_TEST_CASE(the_first_hand_off_counts_whole_a_slower_one_at_once) {
  cpd::handoff_latency_level l;
  l.observe(5us);  // below the starting cap: the first one replaces it
  BOOST_TEST((l.get() == 5us));
  l.observe(40us);  // a thread that had to be woken: up at once
  BOOST_TEST((l.get() == 40us));
}

BOOST_AUTO_TEST_CASE(quicker_hand_offs_lower_it_by_a_64th_of_the_gap) {
  cpd::handoff_latency_level l;
  l.observe(40us);
  l.observe(8us);
  BOOST_TEST((l.get() == cpd::duration(40us) - cpd::duration(32us) / 64));
  // Dozens of hand-offs to an awake thread leave most of it.
  for (int i = 0; i < 30; ++i) l.observe(0us);
  BOOST_TEST((l.get() > 40us / 2));
  // Hundreds bring it down to what they take.
  for (int i = 0; i < 2000; ++i) l.observe(1us);
  BOOST_TEST((l.get() < 2us));
}

BOOST_AUTO_TEST_CASE(samples_are_clamped_to_zero_and_the_cap) {
  cpd::handoff_latency_level l;
  l.observe(10s);  // a preempted thread: counts as the cap, no more
  BOOST_TEST((l.get() == cpd::handoff_latency_level::cap));
  cpd::handoff_latency_level m;
  m.observe(-3us);  // clocks read on two CPUs: counts as zero
  BOOST_TEST((m.get() == cpd::duration::zero()));
}

BOOST_AUTO_TEST_SUITE_END()

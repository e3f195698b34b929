// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The deadline index's near levels: nodes due within the near window wait in
// the wheel, a slot at a time moves sorted onto the run, and the heap takes
// only what arrives for a slot already there. The order stays exact
// throughout: (deadline, sequence), never a node before it is due.
#include "queue_test_support.hpp"

#include <chronopool/detail/queue/deadline_index.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace queue_test;

/// Default window (2^30 ns): wheel slots of 2^20 ns, about 1 ms.
constexpr std::chrono::nanoseconds slot_width{1 << 20};

std::size_t index_of(const std::vector<bare_node>& nodes, const cpd::index_node* n) {
  return static_cast<std::size_t>(static_cast<const bare_node*>(n) - nodes.data());
}

void arm(cpd::deadline_index& index, bare_node& n, time_point deadline, std::uint64_t sequence) {
  n.set_deadline(deadline);
  n.set_sequence(sequence);
  index.insert(&n);
}

bool in_exact_order(const std::vector<const cpd::index_node*>& out) {
  return std::is_sorted(out.begin(), out.end(),
                        [](const cpd::index_node* a, const cpd::index_node* b) { return runs_before(*a, *b); });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(near_wheel)

BOOST_AUTO_TEST_CASE(a_burst_within_the_window_waits_in_the_wheel_and_the_heap_stays_a_few_slots) {
  // 100,000 nodes due over 100 ms (a thousand a slot, with ties), inserted
  // in random order; the clock steps 50 us at a time.
  cpd::deadline_index index;
  std::vector<bare_node> nodes(100'000);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> offset_us(0, 100'000);
  std::vector<std::size_t> order(nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  // Well ahead of the clock however slow the build: all in the wheel.
  const time_point start = clock::now() + 100ms;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(start + std::chrono::microseconds(offset_us(rng)));
    nodes[i].set_sequence(i);
  }
  for (std::size_t i : order) index.insert(&nodes[i]);
  BOOST_TEST(index.check_invariants());
  BOOST_TEST(index.wheel_size() > 99'000u);  // none due within a slot of now

  std::vector<const cpd::index_node*> out;
  std::size_t early = 0, largest_front = 0;
  for (time_point now = start - 1ms; now < start + 102ms; now += 50us) {
    while (cpd::index_node* n = index.pop_due(now)) {
      if (n->deadline() > now) ++early;
      out.push_back(n);
    }
    largest_front = std::max(largest_front, index.heap_size());
    if (out.size() % 7 == 0) BOOST_TEST_REQUIRE(index.check_invariants());
  }
  BOOST_TEST(index.empty());
  BOOST_TEST(out.size() == nodes.size());
  BOOST_TEST(early == 0u);
  BOOST_TEST(in_exact_order(out));
  // A slot ahead of the clock, at most three slots' worth (~1,000 each) at once.
  BOOST_TEST(largest_front < 3'500u);
}

BOOST_AUTO_TEST_CASE(erasing_from_the_wheel_the_run_and_the_heap_keeps_the_order) {
  // Nodes within 20 ms, some inserted late (for slots already on the run:
  // those go to the heap, or onto the run's end when they come last), and a
  // random third erased wherever they are as the clock moves.
  cpd::deadline_index index;
  const time_point start = clock::now() + 5ms;
  std::vector<bare_node> nodes(30'000);
  std::mt19937_64 rng(9);
  std::uniform_int_distribution<std::int64_t> offset_us(0, 20'000);
  std::uint64_t sequence = 0;
  auto arm = [&](bare_node& n, time_point d) {
    n.set_deadline(d);
    n.set_sequence(sequence++);
    index.insert(&n);
  };
  const std::size_t early_count = 20'000;
  for (std::size_t i = 0; i < early_count; ++i) arm(nodes[i], start + std::chrono::microseconds(offset_us(rng)));

  std::vector<char> gone(nodes.size(), 0);
  std::vector<const cpd::index_node*> out;
  std::size_t late_armed = early_count, erased = 0, early = 0, wrong_erase = 0, step = 0;
  for (time_point now = start; now < start + 25ms; now += 20us, ++step) {
    // A few late arrivals due soon: within a slot or two of now.
    for (int k = 0; k < 3 && late_armed < nodes.size(); ++k)
      arm(nodes[late_armed++], now + std::chrono::microseconds(rng() % 2'500));
    // A few erasures of nodes still queued.
    for (int k = 0; k < 4; ++k) {
      const std::size_t i = rng() % late_armed;
      if (gone[i]) continue;
      if (!index.erase(nodes[i])) ++wrong_erase;
      gone[i] = 1;
      ++erased;
    }
    while (cpd::index_node* n = index.pop_due(now)) {
      if (n->deadline() > now) ++early;
      BOOST_TEST_REQUIRE(!gone[index_of(nodes, n)]);
      gone[index_of(nodes, n)] = 1;
      out.push_back(n);
    }
    if (step % 50 == 0) BOOST_TEST_REQUIRE(index.check_invariants());
  }
  while (cpd::index_node* n = index.pop_first()) out.push_back(n);
  BOOST_TEST(wrong_erase == 0u);
  BOOST_TEST(early == 0u);
  BOOST_TEST(erased > 1'000u);
  BOOST_TEST(out.size() + erased == late_armed);
  // A late arrival is due at or after the step that armed it, so after
  // every node popped before: the whole output is in exact order.
  BOOST_TEST(in_exact_order(out));
  BOOST_TEST(index.empty());
  BOOST_TEST(index.check_invariants());
}

BOOST_AUTO_TEST_CASE(a_run_that_never_empties_keeps_its_ids_below_their_tag) {
  // Nodes go through the run in slots while it never empties, as a busy
  // server's timeouts would for centuries; its origin starts 20,000 ids short
  // of where ids would run into their tag (2^58), more than the run holds
  // between two compactions (a few slots of ~1,000) and fewer than pass
  // through it. Every node can still be erased wherever it is, and the rest
  // pop in exact order.
  cpd::deadline_index index;
  // Well ahead of the clock however slow the build: all in the wheel, so
  // the run holds only the slots the pops bring in.
  const time_point start = clock::now() + 200ms;
  std::vector<bare_node> nodes(60'000);
  std::uint64_t sequence = 0;
  auto arm_at = [&](bare_node& n, time_point d) {
    n.set_deadline(d);
    n.set_sequence(sequence++);
    index.insert(&n);
  };
  // One node a microsecond over 60 ms: every slot has some, so the run never empties.
  for (std::size_t i = 0; i < nodes.size(); ++i) arm_at(nodes[i], start + std::chrono::microseconds(i));
  BOOST_TEST_REQUIRE(index.pop_due(start) == &nodes[0]);  // the first slot is on the run
  index.testing_set_run_origin((std::size_t{1} << 58) - 20'000);
  BOOST_TEST_REQUIRE(index.check_invariants());

  std::mt19937_64 rng(17);
  std::vector<char> gone(nodes.size(), 0);
  gone[0] = 1;
  std::vector<const cpd::index_node*> out;
  std::size_t erased = 0, wrong_erase = 0, step = 0;
  for (time_point now = start; now < start + 65ms; now += 50us, ++step) {
    for (int k = 0; k < 3; ++k) {
      const std::size_t i = rng() % nodes.size();
      if (gone[i]) continue;
      if (!index.erase(nodes[i])) ++wrong_erase;
      gone[i] = 1;
      ++erased;
    }
    while (cpd::index_node* n = index.pop_due(now)) {
      BOOST_TEST_REQUIRE(!gone[index_of(nodes, n)]);
      gone[index_of(nodes, n)] = 1;
      out.push_back(n);
    }
    if (step % 20 == 0) BOOST_TEST_REQUIRE(index.check_invariants());
  }
  BOOST_TEST(wrong_erase == 0u);
  BOOST_TEST(erased > 1'000u);
  BOOST_TEST(out.size() + erased + 1 == nodes.size());
  BOOST_TEST(in_exact_order(out));
  BOOST_TEST(index.empty());
}

BOOST_AUTO_TEST_CASE(the_first_node_is_known_while_the_near_front_is_empty) {
  // One node 300 ms out (in the wheel), one 2.25 to 10 s out (in the tier:
  // the wheel holds keys up to two windows, about 2.15 s, ahead of the clock):
  // the first deadline is the wheel node's; popping it first brings its slot
  // in, however far. The wake time is never after it, and is exactly it once
  // the tier's bucket has moved: a bucket's lower bound depends on where the
  // clock stands, so for some far deadlines it calls for an earlier look.
  int early_looks = 0;
  for (auto far = 2250ms; far <= 10s; far += 250ms) {
    BOOST_TEST_CONTEXT("far node " << far.count() << " ms out") {
      cpd::deadline_index index;
      const time_point now = clock::now();
      bare_node a, b;
      arm(index, a, now + far, 0);
      arm(index, b, now + 300ms, 1);
      BOOST_TEST(index.wheel_size() == 1u);
      BOOST_TEST(index.heap_front() == nullptr);
      BOOST_TEST((index.first_deadline() == b.deadline()));
      auto wake = index.wake_time();
      BOOST_TEST_REQUIRE(wake.has_value());
      BOOST_TEST((*wake <= b.deadline()));
      BOOST_TEST(index.pop_due(now) == nullptr);
      for (int looks = 0; *wake < b.deadline(); ++looks, ++early_looks) {
        BOOST_TEST_REQUIRE(looks < 64);
        BOOST_TEST_REQUIRE(index.pop_due(*wake) == nullptr);
        const auto next = index.wake_time();
        BOOST_TEST_REQUIRE(next.has_value());
        BOOST_TEST_REQUIRE((*next <= b.deadline()));
        BOOST_TEST_REQUIRE((*next > *wake));
        wake = next;
      }
      BOOST_TEST((*wake == b.deadline()));
      BOOST_TEST((index.first_deadline() == b.deadline()));
      BOOST_TEST(index.pop_first() == &b);
      BOOST_TEST(index.pop_first() == &a);
      BOOST_TEST(index.empty());
    }
  }
  BOOST_TEST_MESSAGE("early looks before the wheel node: " << early_looks);
}

BOOST_AUTO_TEST_CASE(a_node_erased_from_the_wheel_leaves_an_early_wake_time_never_a_late_one) {
  cpd::deadline_index index;
  const time_point now = clock::now();
  bare_node a, b;
  arm(index, a, now + 100ms, 0);
  arm(index, b, now + 200ms, 1);
  BOOST_TEST_REQUIRE(index.erase(a));
  const auto wake = index.wake_time();
  BOOST_TEST_REQUIRE(wake.has_value());
  BOOST_TEST((*wake <= b.deadline()));
  // Waking then finds the true first node's deadline, to sleep on for it.
  BOOST_TEST(index.pop_due(*wake) == nullptr);
  BOOST_TEST((index.wake_time() == b.deadline()));
  BOOST_TEST((index.first_deadline() == b.deadline()));
  BOOST_TEST(index.pop_due(b.deadline()) == &b);
  BOOST_TEST(index.empty());
}

BOOST_AUTO_TEST_CASE(nodes_due_before_a_far_first_node_wait_in_the_wheel_not_the_heap) {
  // The near front empties while the first node is 500 ms out. Nodes armed
  // from then on that are due before it go into the wheel, as they would
  // with the near front busy: in the heap, each pop would sift among them.
  cpd::deadline_index index;
  const time_point now = clock::now();
  std::vector<bare_node> nodes(1'001);
  arm(index, nodes[0], now + 500ms, 0);
  BOOST_TEST(index.pop_due(now) == nullptr);
  for (std::size_t i = 1; i < nodes.size(); ++i)
    arm(index, nodes[i], now + 100ms + std::chrono::microseconds(100 * (nodes.size() - i)), i);
  BOOST_TEST(index.heap_size() == 0u);
  BOOST_TEST(index.wheel_size() == nodes.size());
  BOOST_TEST((index.wake_time() == nodes.back().deadline()));
  std::vector<const cpd::index_node*> out;
  while (cpd::index_node* n = index.pop_due(now + 600ms)) out.push_back(n);
  BOOST_TEST_REQUIRE(out.size() == nodes.size());
  for (std::size_t i = 1; i < nodes.size(); ++i) BOOST_TEST(out[i - 1] == &nodes[nodes.size() - i]);
  BOOST_TEST(out.back() == &nodes[0]);
}

BOOST_AUTO_TEST_CASE(nodes_armed_in_deadline_order_pop_in_order_across_slots) {
  // Timeouts armed in order (each a little later than the one before): they
  // go on the run's end or into the wheel, never out of order.
  cpd::deadline_index index;
  const time_point start = clock::now();
  std::vector<bare_node> nodes(20'000);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(start + std::chrono::microseconds(i / 3));  // ties in threes
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  BOOST_TEST(index.check_invariants());
  std::vector<const cpd::index_node*> out;
  for (time_point now = start; !index.empty(); now += slot_width / 4)
    while (cpd::index_node* n = index.pop_due(now)) out.push_back(n);
  BOOST_TEST_REQUIRE(out.size() == nodes.size());
  for (std::size_t i = 0; i < out.size(); ++i) BOOST_TEST_REQUIRE(out[i] == &nodes[i]);
}

BOOST_AUTO_TEST_CASE(a_slot_in_key_order_but_for_one_entry_comes_out_sorted) {
  // A slot that filled in key order (K waits of one deadline) moves onto the
  // run as it is; one with a single key out of place, its first entry or its
  // last, is sorted like any other.
  for (const bool smallest_last : {true, false}) {
    BOOST_TEST_CONTEXT((smallest_last ? "the smallest key inserted last" : "the largest key inserted first")) {
      cpd::deadline_index index;
      const time_point due = clock::now() + 100ms;  // ahead of the clock however slow the build: the wheel
      std::vector<bare_node> nodes(1'000);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        nodes[i].set_deadline(due);  // one deadline: one slot
        nodes[i].set_sequence(i + 1);
      }
      std::vector<std::size_t> order(nodes.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      if (smallest_last) {
        std::rotate(order.begin(), order.begin() + 1, order.end());  // 1, 2, ..., 999, 0
      } else {
        std::rotate(order.begin(), order.end() - 1, order.end());  // 999, 0, 1, ..., 998
      }
      for (const std::size_t i : order) index.insert(&nodes[i]);
      BOOST_TEST_REQUIRE(index.wheel_size() == nodes.size());
      std::vector<const cpd::index_node*> out;
      while (cpd::index_node* n = index.pop_due(due)) out.push_back(n);
      BOOST_TEST(index.empty());
      BOOST_TEST_REQUIRE(out.size() == nodes.size());
      for (std::size_t i = 0; i < out.size(); ++i) BOOST_TEST_REQUIRE(out[i] == &nodes[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(slot_blocks_are_recycled_from_one_burst_to_the_next) {
  // 20,000 nodes in one slot, fired; then the same again a little later:
  // the second burst takes its blocks from the first one's, and the index
  // holds no more than after the first.
  cpd::deadline_index index;
  std::vector<bare_node> nodes(20'000);
  std::uint64_t sequence = 0;
  std::size_t after_first = 0;
  for (int burst = 0; burst < 2; ++burst) {
    const time_point start = clock::now() + 50ms;
    for (auto& n : nodes) {
      n.set_deadline(start + std::chrono::nanoseconds(sequence % 1000));
      n.set_sequence(sequence++);
      index.insert(&n);
    }
    BOOST_TEST(index.wheel_size() == nodes.size());
    BOOST_TEST(index.reserved_bytes() >= nodes.size() * sizeof(cpd::deadline_index::entry));
    std::vector<const cpd::index_node*> out;
    while (cpd::index_node* n = index.pop_due(start + 1ms)) out.push_back(n);
    BOOST_TEST(out.size() == nodes.size());
    BOOST_TEST(in_exact_order(out));
    BOOST_TEST(index.check_invariants());
    if (burst == 0) after_first = index.reserved_bytes();
  }
  BOOST_TEST(index.reserved_bytes() == after_first);
}

BOOST_AUTO_TEST_SUITE_END()

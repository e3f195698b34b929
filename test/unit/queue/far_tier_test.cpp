// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The far tier of delayed_work_queue: tasks due after the near window wait in
// buckets, come into the heap as time reaches them, and keep the exact
// (deadline, sequence) order throughout.
#include "queue_test_support.hpp"

#include <chronopool/detail/queue/deadline_index.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using namespace queue_test;

/// A near window of 2^20 ns (about 1 ms): tasks a few milliseconds out start
/// in the tier and cross into the heap while a test runs.
constexpr unsigned small_window = 20;

}  // namespace

BOOST_AUTO_TEST_SUITE(far_tier)

BOOST_AUTO_TEST_CASE(window_outside_its_range_is_refused) {
  BOOST_CHECK_THROW(cpd::delayed_work_queue(0), std::invalid_argument);
  BOOST_CHECK_THROW(cpd::delayed_work_queue(63), std::invalid_argument);
  cpd::delayed_work_queue smallest(1);
  cpd::delayed_work_queue largest(62);
  BOOST_TEST(smallest.empty());
  BOOST_TEST(largest.empty());
}

BOOST_AUTO_TEST_CASE(tasks_crossing_from_the_tier_are_taken_in_exact_order_and_never_early) {
  cpd::delayed_work_queue q(small_window);
  const time_point base = clock::now();
  std::mt19937_64 rng(7);
  // 0 to 40 ms out at 100 us grain: many ties, and the later tasks sit in
  // several buckets before their window comes.
  std::uniform_int_distribution<int> step(0, 400);
  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 2000; ++i) tasks.push_back(make_noop(base + step(rng) * 100us, i));
  std::shuffle(tasks.begin(), tasks.end(), rng);
  for (const auto& t : tasks) BOOST_TEST_REQUIRE(q.offer(t));
  BOOST_TEST(q.check_invariants());

  std::vector<cpd::task_base*> expected;
  for (const auto& t : tasks) expected.push_back(t.get());
  std::sort(expected.begin(), expected.end(),
            [](const cpd::task_base* a, const cpd::task_base* b) { return runs_before(*a, *b); });

  std::size_t early = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto r = q.wait_for_task(clock::now() + hang_limit);
    BOOST_TEST_REQUIRE((r.status == cpd::delayed_work_queue::wait_status::task));
    BOOST_TEST_REQUIRE(r.task.get() == expected[i]);
    if (clock::now() < r.task->deadline()) ++early;
    if (i % 97 == 0) BOOST_TEST_REQUIRE(q.check_invariants());
  }
  BOOST_TEST(early == 0u);
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(removing_a_far_task_frees_it_at_once) {
  cpd::delayed_work_queue q;
  std::atomic<int> freed{0};
  const time_point now = clock::now();
  std::vector<cpd::task_base*> raw;
  for (std::uint64_t i = 0; i < 100; ++i) {
    cpd::task_ptr t = make_probe(freed, now + 1h + std::chrono::seconds(static_cast<long>(i)), i);
    raw.push_back(t.get());
    BOOST_TEST_REQUIRE(q.offer(std::move(t)));  // the queue holds the only reference
  }
  // Out of order, so that removals move other tasks inside their buckets.
  for (std::size_t k = 0; k < raw.size(); k += 2) BOOST_TEST_REQUIRE(q.remove(*raw[k]));
  BOOST_TEST(freed.load() == 50);
  BOOST_TEST(q.size() == 50u);
  BOOST_TEST(q.check_invariants());
  for (std::size_t k = 1; k < raw.size(); k += 2) BOOST_TEST_REQUIRE(q.remove(*raw[k]));
  BOOST_TEST(freed.load() == 100);
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(removing_most_far_tasks_gives_the_index_buffers_back) {
  // remove() marks the bucket it leaves sparse and, with the queue's lock
  // released, swaps in a smaller buffer: no call but the removals.
  cpd::delayed_work_queue q;
  std::atomic<int> freed{0};
  const time_point now = clock::now();
  std::vector<cpd::task_base*> raw;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    cpd::task_ptr t = make_probe(freed, now + 1h + std::chrono::microseconds(static_cast<long>(i)), i);
    raw.push_back(t.get());
    BOOST_TEST_REQUIRE(q.offer(std::move(t)));
  }
  const std::size_t peak = q.index_bytes();
  BOOST_TEST(peak >= 20'000 * sizeof(void*));
  for (std::size_t k = 0; k < raw.size(); ++k)
    if (k % 1000 != 0) BOOST_TEST_REQUIRE(q.remove(*raw[k]));
  BOOST_TEST(q.size() == 20u);
  BOOST_TEST(q.index_bytes() * 8 <= peak);
  BOOST_TEST(q.check_invariants());
  for (std::size_t k = 0; k < raw.size(); k += 1000) {
    cpd::task_ptr t = q.pop_head();
    BOOST_TEST_REQUIRE(t.get() == raw[k]);
  }
}

BOOST_AUTO_TEST_CASE(wake_deadline_is_the_heap_head_or_no_later_than_the_earliest_far_task) {
  cpd::delayed_work_queue q;
  BOOST_TEST(!q.wake_deadline().has_value());
  BOOST_TEST_REQUIRE(q.offer(make_noop(time_point::max(), 0)));
  BOOST_TEST(!q.wake_deadline().has_value());  // "never" wakes nobody
  BOOST_TEST((q.head_deadline() == time_point::max()));

  const time_point now = clock::now();
  const time_point far = now + 1h;
  bool new_head = false;
  BOOST_TEST_REQUIRE(q.offer(make_noop(far, 1), new_head));
  BOOST_TEST(new_head);
  const time_point wake = q.wake_deadline().value();
  BOOST_TEST(ticks(wake) <= ticks(far));
  BOOST_TEST(ticks(wake) > ticks(now));
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(far));  // exact, not the bucket's bound

  // A second task in the same bucket, later: the wake-up does not move.
  BOOST_TEST_REQUIRE(q.offer(make_noop(far + 1ms, 2), new_head));
  BOOST_TEST(!new_head);
  BOOST_TEST(ticks(q.wake_deadline().value()) == ticks(wake));

  // A near task becomes the heap's head and the wake-up.
  const time_point soon = now + 1ms;
  BOOST_TEST_REQUIRE(q.offer(make_noop(soon, 3), new_head));
  BOOST_TEST(new_head);
  BOOST_TEST(ticks(q.wake_deadline().value()) == ticks(soon));
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(soon));
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(pop_head_returns_the_earliest_task_even_from_the_tier) {
  cpd::delayed_work_queue q;
  const time_point now = clock::now();
  cpd::task_ptr never = make_noop(time_point::max(), 0);
  cpd::task_ptr later = make_noop(now + 2h, 1);
  cpd::task_ptr early = make_noop(now + 1h, 2);
  cpd::task_ptr tie = make_noop(now + 1h, 3);
  for (const auto* t : {&never, &later, &tie, &early}) BOOST_TEST_REQUIRE(q.offer(*t));
  BOOST_TEST((q.pop_head() == early));
  BOOST_TEST(q.check_invariants());
  BOOST_TEST((q.pop_head() == tie));
  BOOST_TEST((q.pop_head() == later));
  BOOST_TEST((q.pop_head() == never));
  BOOST_TEST(!q.pop_head());
}

BOOST_AUTO_TEST_CASE(remove_if_and_drain_reach_tasks_in_the_tier_and_the_never_list) {
  cpd::delayed_work_queue q(small_window);
  const time_point now = clock::now();
  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 60; ++i) {
    const auto offset = std::chrono::milliseconds(static_cast<long>(i));
    const time_point d = i % 3 == 0 ? now - 1ms : i % 3 == 1 ? time_point(now + 1h + offset) : time_point::max();
    tasks.push_back(make_noop(d, i));
    BOOST_TEST_REQUIRE(q.offer(tasks.back()));
  }
  // Odd sequences out, wherever they are.
  auto odd = q.remove_if([](const cpd::task_base& t) { return t.sequence() % 2 == 1; });
  BOOST_TEST(odd.size() == 30u);
  BOOST_TEST(std::is_sorted(odd.begin(), odd.end(),
                            [](const cpd::task_ptr& a, const cpd::task_ptr& b) { return runs_before(*a, *b); }));
  BOOST_TEST(q.size() == 30u);
  BOOST_TEST(q.check_invariants());
  auto rest = q.drain();
  BOOST_TEST(rest.size() == 30u);
  for (const auto& t : rest) BOOST_TEST(t->sequence() % 2 == 0u);
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(erasing_most_far_nodes_gives_the_buffers_back) {
  // 40,000 nodes an hour out, 40,000 four hours out (other buckets), 1,000
  // "never": once all but a few are erased, the index holds a small part of
  // its peak, and what is left is still in order.
  cpd::deadline_index index;
  const time_point now = clock::now();
  index.advance(now);
  std::vector<bare_node> nodes(81'000);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const time_point d = i < 40'000   ? time_point(now + 1h + std::chrono::microseconds(i))
                         : i < 80'000 ? time_point(now + 4h + std::chrono::microseconds(i))
                                      : time_point::max();
    nodes[i].set_deadline(d);
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  const std::size_t peak = index.reserved_bytes();
  BOOST_TEST(peak >= 80'000 * sizeof(cpd::index_node*));
  // Keep every 1000th node; erase the rest, the last first.
  for (std::size_t i = nodes.size(); i-- > 0;)
    if (i % 1000 != 0) BOOST_TEST_REQUIRE(index.erase(nodes[i]));
  BOOST_TEST(index.size() == 81u);
  BOOST_TEST(index.check_invariants());
  // erase() only marks the sparse buffers: it allocates and frees nothing
  // (its owner holds a lock), and the owner gives them back in two steps.
  BOOST_TEST(index.reserved_bytes() == peak);
  BOOST_TEST(index.wants_shrink());
  index.shrink_now();
  BOOST_TEST(!index.wants_shrink());
  BOOST_TEST(index.check_invariants());
  BOOST_TEST(index.reserved_bytes() * 8 <= peak);
  std::vector<cpd::index_node*> left;
  while (cpd::index_node* n = index.pop_first()) left.push_back(n);
  BOOST_TEST(left.size() == 81u);
  for (std::size_t k = 0; k < left.size(); ++k) BOOST_TEST(left[k] == &nodes[k * 1000]);
}

BOOST_AUTO_TEST_CASE(a_shrink_request_is_refused_when_the_buffer_changed_meanwhile) {
  // The owner unlocks between asking and swapping: the bucket may fill up
  // again, or grow past the buffer allocated for it. Each is refused,
  // changing nothing, and the mark goes (the next erase that leaves the
  // bucket sparse marks it again).
  cpd::deadline_index index;
  const time_point now = clock::now();
  index.advance(now);
  constexpr std::size_t peak = 262'144;  // a 64th: 4,096
  std::vector<bare_node> nodes(peak + 5'000);  // one bucket: all about an hour out
  auto fill = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      nodes[i].set_deadline(now + 1h + std::chrono::microseconds(i));
      nodes[i].set_sequence(i);
      index.insert(&nodes[i]);
    }
  };
  auto erase = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) BOOST_TEST_REQUIRE(index.erase(nodes[i]));
  };
  fill(0, peak);
  erase(300, peak);
  const std::size_t before = index.reserved_bytes();
  const auto request = index.next_shrink();
  BOOST_TEST_REQUIRE(request.has_value());
  BOOST_TEST(request->capacity == 1'200u);  // four times the 300 left

  // Grown past it meanwhile (still sparse: 2,000 of 262,144).
  fill(peak, peak + 1'700);
  cpd::deadline_index::node_buffer smaller;
  smaller.reserve(request->capacity);
  index.shrink(*request, smaller);
  BOOST_TEST(index.reserved_bytes() == before);
  BOOST_TEST(smaller.empty());
  BOOST_TEST(smaller.capacity() == 1'200u);  // still the new buffer, unused
  BOOST_TEST(!index.wants_shrink());
  BOOST_TEST(index.check_invariants());

  // Filled up meanwhile: the mark is dropped at the request.
  erase(peak, peak + 1'700);  // sparse again: marked
  BOOST_TEST(index.wants_shrink());
  fill(peak, peak + 5'000);  // 5,300 nodes: over a 64th
  BOOST_TEST(!index.next_shrink().has_value());
  BOOST_TEST(!index.wants_shrink());

  // Sparse again: a buffer that fits is taken, the old one handed out.
  erase(peak, peak + 5'000);
  const auto again = index.next_shrink();
  BOOST_TEST_REQUIRE(again.has_value());
  cpd::deadline_index::node_buffer fits;
  fits.reserve(again->capacity);
  index.shrink(*again, fits);
  BOOST_TEST(fits.capacity() >= peak);  // the old buffer, for the owner to free unlocked
  BOOST_TEST(fits.empty());
  BOOST_TEST(index.reserved_bytes() * 8 < before);
  BOOST_TEST(!index.wants_shrink());
  BOOST_TEST(index.check_invariants());
  // Every node kept its slot: each still erases, and what is left pops in order.
  erase(100, 300);
  std::size_t k = 0;
  while (cpd::index_node* n = index.pop_first()) BOOST_TEST(n == &nodes[k++]);
  BOOST_TEST(k == 100u);
}

namespace {

/// 100,000 nodes due at random 5 to 40 ms after the returned start (the
/// clock read just before the first insert), shifted by @p phase, in an
/// index with the small window: crossing a multiple of 8 or 16 ms sets tens
/// of thousands aside at once, more than move in one piece. The start is
/// read last, and never moved ahead: the first insert into an empty index
/// takes the clock's reading as its reference time, so nodes already past
/// would go to the heap, and a test clock starting ahead of that reading
/// would find its first set-aside nodes already due to move whole.
std::vector<bare_node> spread_nodes(cpd::deadline_index& index, time_point& start,
                                    std::chrono::nanoseconds phase = std::chrono::nanoseconds(0)) {
  std::vector<bare_node> nodes(100'000);
  std::vector<std::int64_t> offsets(nodes.size());
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> offset_ns(5'000'000, 40'000'000);
  for (auto& o : offsets) o = offset_ns(rng);
  start = clock::now();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(start + phase + std::chrono::nanoseconds(offsets[i]));
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  return nodes;
}

/// The first node by brute force among those not taken.
const cpd::index_node* brute_first(const std::vector<bare_node>& nodes, const std::vector<char>& gone) {
  const cpd::index_node* first = nullptr;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!gone[i] && (first == nullptr || runs_before(nodes[i], *first))) first = &nodes[i];
  return first;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tier_nodes_come_near_before_nearer_nodes_are_due_not_as_they_come_due) {
  // 20,000 nodes due one every 50 us over 1 s, 3 s out: all start in the
  // tier. The owner looks again only at each wake time, as a sleeping taker
  // does. The later part of them is still in the tier when the first come
  // near into the wheel; the wake time must bring the owner back to move it
  // near in shares ahead of time, not let it sleep on to the wheel's first
  // deadline and move it all at once then, under its lock, while nodes are
  // due. Every node still comes out in order, at its deadline.
  cpd::deadline_index index;
  std::vector<bare_node> nodes(20'000);
  const time_point start = clock::now();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(start + 3s + std::chrono::microseconds(50 * i));
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  // Nodes in the tier or set aside: not in the heap, run or wheel.
  auto far = [&] { return index.size() - index.heap_size() - index.wheel_size(); };
  time_point now = start;
  std::size_t out = 0;
  std::size_t most_moved_while_due = 0;
  bool in_order = true;
  for (std::size_t turns = 0; out < nodes.size() && turns < 1'000'000; ++turns) {
    const auto wake = index.wake_time();
    BOOST_TEST_REQUIRE(wake.has_value());
    now = std::max(now, *wake);
    const std::size_t far_before = far();
    const bool due = now >= nodes[out].deadline();
    while (cpd::index_node* n = index.pop_due(now)) {
      in_order = in_order && n == &nodes[out] && n->deadline() <= now;
      ++out;
    }
    if (due) most_moved_while_due = std::max(most_moved_while_due, far_before - far());
    now += 1ns;
  }
  BOOST_TEST(out == nodes.size());
  BOOST_TEST(in_order);
  BOOST_TEST(most_moved_while_due < nodes.size() / 20);
}

BOOST_AUTO_TEST_CASE(buckets_coming_near_move_in_shares_and_the_order_stays_exact) {
  // The clock stepped 2 us at a time over 45 ms. Every node comes out once,
  // in exact (deadline, sequence) order, never before it is due, and none
  // of a fifth erased while set aside or in the tier comes out. The nodes
  // set aside move over several steps, never all in one.
  cpd::deadline_index index(small_window);
  time_point start;
  auto nodes = spread_nodes(index, start);
  std::vector<char> erased(nodes.size(), 0);
  std::mt19937_64 rng(12);
  std::vector<const cpd::index_node*> out;
  std::size_t early = 0, wake_late = 0, steps_with_shares = 0, largest_share = 0, most_set_aside = 0;
  std::size_t erased_count = 0;
  for (int step = 0; step <= 22'500; ++step) {
    const time_point now = start + std::chrono::microseconds(2 * step);
    const std::size_t before = index.still_to_move();
    // When the owner would wake: never after the first node is due.
    if (const auto w = index.wake_time(); w && index.first_deadline() && *index.first_deadline() <= now &&
                                          *w > *index.first_deadline())
      ++wake_late;
    while (cpd::index_node* n = index.pop_due(now)) {
      if (n->deadline() > now) ++early;
      out.push_back(n);
    }
    const std::size_t after = index.still_to_move();
    if (after < before) {
      ++steps_with_shares;
      largest_share = std::max(largest_share, before - after);
    }
    most_set_aside = std::max(most_set_aside, after);
    if (after != 0 && step % 7 == 0) {
      // Erase a few nodes wherever they are (set aside, tier or heap).
      for (int k = 0; k < 50; ++k) {
        const std::size_t i = rng() % nodes.size();
        if (erased[i] || nodes[i].heap_index == cpd::index_node::not_queued) continue;
        BOOST_TEST_REQUIRE(index.erase(nodes[i]));
        erased[i] = 1;
        ++erased_count;
      }
    }
    if (step % 1500 == 0) BOOST_TEST_REQUIRE(index.check_invariants());
  }
  BOOST_TEST(index.empty());
  BOOST_TEST(early == 0u);
  BOOST_TEST(wake_late == 0u);
  BOOST_TEST(erased_count > 0u);
  BOOST_TEST(out.size() + erased_count == nodes.size());
  BOOST_TEST(std::is_sorted(out.begin(), out.end(), [](const cpd::index_node* a, const cpd::index_node* b) {
    return runs_before(*a, *b);
  }));
  for (const cpd::index_node* n : out) BOOST_TEST_REQUIRE(!erased[static_cast<std::size_t>(static_cast<const bare_node*>(n) - nodes.data())]);
  // In shares: tens of thousands set aside, none moved whole.
  BOOST_TEST(most_set_aside > 10'000u);
  BOOST_TEST(steps_with_shares > 10u);
  BOOST_TEST(largest_share < most_set_aside);
}

namespace {

/// first_deadline(), heap_front() and pop_first() while nodes wait to move,
/// for nodes spread @p phase after the clock: with every node due soon
/// erased, the heap holds only moved nodes, and a node still set aside may
/// come before all of them (whether one does depends on where the window
/// grid falls).
void check_first_while_moving(std::chrono::nanoseconds phase) {
  cpd::deadline_index index(small_window);
  time_point start;
  auto nodes = spread_nodes(index, start, phase);
  std::vector<char> gone(nodes.size(), 0);
  const auto take = [&](const cpd::index_node* n) { gone[static_cast<std::size_t>(static_cast<const bare_node*>(n) - nodes.data())] = 1; };
  // Step until a rebase has set many aside.
  time_point now = start;
  while (index.still_to_move() < 10'000 && now < start + 40ms) {
    now += 2us;
    while (cpd::index_node* n = index.pop_due(now)) take(n);
  }
  const std::size_t set_aside = index.still_to_move();
  BOOST_TEST_REQUIRE(set_aside >= 10'000u);
  // Erase every node due within a window (the rebase's own lead): the
  // heap then holds only nodes moved from the set-aside ones.
  const time_point soon = now + 1ms;
  for (auto& n : nodes) {
    if (!gone[static_cast<std::size_t>(&n - nodes.data())] && n.deadline() < soon) {
      BOOST_TEST_REQUIRE(index.erase(n));
      take(&n);
    }
  }
  // Shares move while nothing is due: after each, the first node is known
  // exactly, and the heap's front is not reported while a set-aside node
  // may precede it.
  std::size_t shares = 0, wrong_first = 0, wrong_front = 0;
  for (std::size_t left = index.still_to_move(); left != 0 && shares < 3 && now + 2us < soon;
       left = index.still_to_move()) {
    now += 2us;
    BOOST_TEST_REQUIRE(index.pop_due(now) == nullptr);
    if (index.still_to_move() == left || index.still_to_move() == 0) continue;
    ++shares;
    const cpd::index_node* first = brute_first(nodes, gone);
    if (index.first_deadline() != first->deadline()) ++wrong_first;
    if (const auto* front = index.heap_front(); front != nullptr && runs_before(*first, *front->node)) ++wrong_front;
  }
  BOOST_TEST(shares == 3u);
  BOOST_TEST(wrong_first == 0u);
  BOOST_TEST(wrong_front == 0u);
  BOOST_TEST_REQUIRE(index.still_to_move() > 0u);  // pop_first() finds some still set aside
  BOOST_TEST(index.check_invariants());
  // pop_first moves them all and takes the true first, then the next ones in order.
  for (int k = 0; k < 100; ++k) {
    cpd::index_node* n = index.pop_first();
    BOOST_TEST_REQUIRE(n == brute_first(nodes, gone));
    take(n);
  }
  BOOST_TEST(index.still_to_move() == 0u);
  BOOST_TEST(index.check_invariants());
}

}  // namespace

BOOST_AUTO_TEST_CASE(an_idle_owner_moves_a_large_bucket_in_small_turns) {
  // The default window (2^30 ns, about 1.07 s) and 200,000 nodes due 1.5 to
  // 2.5 s out, as a pool with a million tasks queued ahead holds them: the
  // owner only wakes when wake_time() says. Each turn holds the owner's
  // lock: it must move about turn_goal (1,024) nodes, not a 32nd of the
  // window's share (tens of thousands, milliseconds under the lock).
  cpd::deadline_index index;
  std::vector<bare_node> nodes(200'000);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> offset_ns(1'500'000'000, 2'500'000'000);
  const time_point start = clock::now();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(start + std::chrono::nanoseconds(offset_ns(rng)));
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  time_point now = start;
  std::vector<const cpd::index_node*> out;
  std::size_t turns = 0, early = 0, late = 0, largest_share = 0, most_set_aside = 0;
  while (!index.empty()) {
    const auto wake = index.wake_time();
    BOOST_TEST_REQUIRE(wake.has_value());
    now = std::max(now, *wake);
    if (const auto first = index.first_deadline(); first && *first < now) ++late;
    const std::size_t before = index.still_to_move();
    most_set_aside = std::max(most_set_aside, before);
    while (cpd::index_node* n = index.pop_due(now)) {
      if (n->deadline() > now) ++early;
      out.push_back(n);
    }
    largest_share = std::max(largest_share, before - std::min(before, index.still_to_move()));
    ++turns;
    BOOST_TEST_REQUIRE(turns < 1'000'000u);
  }
  BOOST_TEST(out.size() == nodes.size());
  BOOST_TEST(early == 0u);
  BOOST_TEST(late == 0u);
  BOOST_TEST(std::is_sorted(out.begin(), out.end(), [](const cpd::index_node* a, const cpd::index_node* b) {
    return runs_before(*a, *b);
  }));
  BOOST_TEST(most_set_aside > 50'000u);
  BOOST_TEST(largest_share <= 2'048u);
}

BOOST_AUTO_TEST_CASE(with_nodes_set_aside_the_first_node_is_still_known_and_popped_first) {
  // Sixteen phases against the window grid, about a sixteenth of a window apart.
  for (int phase = 0; phase < 16; ++phase) check_first_while_moving(phase * 65us);
}

BOOST_AUTO_TEST_SUITE_END()

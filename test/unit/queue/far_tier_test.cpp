// The far tier of delayed_work_queue: tasks due after the near window wait in
// buckets, come into the heap as time reaches them, and keep the exact
// (deadline, sequence) order throughout.
#include "queue_test_support.hpp"

#include <chronopool/detail/deadline_index.hpp>

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

namespace {

struct bare_node : cpd::index_node {};

}  // namespace

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
  BOOST_TEST(index.reserved_bytes() * 8 <= peak);
  std::vector<cpd::index_node*> left;
  while (cpd::index_node* n = index.pop_first()) left.push_back(n);
  BOOST_TEST(left.size() == 81u);
  for (std::size_t k = 0; k < left.size(); ++k) BOOST_TEST(left[k] == &nodes[k * 1000]);
}

BOOST_AUTO_TEST_SUITE_END()

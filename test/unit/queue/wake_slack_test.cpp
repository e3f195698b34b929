// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A wake-up slack: the index names the latest near deadline within the slack
// after the first, and a queue's leader sleeps on to it, so that one wake-up
// serves them all. Nothing is handed out before its deadline.
#include "queue_test_support.hpp"

#include <chronopool/detail/queue/deadline_index.hpp>

#include <boost/test/unit_test.hpp>

#include <future>
#include <vector>

namespace {

using namespace queue_test;

void insert_at(cpd::deadline_index& index, bare_node& n, time_point deadline, std::uint64_t sequence) {
  n.set_deadline(deadline);
  n.set_sequence(sequence);
  index.insert(&n);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wake_slack)

BOOST_AUTO_TEST_CASE(the_index_wakes_for_the_latest_near_deadline_within_the_slack) {
  cpd::deadline_index index;
  std::vector<bare_node> nodes(5);
  const time_point base = clock::now() + 100ms;
  // In order: they wait on the wheel, then move onto the run (sorted).
  insert_at(index, nodes[0], base, 0);
  insert_at(index, nodes[1], base + 10us, 1);
  insert_at(index, nodes[2], base + 30us, 2);
  insert_at(index, nodes[3], base + 80us, 3);
  // Still in the wheel: its first slot's keys (and the next slot's) count.
  BOOST_TEST_REQUIRE(index.heap_front() == nullptr);
  BOOST_TEST(ticks(*index.wake_time()) == ticks(base));
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(base + 30us));
  BOOST_TEST(ticks(*index.wake_time(1ms)) == ticks(base + 80us));
  index.pull_earliest();  // the first slot comes onto the run
  BOOST_TEST_REQUIRE(index.heap_front() != nullptr);
  BOOST_TEST(ticks(*index.wake_time()) == ticks(base));
  BOOST_TEST(ticks(*index.wake_time(0ns)) == ticks(base));
  BOOST_TEST(ticks(*index.wake_time(5us)) == ticks(base));
  BOOST_TEST(ticks(*index.wake_time(10us)) == ticks(base + 10us));
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(base + 30us));
  BOOST_TEST(ticks(*index.wake_time(1ms)) == ticks(base + 80us));
  // One that comes before the run's last goes to the heap: found there too.
  insert_at(index, nodes[4], base + 40us, 4);
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(base + 40us));
  // An erased node is no reason to wait.
  BOOST_TEST_REQUIRE(index.erase(nodes[4]));
  BOOST_TEST_REQUIRE(index.erase(nodes[2]));
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(base + 10us));
  // Nor is the first one gone: the slack runs from the new first.
  BOOST_TEST_REQUIRE(index.erase(nodes[0]));
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(base + 10us));
  BOOST_TEST(ticks(*index.wake_time(70us)) == ticks(base + 80us));
}

BOOST_AUTO_TEST_CASE(many_nodes_within_the_slack_give_a_wake_among_them_never_past_the_slack) {
  cpd::deadline_index index;
  std::vector<bare_node> nodes(1000);
  const time_point base = clock::now() + 100ms;
  // Reverse order: all but the first go to the heap once the run holds it.
  insert_at(index, nodes[0], base + 2ms, 0);
  index.pull_earliest();
  BOOST_TEST_REQUIRE(index.heap_front() != nullptr);
  for (std::size_t i = 1; i < nodes.size(); ++i)
    insert_at(index, nodes[i], base + std::chrono::nanoseconds(100 * (nodes.size() - i)), i);
  const time_point first = base + 100ns;
  BOOST_TEST_REQUIRE(ticks(*index.wake_time()) == ticks(first));
  const time_point wake = *index.wake_time(50us);
  BOOST_TEST(ticks(wake) > ticks(first));
  BOOST_TEST(ticks(wake) <= ticks(first + 50us));
  BOOST_TEST(index.check_invariants());
}

BOOST_AUTO_TEST_CASE(a_wheel_slot_boundary_within_the_slack_is_crossed) {
  // Two nodes in neighbouring wheel slots (about 1 ms wide), 100 us apart.
  cpd::deadline_index index;
  std::vector<bare_node> nodes(2);
  constexpr std::int64_t width = std::int64_t{1} << 20;
  const std::int64_t now = clock::now().time_since_epoch().count();
  // The last nanosecond of a slot 100 slots on, then 100 us into the next.
  const time_point first{cpd::duration((now / width + 100) * width + width - 1)};
  insert_at(index, nodes[0], first, 0);
  insert_at(index, nodes[1], first + 100us, 1);
  BOOST_TEST_REQUIRE(index.heap_front() == nullptr);
  BOOST_TEST(ticks(*index.wake_time(50us)) == ticks(first));
  BOOST_TEST(ticks(*index.wake_time(100us)) == ticks(first + 100us));
}

BOOST_AUTO_TEST_CASE(a_leader_with_a_slack_takes_the_first_task_once_the_last_it_covers_is_due) {
  cpd::delayed_work_queue q;
  q.set_wake_slack(1ms);
  const time_point first = clock::now() + 20ms;
  const time_point last = first + 900us;
  cpd::task_ptr a = make_noop(first, 1);
  cpd::task_ptr b = make_noop(last, 2);
  BOOST_TEST_REQUIRE(q.offer(a));
  BOOST_TEST_REQUIRE(q.offer(b));
  auto f = std::async(std::launch::async, [&] {
    std::vector<std::pair<cpd::task_ptr, time_point>> got;
    for (int i = 0; i < 2; ++i) {
      cpd::task_ptr t = q.take();
      got.emplace_back(std::move(t), clock::now());
    }
    return got;
  });
  BOOST_TEST_REQUIRE((f.wait_for(hang_limit) == std::future_status::ready));
  const auto got = f.get();
  BOOST_TEST(got[0].first.get() == a.get());
  BOOST_TEST(got[1].first.get() == b.get());
  // One wake-up for both: the first comes no sooner than the second is due.
  BOOST_TEST(ticks(got[0].second) >= ticks(last));
}

BOOST_AUTO_TEST_CASE(a_task_beyond_the_slack_does_not_hold_back_the_first) {
  cpd::delayed_work_queue q;
  q.set_wake_slack(100us);
  const time_point first = clock::now() + 20ms;
  cpd::task_ptr a = make_noop(first, 1);
  cpd::task_ptr b = make_noop(first + 2s, 2);
  BOOST_TEST_REQUIRE(q.offer(a));
  BOOST_TEST_REQUIRE(q.offer(b));
  auto f = std::async(std::launch::async, [&] {
    cpd::task_ptr t = q.take();
    return std::make_pair(std::move(t), clock::now());
  });
  BOOST_TEST_REQUIRE((f.wait_for(hang_limit) == std::future_status::ready));
  const auto got = f.get();
  BOOST_TEST(got.first.get() == a.get());
  BOOST_TEST(ticks(got.second) >= ticks(first));
  BOOST_TEST(ticks(got.second) < ticks(first + 2s));
}

BOOST_AUTO_TEST_CASE(an_earlier_task_wakes_a_leader_sleeping_for_a_slack) {
  cpd::delayed_work_queue q;
  q.set_wake_slack(1ms);
  const time_point later = clock::now() + 2s;
  cpd::task_ptr far = make_noop(later, 1);
  BOOST_TEST_REQUIRE(q.offer(far));
  auto f = std::async(std::launch::async, [&] {
    cpd::task_ptr t = q.take();
    return std::make_pair(std::move(t), clock::now());
  });
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  const time_point near = clock::now() + 10ms;
  cpd::task_ptr early = make_noop(near, 2);
  BOOST_TEST_REQUIRE(q.offer(early));
  BOOST_TEST_REQUIRE((f.wait_for(hang_limit) == std::future_status::ready));
  const auto got = f.get();
  BOOST_TEST(got.first.get() == early.get());
  BOOST_TEST(ticks(got.second) >= ticks(near));
}

BOOST_AUTO_TEST_SUITE_END()

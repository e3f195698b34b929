// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The task inbox: a task submitted while the leader sleeps for an earlier
// time is pushed without the lock, and every locked look at the queue (a
// size, a removal, a drain, the leader's wake-up) sees it first.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <future>
#include <limits>
#include <vector>

namespace {

using namespace queue_test;

constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

/// A queue whose one taker leads, asleep for a head @p head_in ahead with
/// the gate open. Closing the queue at the end lets the taker return.
struct sleeping_leader {
  cpd::delayed_work_queue q;
  cpd::task_ptr head;
  std::future<cpd::task_ptr> taker;

  explicit sleeping_leader(std::chrono::milliseconds head_in) : head(make_noop(clock::now() + head_in, 1)) {
    BOOST_TEST_REQUIRE(q.offer(head));
    taker = std::async(std::launch::async, [this] { return q.take(); });
    BOOST_TEST_REQUIRE(test_support::eventually([&] { return q.gate_open(); }, hang_limit));
  }
  sleeping_leader(const sleeping_leader&) = delete;
  sleeping_leader& operator=(const sleeping_leader&) = delete;
  ~sleeping_leader() {
    q.set_mode(cpd::delayed_work_queue::mode::closed);
    taker.wait();
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(task_inbox)

BOOST_AUTO_TEST_CASE(a_task_due_after_the_gate_waits_in_the_inbox_until_a_locked_look_indexes_it) {
  sleeping_leader s(10s);
  const cpd::task_ptr later = make_noop(clock::now() + 20s, 2);
  BOOST_TEST((s.q.offer_submitted(later, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST(s.q.inbox_drained() == 0u);
  BOOST_TEST(s.q.size() == 2u);  // size() drains first
  BOOST_TEST(s.q.inbox_drained() == 1u);
  BOOST_TEST(ticks(*s.q.head_deadline()) == ticks(s.head->deadline()));
}

BOOST_AUTO_TEST_CASE(a_task_due_before_the_gate_takes_the_lock_and_wakes_the_leader_for_it) {
  sleeping_leader s(10s);
  const cpd::task_ptr sooner = make_noop(clock::now() + 30ms, 2);
  BOOST_TEST((s.q.offer_submitted(sooner, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST_REQUIRE((s.taker.wait_for(hang_limit) == std::future_status::ready));
  const time_point came = clock::now();
  BOOST_TEST(s.taker.get().get() == sooner.get());
  BOOST_TEST(ticks(came) >= ticks(sooner->deadline()));
  BOOST_TEST(s.q.inbox_drained() == 0u);
  s.taker = std::async(std::launch::async, [] { return cpd::task_ptr(); });  // nothing left to wait for
}

BOOST_AUTO_TEST_CASE(a_bounded_offer_never_uses_the_inbox) {
  sleeping_leader s(10s);
  const cpd::task_ptr later = make_noop(clock::now() + 20s, 2);
  BOOST_TEST((s.q.offer_submitted(later, 10) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST(s.q.size() == 2u);
  BOOST_TEST(s.q.inbox_drained() == 0u);
  BOOST_TEST((s.q.offer_submitted(make_noop(clock::now() + 30s, 3), 2) == cpd::delayed_work_queue::offer_status::full));
}

BOOST_AUTO_TEST_CASE(remove_finds_a_task_still_in_the_inbox) {
  sleeping_leader s(10s);
  const cpd::task_ptr later = make_noop(clock::now() + 20s, 2);
  BOOST_TEST_REQUIRE((s.q.offer_submitted(later, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST(s.q.remove(*later));
  BOOST_TEST(s.q.inbox_drained() == 1u);
  BOOST_TEST(s.q.size() == 1u);
  BOOST_TEST(!s.q.remove(*later));
}

BOOST_AUTO_TEST_CASE(drain_returns_the_inbox_tasks_with_the_rest_in_deadline_order) {
  sleeping_leader s(10s);
  const time_point now = clock::now();
  const cpd::task_ptr third = make_noop(now + 30s, 3);
  const cpd::task_ptr second = make_noop(now + 20s, 2);
  BOOST_TEST_REQUIRE((s.q.offer_submitted(third, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST_REQUIRE((s.q.offer_submitted(second, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  const std::vector<cpd::task_ptr> all = s.q.drain();
  BOOST_TEST_REQUIRE(all.size() == 3u);
  BOOST_TEST(all[0].get() == s.head.get());
  BOOST_TEST(all[1].get() == second.get());
  BOOST_TEST(all[2].get() == third.get());
  BOOST_TEST(s.q.size() == 0u);
}

BOOST_AUTO_TEST_CASE(the_leader_drains_the_inbox_as_it_wakes_and_its_tasks_come_in_order) {
  // The head far enough ahead that the push comes while its leader sleeps,
  // even on a loaded machine.
  sleeping_leader s(500ms);
  const cpd::task_ptr next = make_noop(s.head->deadline() + 20ms, 2);
  BOOST_TEST_REQUIRE((s.q.offer_submitted(next, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST_REQUIRE((s.taker.wait_for(hang_limit) == std::future_status::ready));
  BOOST_TEST(s.taker.get().get() == s.head.get());
  BOOST_TEST(s.q.inbox_drained() == 1u);
  s.taker = std::async(std::launch::async, [&s] { return s.q.take(); });
  BOOST_TEST_REQUIRE((s.taker.wait_for(hang_limit) == std::future_status::ready));
  const time_point came = clock::now();
  BOOST_TEST(s.taker.get().get() == next.get());
  BOOST_TEST(ticks(came) >= ticks(next->deadline()));
  s.taker = std::async(std::launch::async, [] { return cpd::task_ptr(); });
}

BOOST_AUTO_TEST_CASE(the_gate_is_closed_while_no_leader_sleeps) {
  cpd::delayed_work_queue q;
  BOOST_TEST(!q.gate_open());
  const cpd::task_ptr later = make_noop(clock::now() + 20s, 1);
  BOOST_TEST((q.offer_submitted(later, unbounded) == cpd::delayed_work_queue::offer_status::queued));
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(q.inbox_drained() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The ready lane: work due the moment it is queued (offer_now) bypasses the
// heap but still leaves in global (deadline, sequence) order, can be removed
// by slot, and counts in every whole-queue operation.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace queue_test;

/// A task due now: what pool_core::submit_from_executor makes.
cpd::task_ptr make_ready(std::uint64_t sequence) { return make_noop(clock::now(), sequence); }

}  // namespace

BOOST_AUTO_TEST_SUITE(ready_lane)

BOOST_AUTO_TEST_CASE(ready_tasks_leave_in_submission_order) {
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 100; ++i) {
    tasks.push_back(make_ready(i));
    BOOST_TEST_REQUIRE(q.offer_now(tasks.back()));
  }
  BOOST_TEST(q.size() == 100u);
  BOOST_TEST(q.check_invariants());
  for (const auto& expected : tasks) {
    cpd::task_ptr t = q.poll();
    BOOST_TEST_REQUIRE(t.get() == expected.get());
    BOOST_TEST(t->heap_index == cpd::task_base::not_queued);
  }
  BOOST_TEST(q.empty());
  BOOST_TEST(!q.poll());
}

BOOST_AUTO_TEST_CASE(due_heap_tasks_and_ready_tasks_interleave_by_deadline_then_sequence) {
  // A heap task due before a post runs before it; one due at the same
  // instant runs in sequence order; one due later waits for its deadline.
  cpd::delayed_work_queue q;
  const time_point now = clock::now();
  cpd::task_ptr early = make_noop(now - 10ms, 5);
  cpd::task_ptr tie_before = make_noop(now, 1);
  cpd::task_ptr ready_a = make_noop(now, 2);
  cpd::task_ptr tie_after = make_noop(now, 3);
  cpd::task_ptr ready_b = make_noop(now, 4);
  cpd::task_ptr later = make_noop(now + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(later));
  BOOST_TEST_REQUIRE(q.offer_now(ready_a));
  BOOST_TEST_REQUIRE(q.offer(tie_after));
  BOOST_TEST_REQUIRE(q.offer(early));
  BOOST_TEST_REQUIRE(q.offer_now(ready_b));
  BOOST_TEST_REQUIRE(q.offer(tie_before));
  BOOST_TEST(q.check_invariants());
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(early->deadline()));

  for (const auto* expected : {early.get(), tie_before.get(), ready_a.get(), tie_after.get(), ready_b.get()}) {
    cpd::task_ptr t = q.poll();
    BOOST_TEST_REQUIRE(t.get() == expected);
  }
  BOOST_TEST(!q.poll());  // only `later` is left, not due
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(q.pop_head().get() == later.get());
}

BOOST_AUTO_TEST_CASE(remove_from_the_middle_front_and_back_of_the_lane) {
  std::atomic<int> freed{0};
  cpd::delayed_work_queue q;
  std::vector<cpd::task_base*> raw;
  for (std::uint64_t i = 0; i < 6; ++i) {
    cpd::task_ptr t = make_probe(freed, clock::now(), i);
    raw.push_back(t.get());
    BOOST_TEST_REQUIRE(q.offer_now(std::move(t)));  // the queue holds the only reference
  }
  // Middle, front and back: each frees its task at once.
  BOOST_TEST(q.remove(*raw[2]));
  BOOST_TEST(freed.load() == 1);
  BOOST_TEST(q.remove(*raw[0]));
  BOOST_TEST(q.remove(*raw[5]));
  BOOST_TEST(freed.load() == 3);
  BOOST_TEST(q.size() == 3u);
  BOOST_TEST(q.check_invariants());

  for (std::size_t expected : {1u, 3u, 4u}) {
    cpd::task_ptr t = q.poll();
    BOOST_TEST_REQUIRE(t.get() == raw[expected]);
  }
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(remove_refuses_a_task_that_already_left_the_lane) {
  cpd::delayed_work_queue q;
  cpd::task_ptr a = make_ready(0);
  cpd::task_ptr b = make_ready(1);
  BOOST_TEST_REQUIRE(q.offer_now(a));
  BOOST_TEST_REQUIRE(q.offer_now(b));
  BOOST_TEST(q.poll().get() == a.get());
  BOOST_TEST(!q.remove(*a));  // taken: no longer queued
  BOOST_TEST(q.remove(*b));
  BOOST_TEST(!q.remove(*b));  // twice: the second finds nothing
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(a_cancelled_task_is_not_queued) {
  cpd::delayed_work_queue q;
  cpd::task_ptr t = make_ready(0);
  BOOST_TEST_REQUIRE(t->cancel(false));
  BOOST_TEST(!q.offer_now(t));
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(remove_if_drain_and_bounds_see_both_the_heap_and_the_lane) {
  cpd::delayed_work_queue q;
  const time_point now = clock::now();
  std::vector<cpd::task_ptr> all;
  for (std::uint64_t i = 0; i < 20; ++i) {
    all.push_back(i % 2 == 0 ? make_noop(now, i) : make_noop(now + 1h, i));
    const bool queued = i % 2 == 0 ? q.offer_now(all.back()) : q.offer(all.back());
    BOOST_TEST_REQUIRE(queued);
  }
  BOOST_TEST(q.size() == 20u);
  // offer_within's bound counts the lane too.
  BOOST_TEST(q.offer_within(make_noop(now, 100), 20) == cpd::delayed_work_queue::offer_status::full);

  // Take every third task, from both parts; the rest keeps its order.
  auto removed = q.remove_if([](const cpd::task_base& t) { return t.sequence() % 3 == 0; });
  BOOST_TEST(removed.size() == 7u);  // 0, 3, 6, ..., 18
  BOOST_TEST(std::is_sorted(removed.begin(), removed.end(),
                            [](const cpd::task_ptr& a, const cpd::task_ptr& b) { return runs_before(*a, *b); }));
  BOOST_TEST(q.size() == 13u);
  BOOST_TEST(q.check_invariants());
  // A task left in the lane can still be removed by slot after renumbering.
  BOOST_TEST(q.remove(*all[4]));
  BOOST_TEST(q.check_invariants());

  auto rest = q.drain();
  BOOST_TEST(rest.size() == 12u);
  for (const auto& t : rest) BOOST_TEST(t->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(std::is_sorted(rest.begin(), rest.end(),
                            [](const cpd::task_ptr& a, const cpd::task_ptr& b) { return runs_before(*a, *b); }));
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
  // The lane works after a drain.
  cpd::task_ptr again = make_ready(200);
  BOOST_TEST(q.offer_now(again));
  BOOST_TEST(q.poll().get() == again.get());
}

BOOST_AUTO_TEST_CASE(offer_now_wakes_the_taker_sleeping_for_a_later_head) {
  cpd::delayed_work_queue q;
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));
  cpd::task_ptr got;
  std::thread taker([&] { got = q.take(); });
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));  // sleeping for the far head
  cpd::task_ptr now = make_ready(1);
  BOOST_TEST_REQUIRE(q.offer_now(now));
  taker.join();  // woken: takes the ready task, not the far one
  BOOST_TEST(got.get() == now.get());
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(!q.has_leader());
}

BOOST_AUTO_TEST_CASE(draining_takers_return_once_heap_and_lane_are_empty) {
  cpd::delayed_work_queue q;
  cpd::task_ptr a = make_ready(0);
  BOOST_TEST_REQUIRE(q.offer_now(a));
  q.set_mode(cpd::delayed_work_queue::mode::draining);
  auto first = q.wait_for_task(time_point::max());
  BOOST_TEST(first.status == cpd::delayed_work_queue::wait_status::task);
  BOOST_TEST(first.task.get() == a.get());
  auto second = q.wait_for_task(time_point::max());
  BOOST_TEST(second.status == cpd::delayed_work_queue::wait_status::closed);
}

BOOST_AUTO_TEST_CASE(random_mix_against_a_sorted_model) {
  // Random offers to both parts, removals and polls; every poll must return
  // the model's smallest due (deadline, sequence), and the invariants hold.
  std::mt19937_64 rng(7);
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> model;  // queued tasks
  const time_point base = clock::now();
  std::uint64_t seq = 0;
  auto by_key = [](const cpd::task_ptr& a, const cpd::task_ptr& b) { return runs_before(*a, *b); };
  for (int step = 0; step < 20'000; ++step) {
    const int op = std::uniform_int_distribution<int>(0, 9)(rng);
    if (op < 4) {
      cpd::task_ptr t = make_noop(clock::now(), seq++);
      BOOST_TEST_REQUIRE(q.offer_now(t));
      model.push_back(t);
    } else if (op < 6) {
      const auto ms = std::chrono::milliseconds(std::uniform_int_distribution<int>(-5, 5)(rng));
      cpd::task_ptr t = make_noop(ms.count() > 0 ? base + 1h + ms : base + ms, seq++);
      BOOST_TEST_REQUIRE(q.offer(t));
      model.push_back(t);
    } else if (op < 8 && !model.empty()) {
      const std::size_t i = std::uniform_int_distribution<std::size_t>(0, model.size() - 1)(rng);
      BOOST_TEST_REQUIRE(q.remove(*model[i]));
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      cpd::task_ptr got = q.poll();
      auto it = std::min_element(model.begin(), model.end(), by_key);
      if (it == model.end() || (*it)->deadline() > clock::now()) {
        BOOST_TEST_REQUIRE(!got);
      } else {
        BOOST_TEST_REQUIRE(got.get() == it->get());
        model.erase(it);
      }
    }
    BOOST_TEST_REQUIRE(q.size() == model.size());
    if (step % 500 == 0) BOOST_TEST_REQUIRE(q.check_invariants());
  }
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_SUITE_END()

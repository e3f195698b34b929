// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The due segment: a taker that finds several tasks due while no other
// taker waits sets out up to due_segment::capacity more, in (deadline,
// sequence) order, for any taker to claim without the lock. They stay
// queued for every other purpose: counted, removable, drained, purged;
// a task queued later that comes before them sends them back into the
// index; a posted function keeps its turn; a manual clock never sets any out.
#include "queue_test_support.hpp"

#include <chronopool/detail/pool/queued_function.hpp>
#include <chronopool/detail/queue/due_segment.hpp>
#include <chronopool/detail/time/manual_time.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace queue_test;
using wait_status = cpd::delayed_work_queue::wait_status;
constexpr std::size_t cap = cpd::due_segment::capacity;

/// @p n tasks due 1 ms ago with sequences from @p first, offered in reverse.
std::vector<cpd::task_ptr> offer_due(cpd::delayed_work_queue& q, std::size_t n, std::uint64_t first = 0) {
  const time_point now = clock::now();
  std::vector<cpd::task_ptr> due;
  for (std::size_t i = 0; i < n; ++i) due.push_back(make_noop(now - 1ms, first + i));
  for (std::size_t i = n; i-- > 0;) BOOST_REQUIRE(q.offer(due[i]));
  return due;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(due_segment_claims)

BOOST_AUTO_TEST_CASE(a_take_sets_out_due_tasks_which_are_claimed_in_order_without_the_lock) {
  cpd::delayed_work_queue q;
  BOOST_TEST(!q.claim_due());  // nothing set out yet
  std::vector<cpd::task_ptr> due = offer_due(q, cap + 4);
  cpd::task_ptr later = make_noop(clock::now() + 1h, 999);
  BOOST_TEST_REQUIRE(q.offer(later));

  auto r = q.try_take();
  BOOST_TEST_REQUIRE(r.status == wait_status::task);
  BOOST_TEST(r.task.get() == due[0].get());
  // Set out, and still counted as queued.
  BOOST_TEST(q.size() == cap + 4u);
  BOOST_TEST(q.check_invariants());
  for (std::size_t i = 1; i <= cap; ++i) {
    cpd::task_ptr t(q.claim_due(), cpd::task_ptr::adopt);
    BOOST_TEST_REQUIRE(t.get() == due[i].get());
  }
  BOOST_TEST(!q.claim_due());
  BOOST_TEST(q.size() == 4u);
  // The rest: one taken, two set out, the later task stays.
  r = q.try_take();
  BOOST_TEST(r.task.get() == due[cap + 1].get());
  r = q.try_take();
  BOOST_TEST(r.task.get() == due[cap + 2].get());
  r = q.try_take();
  BOOST_TEST(r.task.get() == due[cap + 3].get());
  r = q.try_take();
  BOOST_TEST(r.status == wait_status::timeout);
  BOOST_TEST(q.size() == 1u);
}

BOOST_AUTO_TEST_CASE(tasks_set_out_are_removed_drained_and_purged_like_queued_ones) {
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> due = offer_due(q, 8);
  cpd::task_ptr later = make_noop(clock::now() + 1h, 100);
  BOOST_TEST_REQUIRE(q.offer(later));
  auto r = q.try_take();  // takes due[0], sets out due[1..7]
  BOOST_TEST_REQUIRE(r.task.get() == due[0].get());
  BOOST_TEST(q.size() == 8u);

  BOOST_TEST(q.remove(*due[3]));
  BOOST_TEST(due[3]->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(!q.remove(*due[3]));
  BOOST_TEST(q.size() == 7u);

  // Purge the odd ones: 1, 5, 7 leave; 2, 4, 6 stay set out in order.
  auto purged = q.remove_if([](const cpd::task_base& t) { return t.sequence() % 2 == 1; });
  BOOST_TEST_REQUIRE(purged.size() == 3u);
  BOOST_TEST(purged[0].get() == due[1].get());
  BOOST_TEST(purged[2].get() == due[7].get());
  BOOST_TEST(q.size() == 4u);
  cpd::task_ptr c(q.claim_due(), cpd::task_ptr::adopt);
  BOOST_TEST(c.get() == due[2].get());

  // A claimed task is not queued any more: remove() fails for it.
  BOOST_TEST(!q.remove(*c));

  auto all = q.drain();
  BOOST_TEST_REQUIRE(all.size() == 3u);
  BOOST_TEST(all[0].get() == due[4].get());
  BOOST_TEST(all[1].get() == due[6].get());
  BOOST_TEST(all[2].get() == later.get());
  BOOST_TEST(q.empty());
  BOOST_TEST(!q.claim_due());
}

BOOST_AUTO_TEST_CASE(a_task_queued_before_the_set_out_ones_sends_them_back) {
  // A task due earlier than the last one set out is queued after the fill:
  // the order stays exact, so it comes out before them.
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> due = offer_due(q, 6, 10);
  auto r = q.try_take();
  BOOST_TEST_REQUIRE(r.task.get() == due[0].get());
  cpd::task_ptr early = make_noop(clock::now() - 1h, 100);
  BOOST_TEST_REQUIRE(q.offer(early));
  BOOST_TEST(!q.claim_due());  // sent back into the index
  BOOST_TEST(q.size() == 6u);
  BOOST_TEST(q.check_invariants());
  r = q.try_take();
  BOOST_TEST(r.task.get() == early.get());
  for (std::size_t i = 1; i < due.size(); ++i) {
    cpd::task_ptr t = q.poll();
    BOOST_TEST_REQUIRE(t.get() == due[i].get());
    BOOST_TEST(t->heap_index == cpd::task_base::not_queued);
  }
  // One due later than all of them changes nothing.
  due = offer_due(q, 4, 200);
  r = q.try_take();
  BOOST_TEST_REQUIRE(r.task.get() == due[0].get());
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now(), 300)));
  cpd::task_ptr t(q.claim_due(), cpd::task_ptr::adopt);
  BOOST_TEST(t.get() == due[1].get());
}

BOOST_AUTO_TEST_CASE(the_head_deadline_is_the_first_task_still_set_out) {
  // Distinct deadlines, so that a stale answer shows: once the first task
  // set out is claimed, the head is the next one, not the claimed one.
  cpd::delayed_work_queue q;
  const time_point now = clock::now();
  std::vector<cpd::task_ptr> due;
  for (std::size_t i = 0; i < 4; ++i) due.push_back(make_noop(now - 10ms + i * 1ms, i));
  for (auto& t : due) BOOST_REQUIRE(q.offer(t));
  cpd::task_ptr later = make_noop(now + 1h, 99);
  BOOST_REQUIRE(q.offer(later));

  auto r = q.try_take();  // takes due[0], sets out due[1..3]
  BOOST_TEST_REQUIRE(r.status == wait_status::task);
  BOOST_TEST(r.task.get() == due[0].get());
  BOOST_TEST((q.head_deadline() == due[1]->deadline()));
  cpd::task_ptr first(q.claim_due(), cpd::task_ptr::adopt);
  BOOST_TEST_REQUIRE(first.get() == due[1].get());
  BOOST_TEST((q.head_deadline() == due[2]->deadline()));
  for (std::size_t i = 2; i < 4; ++i) cpd::task_ptr(q.claim_due(), cpd::task_ptr::adopt);
  BOOST_TEST((q.head_deadline() == later->deadline()));
}

BOOST_AUTO_TEST_CASE(poll_takes_a_set_out_task_out_of_the_taken_count) {
  // poll() is no taker: a set-out task it takes no longer counts as taken
  // (quiet checks compare that count with what takers finished).
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> due = offer_due(q, 4);
  auto r = q.try_take();  // taken: counts 1; the other 3 set out, counted too
  BOOST_TEST_REQUIRE(r.status == wait_status::task);
  BOOST_TEST(q.current_activity().taken == 4u);
  cpd::task_ptr t = q.poll();
  BOOST_TEST_REQUIRE(t.get() == due[1].get());
  BOOST_TEST(t->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(q.current_activity().taken == 3u);
}

BOOST_AUTO_TEST_CASE(a_posted_function_keeps_its_turn) {
  // While a function waits, a task is taken alone: nothing is set out.
  cpd::delayed_work_queue q;
  std::vector<cpd::task_ptr> due = offer_due(q, 8);
  int ran = 0;
  for (int i = 0; i < 2; ++i)
    BOOST_TEST_REQUIRE(q.offer_function(cpd::make_queued_function([&ran] { ++ran; }, std::allocator<void>())));
  std::size_t tasks_alone = 0;
  while (ran < 2) {
    auto r = q.try_take();
    if (r.status == wait_status::function) {
      r.function->run();  // runs and frees it
      continue;
    }
    BOOST_TEST_REQUIRE(r.status == wait_status::task);
    BOOST_TEST(!q.claim_due());  // a function was still queued
    ++tasks_alone;
  }
  BOOST_TEST(tasks_alone >= 1u);
  auto r = q.try_take();
  BOOST_TEST_REQUIRE(r.status == wait_status::task);
  std::size_t claimed = 0;
  while (cpd::task_ptr t = cpd::task_ptr(q.claim_due(), cpd::task_ptr::adopt)) ++claimed;
  BOOST_TEST(claimed == 8u - tasks_alone - 1u);
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(a_queue_on_a_manual_clock_sets_nothing_out) {
  cpd::manual_time m;
  cpd::delayed_work_queue q;
  q.use_manual_time(&m);
  const time_point now = m.now();
  std::vector<cpd::task_ptr> due;
  for (std::uint64_t i = 0; i < 4; ++i) {
    due.push_back(make_noop(now, i));
    BOOST_TEST_REQUIRE(q.offer(due.back()));
  }
  auto r = q.try_take();
  BOOST_TEST_REQUIRE(r.status == wait_status::task);
  BOOST_TEST(!q.claim_due());
  BOOST_TEST(q.size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_claim_overtaken_by_a_purge_that_sets_tasks_out_again_is_still_counted) {
  // A claimer empties a slot; before it counts the claim down, the lock
  // holder takes the other tasks back and sets them out again (remove_if
  // keeping them). The count must come out as the tasks still set out:
  // one lower and the last of them would never be claimed (the queue
  // would count it nowhere, and the next fill would overwrite its slot).
  const time_point now = clock::now();
  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 4; ++i) tasks.push_back(make_noop(now, i));
  cpd::task_base* raw[4] = {tasks[0].get(), tasks[1].get(), tasks[2].get(), tasks[3].get()};
  cpd::due_segment s;
  s.fill(raw, 4, 0);
  BOOST_TEST(s.left() == 4u);

  bool purged = false;
  cpd::task_base* const first = s.claim([&] {
    if (std::exchange(purged, true)) return;
    cpd::task_base* back[cap];
    std::size_t n = 0;
    s.take_all([&](cpd::task_base* t) { back[n++] = t; });
    BOOST_TEST(n == 3u);  // the claimed one is out already
    s.fill(back, n, 0);
  });
  BOOST_TEST_REQUIRE(purged);
  BOOST_TEST(first == raw[0]);
  BOOST_TEST(s.left() == 3u);
  for (std::size_t i = 1; i < 4; ++i) BOOST_TEST(s.claim() == raw[i]);
  BOOST_TEST(s.left() == 0u);
  BOOST_TEST(!s.claim());
}

BOOST_AUTO_TEST_CASE(claimers_and_a_remover_take_every_task_exactly_once) {
  // Three threads claim (and take under the lock when nothing is set out)
  // while this one removes every third task: each task leaves once.
  for (int round = 0; round < 50; ++round) {
    cpd::delayed_work_queue q;
    constexpr std::size_t n = 400;
    std::vector<cpd::task_ptr> due = offer_due(q, n);
    std::vector<std::atomic<int>> left(n);
    std::atomic<bool> go{false};
    auto taker = [&] {
      while (!go.load()) std::this_thread::yield();
      for (;;) {
        cpd::task_ptr t(q.claim_due(), cpd::task_ptr::adopt);
        if (!t) {
          auto r = q.try_take();
          if (r.status != wait_status::task) {
            if (q.empty()) return;
            continue;
          }
          t = std::move(r.task);
        }
        left[t->sequence()].fetch_add(1);
      }
    };
    std::vector<std::thread> takers;
    for (int i = 0; i < 3; ++i) takers.emplace_back(taker);
    go.store(true);
    for (std::size_t i = 0; i < n; i += 3)
      if (q.remove(*due[i])) left[i].fetch_add(1);
    for (auto& t : takers) t.join();
    for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(left[i].load() == 1, "task " << i << " left " << left[i].load() << " times");
    BOOST_TEST(q.empty());
  }
}

BOOST_AUTO_TEST_CASE(claims_racing_a_purge_that_sets_tasks_out_again_lose_none) {
  // remove_if() takes the set-out tasks back and sets the kept ones out
  // again while claimers go on without the lock. A claim that emptied a
  // slot and has not counted itself down yet when the kept tasks are set
  // out again must still be counted: were it lost, the count would say
  // one task fewer than the slots hold, and the last one would stay in
  // its slot unseen (nobody claims it, the queue looks empty, and the next
  // fill overwrites it), or, counted twice, the queue would never empty.
  const auto give_up = clock::now() + 20s;
  std::size_t rounds = 0;
  for (; rounds < 20 && clock::now() < give_up; ++rounds) {
    cpd::delayed_work_queue q;
    constexpr std::size_t n = 400;
    std::vector<cpd::task_ptr> due = offer_due(q, n);
    std::vector<std::atomic<int>> left(n);
    std::atomic<bool> go{false};
    std::atomic<bool> stuck{false};
    std::atomic<int> takers_done{0};
    auto taker = [&] {
      while (!go.load()) std::this_thread::yield();
      for (;;) {
        cpd::task_ptr t(q.claim_due(), cpd::task_ptr::adopt);
        if (!t) {
          auto r = q.try_take();  // sets out more while this taker is busy
          if (r.status != wait_status::task) {
            if (q.empty()) break;
            if (clock::now() > give_up) {  // counted, yet nothing to take
              stuck.store(true);
              break;
            }
            continue;
          }
          t = std::move(r.task);
        }
        left[t->sequence()].fetch_add(1);
      }
      takers_done.fetch_add(1);
    };
    std::vector<std::thread> takers;
    for (int i = 0; i < 3; ++i) takers.emplace_back(taker);
    go.store(true);
    while (takers_done.load() < 3) {
      // Keeps all but every 97th task: the rest are set out again.
      for (auto& gone : q.remove_if([](const cpd::task_base& t) { return t.sequence() % 97 == 5; }))
        left[gone->sequence()].fetch_add(1);
    }
    for (auto& t : takers) t.join();
    BOOST_TEST_REQUIRE(!stuck.load(), "round " << rounds << ": the queue counted a task no taker could find");
    for (std::size_t i = 0; i < n; ++i)
      BOOST_TEST_REQUIRE(left[i].load() == 1, "round " << rounds << ": task " << i << " left " << left[i].load() << " times");
    BOOST_TEST_REQUIRE(q.empty());
    BOOST_TEST_REQUIRE(q.check_invariants());
  }
  BOOST_TEST_MESSAGE(rounds << " rounds");
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Keeping the role: a leader that woke for the head and took it keeps the
// leader role while it runs a short task, instead of waking a follower for
// the next head; one backup follower stands in when it is held up.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <future>

namespace {

using namespace queue_test;

/// One take() on its own thread: the task and when it came.
std::future<std::pair<cpd::task_ptr, time_point>> take_timed_async(cpd::delayed_work_queue& q) {
  return std::async(std::launch::async, [&q] {
    cpd::task_ptr t = q.take();
    return std::make_pair(std::move(t), clock::now());
  });
}

/// One take() on a thread that never takes again (its task runs for ever,
/// as far as the queue knows): the task and when it came.
std::pair<cpd::task_ptr, time_point> take_once(cpd::delayed_work_queue& q) {
  auto f = take_timed_async(q);
  BOOST_TEST_REQUIRE((f.wait_for(hang_limit) == std::future_status::ready));
  return f.get();
}

struct two_tasks {
  cpd::task_ptr a;
  cpd::task_ptr b;
};

/// Queues a no-op due at @p first and one due at @p second.
two_tasks queue_two(cpd::delayed_work_queue& q, time_point first, time_point second) {
  two_tasks t{make_noop(first, 1), make_noop(second, 2)};
  BOOST_TEST_REQUIRE(q.offer(t.a));
  BOOST_TEST_REQUIRE(q.offer(t.b));
  return t;
}

/// Queues two tasks 30 ms apart and takes the first once; the leader that
/// took it must have handed the role on, not kept it.
two_tasks take_first_handing_on(cpd::delayed_work_queue& q) {
  const time_point first = clock::now() + 20ms;
  two_tasks queued = queue_two(q, first, first + 30ms);
  BOOST_TEST(take_once(q).first.get() == queued.a.get());
  BOOST_TEST(!q.leader_kept_role());
  BOOST_TEST(q.roles_kept() == 0u);
  return queued;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kept_role)

BOOST_AUTO_TEST_CASE(with_no_taker_idle_the_leader_keeps_its_role_and_the_next_taker_takes_it_over) {
  cpd::delayed_work_queue q;
  const time_point first = clock::now() + 20ms;
  const auto [a, b] = queue_two(q, first, first + 30ms);
  const auto took = take_once(q);
  BOOST_TEST(took.first.get() == a.get());
  // Nobody to wake: the role stays with the taker that took a, which is not
  // waiting (it runs a).
  BOOST_TEST(q.leader_kept_role());
  BOOST_TEST(!q.has_leader());
  BOOST_TEST(q.roles_kept() == 1u);
  // The next taker, whoever it is, takes the role over and waits for b.
  const auto got = take_once(q);
  BOOST_TEST(got.first.get() == b.get());
  BOOST_TEST(ticks(got.second) >= ticks(first + 30ms));
}

BOOST_AUTO_TEST_CASE(a_leader_held_up_by_its_task_is_stood_in_for_by_the_backup) {
  cpd::delayed_work_queue q;
  const time_point start = clock::now() + 10ms;
  const time_point first = start + 60ms;
  cpd::task_ptr z = make_noop(start, 1);
  cpd::task_ptr a = make_noop(first, 2);
  cpd::task_ptr b = make_noop(first + 5ms, 3);
  BOOST_TEST_REQUIRE(q.offer(z));
  BOOST_TEST_REQUIRE(q.offer(a));
  BOOST_TEST_REQUIRE(q.offer(b));
  // A first take that could keep the role (it does: no one is idle) makes
  // the followers from then on sleep as the backup.
  BOOST_TEST_REQUIRE(take_timed_async(q).get().first.get() == z.get());
  // The leader takes a and keeps its role (a backup sleeps), then never
  // comes back: its task runs for ever, as far as the queue knows.
  auto leader = take_timed_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  std::pair<cpd::task_ptr, time_point> got;
  const bool in_time = finishes_in_time([&] { got = take_timed_async(q).get(); }, [&] { q.set_mode(cpd::delayed_work_queue::mode::closed); });
  BOOST_TEST_REQUIRE(in_time);  // before the backup, the follower slept until woken: for ever
  const auto led = leader.get();
  if (led.first.get() == b.get()) {
    // The leader itself woke more than the grace late for a (a loaded
    // machine): the backup stood in for it then and took a, on time, and
    // the leader took b when it ran again. The backup, not having led,
    // kept no role: kept by the takers of z and b.
    BOOST_TEST(got.first.get() == a.get());
    BOOST_TEST(ticks(got.second) >= ticks(first));
    BOOST_TEST(q.roles_kept() == 2u);
    return;
  }
  BOOST_TEST(led.first.get() == a.get());
  BOOST_TEST(got.first.get() == b.get());
  BOOST_TEST(ticks(got.second) >= ticks(first + 5ms));
  // Kept by the takers of z and a; the one that took b keeps it again only
  // when no other taker is idle at that moment, which the scheduling of a
  // loaded machine decides (seen under `ctest -j2`).
  BOOST_TEST(q.roles_kept() >= 2u);
  BOOST_TEST(q.roles_kept() <= 3u);
}

BOOST_AUTO_TEST_CASE(after_long_tasks_the_leader_hands_the_role_on) {
  cpd::delayed_work_queue q;
  q.observe_run(5ms);  // the tasks run long: the next head needs another taker
  const two_tasks queued = take_first_handing_on(q);
  // The estimate decays with shorter tasks: after enough of them it keeps.
  for (int i = 0; i < 64; ++i) q.observe_run(1us);
  BOOST_TEST(take_once(q).first.get() == queued.b.get());
  BOOST_TEST(q.roles_kept() == 1u);
}

BOOST_AUTO_TEST_CASE(a_next_head_due_already_is_handed_to_an_idle_follower) {
  cpd::delayed_work_queue q;
  const time_point first = clock::now() + 300ms;
  const auto [a, b] = queue_two(q, first, first);  // b due with a: it must not wait for a's taker
  auto leader = take_timed_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  auto follower = take_timed_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.idle_takers() == 2u; }));
  BOOST_TEST_REQUIRE(ticks(clock::now()) < ticks(first));  // both wait when a comes due
  BOOST_TEST_REQUIRE((leader.wait_for(hang_limit) == std::future_status::ready));
  BOOST_TEST_REQUIRE((follower.wait_for(hang_limit) == std::future_status::ready));
  BOOST_TEST(leader.get().first.get() == a.get());
  BOOST_TEST(follower.get().first.get() == b.get());
  BOOST_TEST(q.roles_kept() == 0u);  // the follower was woken for b, not left to its backup wake-up
}

BOOST_AUTO_TEST_CASE(a_head_due_at_once_queued_while_the_role_is_kept_wakes_a_taker) {
  cpd::delayed_work_queue q;
  const time_point first = clock::now() + 20ms;
  const auto queued = queue_two(q, first, first + 1s);
  BOOST_TEST_REQUIRE(take_once(q).first.get() == queued.a.get());
  BOOST_TEST_REQUIRE(q.leader_kept_role());
  // A later head (still after the task's expected end) leaves the role kept...
  cpd::task_ptr c = make_noop(clock::now() + 500ms, 3);
  BOOST_TEST_REQUIRE(q.offer(c));
  BOOST_TEST(q.leader_kept_role());
  // ...one due already voids it: a taker must run it now.
  cpd::task_ptr d = make_noop(clock::now() - 1ms, 4);
  BOOST_TEST_REQUIRE(q.offer(d));
  BOOST_TEST(!q.leader_kept_role());
}

BOOST_AUTO_TEST_CASE(precision_mode_never_keeps_the_role) {
  cpd::delayed_work_queue q;
  q.set_precision_spin_limit(100us);
  take_first_handing_on(q);
}

BOOST_AUTO_TEST_SUITE_END()

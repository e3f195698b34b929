// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Blocking behaviour of delayed_work_queue: take/poll timing, the
// leader/follower hand-offs, modes and interrupt_waiters().
//
// Timing checks are one-sided where they can be exact (a task is never
// handed out before its deadline) and generous elsewhere (hang_limit).
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace queue_test;
using mode = cpd::delayed_work_queue::mode;
using wait_status = cpd::delayed_work_queue::wait_status;

/// Threads working on one queue. Joining is bounded: if they are still blocked
/// after hang_limit (a bug), the test fails and the queue is closed and
/// interrupted to release them, so a broken queue cannot hang the suite.
class thread_group {
 public:
  explicit thread_group(cpd::delayed_work_queue& q) : q_(q) {}
  thread_group(const thread_group&) = delete;
  thread_group& operator=(const thread_group&) = delete;
  ~thread_group() { join(); }

  template <class F>
  void spawn(F f) {
    threads_.emplace_back([this, f = std::move(f)]() mutable {
      f();
      finished_.fetch_add(1);
    });
  }

  std::size_t finished() const { return finished_.load(); }
  bool wait_finished(std::size_t n) const {
    return eventually([&] { return finished() >= n; });
  }

  void join() {
    if (!wait_finished(threads_.size())) {
      BOOST_ERROR("threads still blocked after the hang limit; closing the queue to release them");
      q_.interrupt_waiters();
      q_.set_mode(mode::closed);
    }
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  cpd::delayed_work_queue& q_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> finished_{0};
};

/// What one wait_for_task() call returned.
struct taken {
  std::atomic<bool> done{false};
  cpd::task_ptr task;
  wait_status status = wait_status::timeout;
  time_point at{};
};

/// Starts one thread per slot, each calling wait_for_task(limit) once.
void spawn_takers(thread_group& g, cpd::delayed_work_queue& q, std::vector<taken>& slots,
                  time_point limit = time_point::max()) {
  for (auto& s : slots) {
    g.spawn([&q, &s, limit] {
      auto r = q.wait_for_task(limit);
      s.task = std::move(r.task);
      s.status = r.status;
      s.at = clock::now();
      s.done.store(true);
    });
  }
}

std::size_t count_done(const std::vector<taken>& slots) {
  return static_cast<std::size_t>(std::count_if(slots.begin(), slots.end(), [](const taken& s) { return s.done.load(); }));
}

/// Calls @p f (a blocking queue call) on its own thread, bounded by
/// hang_limit: on a hang the queue is interrupted and closed to release it,
/// and the test fails.
template <class F>
auto bounded(cpd::delayed_work_queue& q, F f) -> decltype(f()) {
  decltype(f()) out{};
  const bool in_time = finishes_in_time([&] { out = f(); }, [&] {
    q.interrupt_waiters();
    q.set_mode(mode::closed);
  });
  BOOST_TEST(in_time, "blocking call still blocked after the hang limit");
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(blocking)

BOOST_AUTO_TEST_CASE(take_blocks_until_the_head_is_due) {
  cpd::delayed_work_queue q;
  const time_point start = clock::now();
  const time_point deadline = start + 50ms;
  cpd::task_ptr t = make_noop(deadline, 0);
  BOOST_TEST_REQUIRE(q.offer(t));

  cpd::task_ptr got;
  time_point at{};
  {
    thread_group g(q);
    g.spawn([&] {
      got = q.take();
      at = clock::now();
    });
    g.join();
  }
  BOOST_TEST(got.get() == t.get());
  BOOST_TEST(ticks(at) >= ticks(deadline));  // never handed out early
  BOOST_TEST((at - start < hang_limit));
  BOOST_TEST(q.empty());

  // A head already due is returned at once by take().
  cpd::task_ptr due = make_noop(clock::now() - 1ms, 1);
  BOOST_TEST_REQUIRE(q.offer(due));
  BOOST_TEST(bounded(q, [&] { return q.take(); }).get() == due.get());
}

BOOST_AUTO_TEST_CASE(earlier_head_wakes_a_taker_sleeping_for_a_far_head) {
  cpd::delayed_work_queue q;
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));

  std::vector<taken> slots(1);
  thread_group g(q);
  spawn_takers(g, q, slots);
  // The taker is asleep as leader, timed for the far head.
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  BOOST_TEST(count_done(slots) == 0u);

  const time_point near_deadline = clock::now() + 20ms;
  cpd::task_ptr near_task = make_noop(near_deadline, 1);
  BOOST_TEST_REQUIRE(q.offer(near_task));
  BOOST_TEST_REQUIRE(g.wait_finished(1));
  BOOST_TEST(slots[0].task.get() == near_task.get());
  BOOST_TEST(slots[0].status == wait_status::task);
  BOOST_TEST(ticks(slots[0].at) >= ticks(near_deadline));
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(far->deadline()));
  BOOST_TEST(!q.has_leader());  // nobody waits any more
}

BOOST_AUTO_TEST_CASE(poll_with_timeout_returns_null_when_nothing_is_due) {
  cpd::delayed_work_queue q;

  // Empty queue.
  time_point start = clock::now();
  BOOST_TEST(!bounded(q, [&] { return q.poll(30ms); }));
  BOOST_TEST(ticks(clock::now()) >= ticks(start + 30ms));

  // A head that is not due within the timeout stays queued.
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));
  start = clock::now();
  BOOST_TEST(!bounded(q, [&] { return q.poll(std::chrono::duration<double, std::milli>(30.0)); }));
  BOOST_TEST(ticks(clock::now()) >= ticks(start + 30ms));
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(!q.has_leader());  // the timed-out leader gave the role up

  const time_point limit = clock::now() + 30ms;
  auto r = bounded(q, [&] { return q.wait_for_task(limit); });
  BOOST_TEST(!r.task);
  BOOST_TEST(r.status == wait_status::timeout);
  BOOST_TEST(ticks(clock::now()) >= ticks(limit));

  // Zero and negative timeouts do not wait; NaN is rejected.
  BOOST_TEST(!bounded(q, [&] { return q.poll(0ms); }));
  BOOST_TEST(!bounded(q, [&] { return q.poll(-1h); }));
  BOOST_TEST(!bounded(q, [&] { return q.poll(std::chrono::milliseconds::min()); }));
  bool threw = false;
  bounded(q, [&] {
    try {
      (void)q.poll(std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN()));
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    return 0;
  });
  BOOST_TEST(threw);
  BOOST_TEST(q.size() == 1u);

  // A due head is returned even with a zero timeout.
  cpd::task_ptr due = make_noop(clock::now() - 1ms, 1);
  BOOST_TEST_REQUIRE(q.offer(due));
  BOOST_TEST(bounded(q, [&] { return q.poll(0ms); }).get() == due.get());
}

// A huge timeout saturates to "wait forever" instead of wrapping into the
// past (which would make poll() return at once).
BOOST_AUTO_TEST_CASE(poll_with_huge_timeout_waits_for_the_task) {
  cpd::delayed_work_queue q;
  const time_point deadline = clock::now() + 30ms;
  cpd::task_ptr t = make_noop(deadline, 0);
  BOOST_TEST_REQUIRE(q.offer(t));
  cpd::task_ptr got1, got2;
  cpd::task_ptr t2 = make_noop(deadline + 10ms, 1);
  BOOST_TEST_REQUIRE(q.offer(t2));
  {
    thread_group g(q);
    g.spawn([&] {
      got1 = q.poll(std::chrono::hours::max());
      got2 = q.poll(std::chrono::duration<double>(std::numeric_limits<double>::infinity()));
    });
    g.join();
  }
  BOOST_TEST(got1.get() == t.get());
  BOOST_TEST(got2.get() == t2.get());
  BOOST_TEST(ticks(clock::now()) >= ticks(deadline + 10ms));
}

// A poll(timeout) caller that leads the wait and times out must hand the
// leader role to a taker that followed it; otherwise that taker sleeps
// untimed past the head's deadline.
BOOST_AUTO_TEST_CASE(timed_out_leader_hands_over_to_follower) {
  cpd::delayed_work_queue q;
  const time_point head_deadline = clock::now() + 400ms;
  cpd::task_ptr head = make_noop(head_deadline, 0);
  BOOST_TEST_REQUIRE(q.offer(head));

  std::vector<taken> leader(1), follower(1);
  thread_group g(q);
  spawn_takers(g, q, leader, clock::now() + 150ms);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  spawn_takers(g, q, follower);
  BOOST_TEST_REQUIRE(g.wait_finished(2));
  BOOST_TEST(!leader[0].task);
  BOOST_TEST(leader[0].status == wait_status::timeout);
  BOOST_TEST(follower[0].task.get() == head.get());
  BOOST_TEST(ticks(follower[0].at) >= ticks(head_deadline));
}

BOOST_AUTO_TEST_CASE(four_takers_share_due_tasks_without_loss_or_duplicates) {
  cpd::delayed_work_queue q;
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));
  std::uint64_t seq = 1;

  {
    std::vector<taken> slots(4);
    thread_group g(q);
    spawn_takers(g, q, slots);
    BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));

    // One due task: exactly one taker gets it; the others keep waiting.
    cpd::task_ptr first = make_noop(clock::now(), seq++);
    BOOST_TEST_REQUIRE(q.offer(first));
    BOOST_TEST_REQUIRE(g.wait_finished(1));
    std::this_thread::sleep_for(100ms);  // room for a wrong second return to show up
    BOOST_TEST_REQUIRE(count_done(slots) == 1u);
    for (const auto& s : slots) {
      if (!s.done.load()) continue;
      BOOST_TEST(s.task.get() == first.get());
      BOOST_TEST(s.status == wait_status::task);
    }
    BOOST_TEST(q.size() == 1u);
    // Someone took over the timed wait for the far head, or the taker of
    // the first kept the role (its backup covers the far head).
    BOOST_TEST(eventually([&] { return q.has_leader() || q.leader_kept_role(); }));

    // The three still waiting get the next three, one each.
    std::set<const cpd::task_base*> offered{first.get()};
    for (int i = 0; i < 3; ++i) {
      cpd::task_ptr t = make_noop(clock::now(), seq++);
      offered.insert(t.get());
      BOOST_TEST_REQUIRE(q.offer(std::move(t)));
    }
    BOOST_TEST_REQUIRE(g.wait_finished(4));
    std::set<const cpd::task_base*> got;
    for (const auto& s : slots) {
      BOOST_TEST(s.status == wait_status::task);
      got.insert(s.task.get());
    }
    BOOST_TEST((got == offered));
    BOOST_TEST(q.size() == 1u);
  }

  // Bursts: four due tasks offered back to back while four takers wait. Only
  // the first is a new head; the rest reach takers through the hand-off.
  for (int round = 0; round < 20; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      std::vector<taken> slots(4);
      thread_group g(q);
      spawn_takers(g, q, slots);
      BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
      std::set<const cpd::task_base*> offered;
      const time_point due = clock::now();
      for (int i = 0; i < 4; ++i) {
        cpd::task_ptr t = make_noop(due, seq++);
        offered.insert(t.get());
        BOOST_TEST_REQUIRE(q.offer(std::move(t)));
      }
      BOOST_TEST_REQUIRE(g.wait_finished(4));
      std::set<const cpd::task_base*> got;
      for (const auto& s : slots) got.insert(s.task.get());
      BOOST_TEST((got == offered));
      BOOST_TEST(q.size() == 1u);
      BOOST_TEST(q.check_invariants());
    }
  }
}

BOOST_AUTO_TEST_CASE(closing_releases_all_blocked_takers) {
  cpd::delayed_work_queue q;
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));

  std::vector<taken> untimed(3), timed(1);
  thread_group g(q);
  spawn_takers(g, q, untimed);
  spawn_takers(g, q, timed, clock::now() + 1h);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  q.set_mode(mode::closed);
  BOOST_TEST(q.current_mode() == mode::closed);
  BOOST_TEST_REQUIRE(g.wait_finished(4));
  for (const auto* v : {&untimed, &timed})
    for (const auto& s : *v) {
      BOOST_TEST(!s.task);
      BOOST_TEST(s.status == wait_status::closed);
    }

  // Closed: takers return at once even when a task is due; nothing is lost.
  cpd::task_ptr due = make_noop(clock::now() - 1ms, 1);
  BOOST_TEST_REQUIRE(q.offer(due));
  BOOST_TEST(!bounded(q, [&] { return q.take(); }));
  BOOST_TEST(bounded(q, [&] { return q.wait_for_task(time_point::max()); }).status == wait_status::closed);
  BOOST_TEST(q.size() == 2u);
}

BOOST_AUTO_TEST_CASE(modes_only_advance) {
  cpd::delayed_work_queue q;
  BOOST_TEST(q.current_mode() == mode::open);
  q.set_mode(mode::open);
  BOOST_TEST(q.current_mode() == mode::open);
  q.set_mode(mode::draining);
  BOOST_TEST(q.current_mode() == mode::draining);
  q.set_mode(mode::open);  // ignored
  BOOST_TEST(q.current_mode() == mode::draining);
  q.set_mode(mode::closed);
  BOOST_TEST(q.current_mode() == mode::closed);
  q.set_mode(mode::draining);  // ignored
  q.set_mode(mode::open);      // ignored
  BOOST_TEST(q.current_mode() == mode::closed);
  BOOST_TEST(bounded(q, [&] { return q.wait_for_task(time_point::max()); }).status == wait_status::closed);
}

BOOST_AUTO_TEST_CASE(draining_hands_out_remaining_tasks_then_releases_takers) {
  // Takers blocked on an empty open queue return once it drains.
  {
    cpd::delayed_work_queue q;
    std::vector<taken> slots(3);
    thread_group g(q);
    spawn_takers(g, q, slots);
    std::this_thread::sleep_for(20ms);
    BOOST_TEST(count_done(slots) == 0u);
    q.set_mode(mode::draining);
    BOOST_TEST_REQUIRE(g.wait_finished(3));
    for (const auto& s : slots) {
      BOOST_TEST(!s.task);
      BOOST_TEST(s.status == wait_status::closed);
    }
  }

  // Due tasks, and one that becomes due shortly, are still handed out, each
  // exactly once; then every taker gets null.
  cpd::delayed_work_queue q;
  std::set<const cpd::task_base*> offered;
  for (std::uint64_t i = 0; i < 3; ++i) {
    cpd::task_ptr t = make_noop(clock::now() - 1ms, i);
    offered.insert(t.get());
    BOOST_TEST_REQUIRE(q.offer(std::move(t)));
  }
  const time_point later = clock::now() + 50ms;
  cpd::task_ptr soon = make_noop(later, 3);
  offered.insert(soon.get());
  BOOST_TEST_REQUIRE(q.offer(soon));
  q.set_mode(mode::draining);

  std::mutex m;
  std::vector<const cpd::task_base*> got;
  std::vector<time_point> got_soon_at;
  std::atomic<int> nulls{0};
  {
    thread_group g(q);
    for (int i = 0; i < 3; ++i) {
      g.spawn([&] {
        while (cpd::task_ptr t = q.take()) {
          std::lock_guard lock(m);
          got.push_back(t.get());
          if (t == soon) got_soon_at.push_back(clock::now());
        }
        nulls.fetch_add(1);
      });
    }
    g.join();
  }
  BOOST_TEST(nulls.load() == 3);
  BOOST_TEST(got.size() == 4u);
  BOOST_TEST((std::set<const cpd::task_base*>(got.begin(), got.end()) == offered));
  BOOST_TEST_REQUIRE(got_soon_at.size() == 1u);
  BOOST_TEST(ticks(got_soon_at[0]) >= ticks(later));
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(removing_the_last_task_while_draining_releases_takers) {
  for (const bool by_pop_head : {false, true}) {
    BOOST_TEST_CONTEXT((by_pop_head ? "pop_head" : "remove")) {
      cpd::delayed_work_queue q;
      cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
      BOOST_TEST_REQUIRE(q.offer(far));
      std::vector<taken> slots(3);
      thread_group g(q);
      spawn_takers(g, q, slots);
      BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));

      // Draining but not empty: they keep waiting for the far task.
      q.set_mode(mode::draining);
      std::this_thread::sleep_for(50ms);
      BOOST_TEST(count_done(slots) == 0u);

      if (by_pop_head) {
        BOOST_TEST(q.pop_head().get() == far.get());
      } else {
        BOOST_TEST(q.remove(*far));
      }
      BOOST_TEST_REQUIRE(g.wait_finished(3));
      for (const auto& s : slots) {
        BOOST_TEST(!s.task);
        BOOST_TEST(s.status == wait_status::closed);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(interrupt_releases_current_waiters_only) {
  cpd::delayed_work_queue q;
  cpd::task_ptr far = make_noop(clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(far));

  // One waiter known to be asleep (it holds the leader role).
  {
    std::vector<taken> slots(1);
    thread_group g(q);
    spawn_takers(g, q, slots);
    BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
    q.interrupt_waiters();
    BOOST_TEST_REQUIRE(g.wait_finished(1));
    BOOST_TEST(!slots[0].task);
    BOOST_TEST(slots[0].status == wait_status::interrupted);
    BOOST_TEST(!q.has_leader());
  }

  // Several waiters, untimed and timed, on a non-empty and an empty queue.
  // Which of them are already asleep cannot be observed, so interrupt until
  // all returned: each must come back `interrupted`, never with anything else.
  for (const bool empty_queue : {false, true}) {
    BOOST_TEST_CONTEXT((empty_queue ? "empty queue" : "far head")) {
      if (empty_queue) BOOST_TEST_REQUIRE(q.remove(*far));
      std::vector<taken> untimed(3), timed(2);
      thread_group g(q);
      spawn_takers(g, q, untimed);
      spawn_takers(g, q, timed, clock::now() + 1h);
      const time_point limit = clock::now() + hang_limit;
      while (g.finished() < 5 && clock::now() < limit) {
        q.interrupt_waiters();
        std::this_thread::sleep_for(5ms);
      }
      BOOST_TEST_REQUIRE(g.wait_finished(5));
      for (const auto* v : {&untimed, &timed})
        for (const auto& s : *v) {
          BOOST_TEST(!s.task);
          BOOST_TEST(s.status == wait_status::interrupted);
        }
    }
  }

  // Waits that start after the interrupt are not affected by it.
  BOOST_TEST(q.current_mode() == mode::open);
  const time_point limit = clock::now() + 30ms;
  auto r = bounded(q, [&] { return q.wait_for_task(limit); });
  BOOST_TEST(r.status == wait_status::timeout);
  BOOST_TEST(ticks(clock::now()) >= ticks(limit));

  const time_point deadline = clock::now() + 20ms;
  cpd::task_ptr t = make_noop(deadline, 1);
  BOOST_TEST_REQUIRE(q.offer(t));
  cpd::task_ptr got;
  {
    thread_group g(q);
    g.spawn([&] { got = q.take(); });
    g.join();
  }
  BOOST_TEST(got.get() == t.get());
  BOOST_TEST(ticks(clock::now()) >= ticks(deadline));
}

BOOST_AUTO_TEST_SUITE_END()

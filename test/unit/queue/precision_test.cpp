// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Precision mode of delayed_work_queue: the leader spins (without the lock)
// for the last stretch before the head's deadline. What it must keep: never
// hand a task out early, keep (deadline, sequence) order, and let everything
// that would wake a sleeping leader (an earlier head, a due task, a posted
// function, close, interrupt) end the spin.
//
// A spin limit far longer than any deadline here makes the leader spin at
// once (the window starts at the limit), so the tests can observe the spin
// with is_spinning() instead of guessing its timing. Outside precision mode
// the leader spins only for a head nearer than a kernel timer costs to arm.
#include "queue_test_support.hpp"

#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/pool/queued_function.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace {

using namespace queue_test;
using mode = cpd::delayed_work_queue::mode;
using wait_status = cpd::delayed_work_queue::wait_status;

constexpr auto always_spin = std::chrono::seconds(3600);

/// Runs one wait_for_task() on a thread of its own.
std::future<cpd::delayed_work_queue::wait_result> take_async(cpd::delayed_work_queue& q) {
  return std::async(std::launch::async, [&q] { return q.wait_for_task(time_point::max()); });
}

/// Waits for @p f, bounded; on a hang releases the taker and fails.
cpd::delayed_work_queue::wait_result get_bounded(cpd::delayed_work_queue& q,
                                                 std::future<cpd::delayed_work_queue::wait_result>& f) {
  if (f.wait_for(hang_limit) != std::future_status::ready) {
    BOOST_ERROR("taker still blocked after the hang limit");
    q.interrupt_waiters();
    q.set_mode(mode::closed);
  }
  return f.get();
}

/// Puts @p q in precision mode with a task due in an hour, then starts a
/// taker and waits until it spins as leader for that far head.
std::future<cpd::delayed_work_queue::wait_result> spinning_taker(cpd::delayed_work_queue& q) {
  q.set_precision_spin_limit(always_spin);
  if (q.empty()) BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 0)));
  auto f = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.is_spinning(); }));
  return f;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(precision)

BOOST_AUTO_TEST_CASE(tasks_come_in_order_and_never_early) {
  cpd::delayed_work_queue q;
  q.set_precision_spin_limit(std::chrono::milliseconds(2));
  const time_point base = clock::now() + 5ms;
  constexpr int n = 40;
  std::vector<cpd::task_ptr> tasks;
  // Offered in reverse, some sharing a deadline: order is (deadline, sequence).
  for (int i = n - 1; i >= 0; --i) {
    tasks.push_back(make_noop(base + std::chrono::microseconds(250 * (i / 2)), static_cast<std::uint64_t>(i)));
    BOOST_TEST_REQUIRE(q.offer(tasks.back()));
  }
  std::vector<cpd::task_ptr> got;
  std::vector<time_point> at;
  auto f = std::async(std::launch::async, [&] {
    for (int i = 0; i < n; ++i) {
      got.push_back(q.take());
      at.push_back(clock::now());
    }
  });
  BOOST_TEST_REQUIRE((f.wait_for(hang_limit) == std::future_status::ready));
  BOOST_TEST_REQUIRE(got.size() == static_cast<std::size_t>(n));
  int early = 0, out_of_order = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (at[i] < got[i]->deadline()) ++early;
    if (got[i]->sequence() != i) ++out_of_order;
  }
  BOOST_TEST(early == 0);
  BOOST_TEST(out_of_order == 0);
}

BOOST_AUTO_TEST_CASE(an_earlier_head_ends_the_spin) {
  cpd::delayed_work_queue q;
  auto f = spinning_taker(q);

  const time_point near_deadline = clock::now() + 10ms;
  cpd::task_ptr near_task = make_noop(near_deadline, 1);
  BOOST_TEST_REQUIRE(q.offer(near_task));
  auto r = get_bounded(q, f);
  const time_point at = clock::now();
  BOOST_TEST(r.task.get() == near_task.get());
  BOOST_TEST(ticks(at) >= ticks(near_deadline));
  BOOST_TEST(q.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_due_task_and_a_function_end_the_spin) {
  cpd::delayed_work_queue q;
  auto f = spinning_taker(q);
  cpd::task_ptr now_task = make_noop(clock::now(), 1);
  BOOST_TEST_REQUIRE(q.offer_now(now_task));
  BOOST_TEST(get_bounded(q, f).task.get() == now_task.get());

  f = spinning_taker(q);
  std::atomic<int> ran{0};
  auto* fn = cpd::make_queued_function([&ran] { ran.fetch_add(1); }, std::allocator<void>());
  BOOST_TEST_REQUIRE(q.offer_function(fn));
  auto r = get_bounded(q, f);
  BOOST_TEST_REQUIRE((r.status == wait_status::function));
  r.function->run();
  BOOST_TEST(ran.load() == 1);
  BOOST_TEST(q.size() == 1u);
}

BOOST_AUTO_TEST_CASE(close_and_interrupt_end_the_spin) {
  cpd::delayed_work_queue q;
  auto f = spinning_taker(q);
  q.interrupt_waiters();
  BOOST_TEST((get_bounded(q, f).status == wait_status::interrupted));

  f = spinning_taker(q);
  q.set_mode(mode::closed);
  BOOST_TEST((get_bounded(q, f).status == wait_status::closed));
  BOOST_TEST(q.size() == 1u);  // nothing was lost
}

BOOST_AUTO_TEST_CASE(a_head_nearer_than_a_kernel_timer_costs_is_spun_for_without_precision_mode) {
  // Not in precision mode: the leader spins only because the head is nearer
  // than the near-spin threshold (made an hour here, so the test sees it).
  cpd::delayed_work_queue q;
  q.set_near_spin(1h + 1min);
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 0)));
  auto f = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.is_spinning(); }));
  // Whatever would have woken a sleeper ends the spin: here a due task.
  cpd::task_ptr now_task = make_noop(clock::now(), 1);
  BOOST_TEST_REQUIRE(q.offer_now(now_task));
  BOOST_TEST(get_bounded(q, f).task.get() == now_task.get());

  // A near head is taken at its deadline, not before.
  q.set_near_spin(1s);
  const time_point deadline = clock::now() + 20ms;
  cpd::task_ptr near_task = make_noop(deadline, 2);
  BOOST_TEST_REQUIRE(q.offer(near_task));
  f = take_async(q);
  auto r = get_bounded(q, f);
  BOOST_TEST(r.task.get() == near_task.get());
  BOOST_TEST(ticks(clock::now()) >= ticks(deadline));
  BOOST_TEST(q.size() == 1u);  // the far one is still there
}

BOOST_AUTO_TEST_CASE(the_leader_spins_for_a_head_within_the_near_spin_and_the_wake_up_latency) {
  cpd::delayed_work_queue q;
  q.set_near_spin(std::chrono::microseconds(10));
  BOOST_TEST((q.wakeup_latency() == cpd::duration::zero()));
  BOOST_TEST(q.spins_for(std::chrono::microseconds(10)));
  BOOST_TEST(!q.spins_for(std::chrono::microseconds(10) + cpd::duration(1)));
  q.observe_wakeup(std::chrono::microseconds(30));
  BOOST_TEST(q.spins_for(std::chrono::microseconds(40)));
  BOOST_TEST(!q.spins_for(std::chrono::microseconds(40) + cpd::duration(1)));

  // A leader's timed sleep that times out is observed: a head 50 ms ahead,
  // nothing to spin for (no near spin, no latency seen yet), one taker. Far
  // enough ahead that the taker sleeps before it even on a loaded machine.
  cpd::delayed_work_queue sleeper;
  sleeper.set_near_spin(cpd::duration::zero());
  cpd::task_ptr t = make_noop(clock::now() + std::chrono::milliseconds(50), 0);
  BOOST_TEST_REQUIRE(sleeper.offer(t));
  auto f = take_async(sleeper);
  BOOST_TEST(get_bounded(sleeper, f).task.get() == t.get());
  BOOST_TEST((sleeper.wakeup_latency() > cpd::duration::zero()));
}

BOOST_AUTO_TEST_CASE(the_near_spin_threshold_is_measured_and_bounded) {
  const auto cost = cpd::near_kernel_timer_cost();
  BOOST_TEST(cost.count() >= 0);
  BOOST_TEST((cost <= std::chrono::microseconds(50)));
  BOOST_TEST((cpd::near_kernel_timer_cost() == cost));  // measured once
}

BOOST_AUTO_TEST_CASE(a_follower_spins_one_window_then_sleeps) {
  // The window starts at the limit: the leader sleeps (timed) for the far
  // head, the follower spins 300 ms, then sleeps untimed. The window is long
  // so that this thread sees the follower spinning even when a loaded machine
  // deschedules it for a while.
  cpd::delayed_work_queue q;
  q.set_precision_spin_limit(300ms);
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 0)));
  auto leader = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  auto follower = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.spinning_followers() == 1u; }));
  BOOST_TEST(!q.is_spinning());  // the leader is asleep, a window before its head
  BOOST_TEST(eventually([&] { return q.spinning_followers() == 0u; }));  // spun out: asleep now
  // Asleep or not, a due task still reaches a taker.
  cpd::task_ptr now_task = make_noop(clock::now(), 1);
  BOOST_TEST_REQUIRE(q.offer_now(now_task));
  BOOST_TEST(eventually([&] { return q.size() == 1u; }));
  q.set_mode(mode::closed);
  auto a = get_bounded(q, leader);
  auto b = get_bounded(q, follower);
  BOOST_TEST(((a.task.get() == now_task.get()) != (b.task.get() == now_task.get())));
}

BOOST_AUTO_TEST_CASE(the_leader_role_passes_to_a_spinning_follower) {
  // Both takers spin (an hour's window): the leader for a head 100 ms away,
  // the follower before sleeping. When that head falls due, the leader takes
  // it without any signal, and the role must reach the follower, which no
  // notification of a sleeper would: it then leads, spinning, for the head
  // an hour away.
  cpd::delayed_work_queue q;
  cpd::task_ptr near_task = make_noop(clock::now() + 100ms, 0);
  BOOST_TEST_REQUIRE(q.offer(near_task));
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 1)));
  auto leader = spinning_taker(q);
  auto follower = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.spinning_followers() == 1u; }));
  // Usually the leader takes it; a leader held up past the deadline (a
  // loaded machine) leaves it to the spinning follower, which stands in
  // (see the next case). Either way the one left must lead on.
  const auto ready = [](auto& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
  BOOST_TEST_REQUIRE(eventually([&] { return ready(leader) || ready(follower); }));
  const bool leader_took_it = ready(leader);  // the other one waits on for the far head
  auto& taker = leader_took_it ? leader : follower;
  auto& left = leader_took_it ? follower : leader;
  BOOST_TEST(taker.get().task.get() == near_task.get());
  BOOST_TEST(eventually([&] { return q.has_leader() && q.is_spinning() && q.spinning_followers() == 0u; }));
  BOOST_TEST(q.size() == 1u);
  q.set_mode(mode::closed);
  BOOST_TEST((get_bounded(q, left).status == wait_status::closed));
}

#if !CHRONOPOOL_THREAD_SANITIZER
// TSan delivers a signal to a thread only at its next intercepted call,
// which a spinning leader may not make: the case needs the signal at once.

namespace {
std::atomic<bool> hold_thread{false};
std::atomic<bool> thread_held{false};

extern "C" void hold_this_thread(int) {
  thread_held.store(true);
  while (hold_thread.load()) {
    timespec step{0, 1'000'000};
    nanosleep(&step, nullptr);
  }
  thread_held.store(false);
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_spinning_follower_takes_the_head_of_a_leader_held_up) {
  // The leader spins for a head 50 ms away and the follower spins beside
  // it. A signal holds the leader's thread in its handler, as the kernel
  // preempting it would, past the deadline: the follower takes the head
  // while the leader is still held. (Without the stand-in the head waited
  // for the leader: the follower, spinning an hour's window, took nothing.)
  cpd::delayed_work_queue q;
  q.set_precision_spin_limit(always_spin);
  cpd::task_ptr near_task = make_noop(clock::now() + 50ms, 0);
  BOOST_TEST_REQUIRE(q.offer(near_task));
  std::promise<cpd::delayed_work_queue::wait_result> led;
  std::future<cpd::delayed_work_queue::wait_result> follower;
  std::thread leader([&] { led.set_value(q.wait_for_task(time_point::max())); });
  // On a failed requirement: release and close before the threads are joined.
  struct release_all {
    cpd::delayed_work_queue& q;
    std::thread& t;
    ~release_all() {
      hold_thread.store(false);
      q.set_mode(mode::closed);
      if (t.joinable()) t.join();
    }
  } guard{q, leader};
  BOOST_TEST_REQUIRE(eventually([&] { return q.is_spinning(); }));
  follower = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.spinning_followers() == 1u; }));

  struct sigaction hold{}, previous{};
  hold.sa_handler = hold_this_thread;
  sigemptyset(&hold.sa_mask);
  BOOST_TEST_REQUIRE(sigaction(SIGUSR2, &hold, &previous) == 0);
  hold_thread.store(true);
  BOOST_TEST_REQUIRE(pthread_kill(leader.native_handle(), SIGUSR2) == 0);
  BOOST_TEST(eventually([&] { return thread_held.load(); }));

  auto r = get_bounded(q, follower);
  BOOST_TEST(r.task.get() == near_task.get());
  BOOST_TEST(thread_held.load());  // taken while the leader was held
  hold_thread.store(false);
  BOOST_TEST(eventually([&] { return !thread_held.load(); }));

  // Back, the leader finds the queue empty and waits on, until closed.
  q.set_mode(mode::closed);
  leader.join();
  BOOST_TEST((led.get_future().get().status == wait_status::closed));
  sigaction(SIGUSR2, &previous, nullptr);
}
#endif

BOOST_AUTO_TEST_CASE(a_limit_of_duration_max_spins_without_overflow) {
  // The window starts at the limit: the leader's sleep and the follower's
  // spin both end at "now + window", which must saturate (UBSan checks).
  cpd::delayed_work_queue q;
  q.set_precision_spin_limit(std::chrono::nanoseconds::max());
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 0)));
  auto leader = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.is_spinning(); }));
  auto follower = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.spinning_followers() == 1u; }));
  q.set_mode(mode::closed);
  BOOST_TEST((get_bounded(q, leader).status == wait_status::closed));
  BOOST_TEST((get_bounded(q, follower).status == wait_status::closed));
}

BOOST_AUTO_TEST_CASE(off_by_default_and_when_zero) {
  cpd::delayed_work_queue q;
  BOOST_TEST_REQUIRE(q.offer(make_noop(clock::now() + 1h, 0)));
  auto f = take_async(q);
  BOOST_TEST_REQUIRE(eventually([&] { return q.has_leader(); }));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(!q.is_spinning());  // asleep, timed for the head
  q.set_mode(mode::closed);
  BOOST_TEST((get_bounded(q, f).status == wait_status::closed));
}

BOOST_AUTO_TEST_SUITE_END()

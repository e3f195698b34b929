// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// shutdown_now(), pending_task, and the destructor.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/pending_task.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using chronopool::pending_task;
using chronopool::rejected_execution;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;
using pool_test::steady;
using pool_test::long_wait;
using pool_test::ready_within;
using pool_test::state_name;

namespace {

struct probe {
  std::atomic<int> runs{0};
  std::atomic<std::thread::id> thread{};
};

/// A task that records where it ran and returns @p value.
auto probed(probe& p, int value) {
  return [&p, value] {
    p.runs.fetch_add(1);
    p.thread.store(std::this_thread::get_id());
    return value;
  };
}

/// Index of the future that @p t belongs to, or -1; fails on several matches.
template <class Futures>
int owner_index(const pending_task& t, const Futures& futures) {
  int found = -1;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    if (t.belongs_to(futures[i])) {
      BOOST_TEST(found == -1, "pending task belongs to two futures");
      found = static_cast<int>(i);
    }
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shutdown_now)

BOOST_AUTO_TEST_CASE(returns_exactly_the_never_started_tasks_in_deadline_order) {
  // Everything the tasks use is declared before the pool, so it outlives
  // the pool's threads even when a check aborts the test early.
  std::atomic<int> terminated_calls{0};
  pool_test::counter started;
  pool_test::counter saw_stop;
  pool_test::gate release;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.terminated = [&] { terminated_calls.fetch_add(1); };
  scheduled_thread_pool pool(o);

  auto running = pool.submit([&](std::stop_token st) {
    started.bump();
    const bool stopped = pool_test::eventually([&] { return st.stop_requested(); });
    if (stopped) saw_stop.bump();
    release.wait();  // keeps the pool in STOP until the test lets go
    return stopped ? 1 : 0;
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));

  // Index 0 is due now, 1..6 are delayed in shuffled order, 7 and 8 share
  // a deadline (so they must come out in submission order).
  constexpr std::size_t k = 9;
  std::array<probe, k> probes;
  std::vector<scheduled_future<int>> futures;
  futures.push_back(pool.submit(probed(probes[0], 100)));
  const int delays_s[] = {40, 10, 60, 20, 50, 30};
  for (std::size_t i = 0; i < 6; ++i) {
    futures.push_back(pool.schedule(std::chrono::seconds(delays_s[i]), probed(probes[i + 1], static_cast<int>(101 + i))));
  }
  const auto shared_deadline = steady::now() + 35s;
  futures.push_back(pool.schedule_at(shared_deadline, probed(probes[7], 107)));
  futures.push_back(pool.schedule_at(shared_deadline, probed(probes[8], 108)));
  BOOST_REQUIRE(futures.size() == k);
  BOOST_TEST(pool.queued_count() == k);

  std::vector<pending_task> pending = pool.shutdown_now();

  BOOST_TEST(state_name(pool) == "stop");
  BOOST_TEST(pool.is_shutdown());
  BOOST_TEST(pool.is_terminating());
  BOOST_TEST(!pool.is_terminated());
  BOOST_TEST(pool.queued_count() == 0u);
  BOOST_REQUIRE(pending.size() == k);

  const std::vector<int> expected_order = {0, 2, 4, 6, 7, 8, 1, 5, 3};
  std::vector<int> order;
  for (const auto& t : pending) {
    BOOST_TEST(t.valid());
    BOOST_TEST(!t.is_periodic());
    BOOST_TEST(!t.belongs_to(running));
    order.push_back(owner_index(t, futures));
  }
  BOOST_TEST(order == expected_order, boost::test_tools::per_element());
  for (std::size_t i = 1; i < pending.size(); ++i) BOOST_TEST((pending[i - 1].deadline() <= pending[i].deadline()));
  for (std::size_t i = 0; i < k; ++i) {
    BOOST_TEST(probes[i].runs.load() == 0);
    BOOST_TEST(!futures[i].done());  // held by its pending_task, not yet cancelled
  }

  // The running task is asked to stop; the pool stays in STOP while it runs.
  BOOST_REQUIRE(saw_stop.wait_for_at_least(1));
  BOOST_TEST(state_name(pool) == "stop");
  BOOST_TEST(!pool.wait_for_termination(0ms));
  BOOST_TEST(!pool.wait_for_termination(50ms));
  BOOST_CHECK_THROW(pool.submit([] { return 0; }), rejected_execution);
  BOOST_TEST(pool.shutdown_now().empty());

  release.open();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(state_name(pool) == "terminated");
  BOOST_TEST(terminated_calls.load() == 1);
  BOOST_REQUIRE(running.done());
  if (!running.cancelled()) BOOST_TEST(running.get() == 1);

  // Nothing ran on the pool after shutdown_now().
  for (std::size_t i = 0; i < k; ++i) BOOST_TEST(probes[i].runs.load() == 0);

  // Running one runs it here, once, and completes its future.
  BOOST_TEST(!pending[0].run());
  BOOST_TEST(probes[0].runs.load() == 1);
  BOOST_TEST((probes[0].thread.load() == std::this_thread::get_id()));
  BOOST_REQUIRE(futures[0].done());
  BOOST_TEST(futures[0].get() == 100);
  BOOST_TEST(!pending[0].run());  // already run: nothing happens
  BOOST_TEST(probes[0].runs.load() == 1);

  pending[3]();  // index 6 (30 s), through operator()
  BOOST_TEST(probes[6].runs.load() == 1);
  BOOST_REQUIRE(futures[6].done());
  BOOST_TEST(futures[6].get() == 106);

  // Dropping one cancels its future.
  {
    pending_task taken = std::move(pending[1]);  // index 2
    BOOST_TEST(!pending[1].valid());
    BOOST_TEST(taken.belongs_to(futures[2]));
    BOOST_TEST(!futures[2].done());
  }
  BOOST_TEST(futures[2].cancelled());
  BOOST_REQUIRE(futures[2].done());
  BOOST_CHECK_THROW(futures[2].get(), task_cancelled);

  // Running one whose future was cancelled meanwhile does nothing.
  BOOST_TEST(futures[4].cancel());
  BOOST_TEST(!pending[2].run());
  BOOST_TEST(probes[4].runs.load() == 0);
  BOOST_TEST(futures[4].cancelled());

  pending.clear();
  for (const std::size_t i : {1u, 2u, 3u, 4u, 5u, 7u, 8u}) {
    BOOST_TEST(futures[i].cancelled(), "future " << i);
    if (futures[i].done()) BOOST_CHECK_THROW(futures[i].get(), task_cancelled);
    BOOST_TEST(probes[i].runs.load() == 0);
  }
  BOOST_TEST(futures[0].get() == 100);
  BOOST_TEST(futures[6].get() == 106);
  BOOST_TEST(terminated_calls.load() == 1);
}

BOOST_AUTO_TEST_CASE(returns_the_due_tasks_set_out_for_the_threads) {
  // One thread, busy while 6 tasks come due: when it is free it takes the
  // first and, with nobody else waiting, sets out the other 5 (the due
  // segment). The first calls shutdown_now(): the 5 never started, so they
  // come back in order with the one delayed task, and none of them runs.
  std::vector<pending_task> pending;
  std::vector<int> order;
  pool_test::gate release;
  pool_test::counter started;
  constexpr std::size_t k = 6;
  std::array<probe, k> probes;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  scheduled_thread_pool pool(o);
  auto blocker = pool.submit([&] {
    started.bump();
    release.wait();
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));
  std::vector<scheduled_future<int>> futures;
  futures.push_back(pool.submit([&] {
    pending = pool.shutdown_now();
    return 0;
  }));
  for (std::size_t i = 1; i < k; ++i) futures.push_back(pool.submit(probed(probes[i], static_cast<int>(i))));
  auto delayed = pool.schedule(1h, probed(probes[0], -1));
  release.open();
  BOOST_TEST_REQUIRE(futures[0].get() == 0);
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST_REQUIRE(pending.size() == k);
  for (const auto& t : pending) order.push_back(owner_index(t, futures));
  BOOST_TEST(order == (std::vector<int>{1, 2, 3, 4, 5, -1}), boost::test_tools::per_element());
  BOOST_TEST(pending.back().belongs_to(delayed));
  for (std::size_t i = 1; i < k; ++i) BOOST_TEST(probes[i].runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(idle_pool_returns_nothing_and_terminates) {
  scheduled_thread_pool pool(2);
  BOOST_TEST(pool.shutdown_now().empty());
  BOOST_TEST(pool.is_shutdown());
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(state_name(pool) == "terminated");
  BOOST_TEST(pool.shutdown_now().empty());
}

BOOST_AUTO_TEST_CASE(after_shutdown_returns_the_remaining_delayed_tasks) {
  scheduled_thread_pool pool(1);
  probe a, b;
  auto fb = pool.schedule(2h, probed(b, 2));
  auto fa = pool.schedule(1h, probed(a, 1));
  pool.shutdown();
  BOOST_TEST(state_name(pool) == "shutdown");
  BOOST_TEST(!pool.wait_for_termination(20ms));
  auto pending = pool.shutdown_now();
  BOOST_TEST(pool.is_shutdown());
  BOOST_REQUIRE(pending.size() == 2u);
  BOOST_TEST(pending[0].belongs_to(fa));
  BOOST_TEST(pending[1].belongs_to(fb));
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(!pending[1].run());
  BOOST_REQUIRE(fb.done());
  BOOST_TEST(fb.get() == 2);
  pending.clear();
  BOOST_TEST(fa.cancelled());
  BOOST_TEST(a.runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(pending_periodic_task_runs_once_and_completes) {
  scheduled_thread_pool pool(1);
  std::atomic<int> rate_runs{0};
  std::atomic<int> delay_runs{0};
  auto rate = pool.schedule_at_fixed_rate(1h, 1ms, [&] { rate_runs.fetch_add(1); });
  auto delay = pool.schedule_with_fixed_delay(2h, 1ms, [&] { delay_runs.fetch_add(1); });
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_REQUIRE(pending.size() == 2u);
  BOOST_TEST(pending[0].belongs_to(rate));
  BOOST_TEST(pending[1].belongs_to(delay));
  BOOST_TEST(pending[0].is_periodic());
  BOOST_TEST(pending[1].is_periodic());
  for (auto& t : pending) {
    BOOST_TEST(!t.run());
    BOOST_TEST(!t.run());  // a second run does nothing
  }
  BOOST_TEST(rate_runs.load() == 1);
  BOOST_TEST(delay_runs.load() == 1);
  BOOST_REQUIRE(rate.done());
  BOOST_REQUIRE(delay.done());
  BOOST_TEST(!rate.cancelled());
  BOOST_TEST(!delay.cancelled());
  BOOST_CHECK_NO_THROW(rate.get());
  BOOST_CHECK_NO_THROW(delay.get());
  pending.clear();
  BOOST_TEST(!rate.cancelled());  // dropping a task already run changes nothing
}

BOOST_AUTO_TEST_CASE(pending_task_run_reports_the_exception) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(1h, []() -> int { throw std::runtime_error("boom"); });
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 1u);
  const std::exception_ptr err = pending[0].run();
  BOOST_REQUIRE(err);
  BOOST_CHECK_THROW(std::rethrow_exception(err), std::runtime_error);
  BOOST_REQUIRE(f.done());
  BOOST_TEST(!f.cancelled());
  BOOST_CHECK_THROW(f.get(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(pending_task_move_assignment_drops_the_target) {
  scheduled_thread_pool pool(1);
  probe a, b;
  auto fa = pool.schedule(1h, probed(a, 1));
  auto fb = pool.schedule(2h, probed(b, 2));
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 2u);
  pending[0] = std::move(pending[1]);
  BOOST_TEST(fa.cancelled());
  BOOST_TEST(!fb.done());
  BOOST_TEST(!pending[1].valid());
  BOOST_TEST(pending[0].belongs_to(fb));
  BOOST_TEST(!pending[1].belongs_to(fb));
  pending[0].run();
  BOOST_REQUIRE(fb.done());
  BOOST_TEST(fb.get() == 2);
  BOOST_TEST(a.runs.load() == 0);
  BOOST_TEST(b.runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(running_periodic_task_is_stopped_and_not_rearmed) {
  pool_test::counter started;
  pool_test::gate release;
  std::atomic<int> runs{0};
  std::atomic<bool> saw_stop{false};
  scheduled_thread_pool pool(1);
  auto periodic = pool.schedule_with_fixed_delay(0ms, 1ms, [&](std::stop_token st) {
    if (runs.fetch_add(1) == 0) {
      started.bump();
      saw_stop.store(pool_test::eventually([&] { return st.stop_requested(); }));
      release.wait();
    }
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));
  probe due;
  auto due_future = pool.submit(probed(due, 7));
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 1u);  // the due task; the periodic one is running
  BOOST_TEST(pending[0].belongs_to(due_future));
  BOOST_TEST(pool_test::eventually([&] { return saw_stop.load(); }));
  release.open();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(runs.load() == 1);
  BOOST_TEST(due.runs.load() == 0);
  BOOST_TEST(ready_within(periodic, 0ms), "a periodic task that can no longer be re-armed must be done");
  pending.clear();
  BOOST_TEST(due_future.cancelled());
}

BOOST_AUTO_TEST_CASE(destructor_returns_quickly_and_cancels_delayed_tasks) {
  std::atomic<int> terminated_calls{0};
  std::atomic<int> hour_runs{0};
  std::atomic<bool> saw_stop{false};
  scheduled_future<int> hour;
  scheduled_future<bool> running;
  steady::time_point destroying;
  pool_test::counter started;  // outlives the pool and its threads
  {
    scheduled_thread_pool_options o;
    o.core_pool_size = 2;
    o.terminated = [&] { terminated_calls.fetch_add(1); };
    scheduled_thread_pool pool(o);
    hour = pool.schedule(1h, [&] { return hour_runs.fetch_add(1); });
    running = pool.submit([&](std::stop_token st) {
      started.bump();
      const bool stopped = pool_test::eventually([&] { return st.stop_requested(); });
      saw_stop.store(stopped);
      return stopped;
    });
    BOOST_REQUIRE(started.wait_for_at_least(1));
    destroying = steady::now();
  }
  const auto took = steady::now() - destroying;
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(took).count() < 2000);
  BOOST_TEST(hour.cancelled());
  if (hour.done()) BOOST_CHECK_THROW(hour.get(), task_cancelled);
  BOOST_TEST(hour_runs.load() == 0);
  BOOST_TEST(saw_stop.load());
  BOOST_TEST(running.done());
  BOOST_TEST(terminated_calls.load() == 1);
}

BOOST_AUTO_TEST_CASE(destructor_after_join_and_after_shutdown_now) {
  std::atomic<int> terminated_calls{0};
  {
    scheduled_thread_pool_options o;
    o.terminated = [&] { terminated_calls.fetch_add(1); };
    scheduled_thread_pool pool(o);
    auto f = pool.submit([] { return 1; });
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(f.get() == 1);
    pool.join();
    BOOST_TEST(pool.shutdown_now().empty());
  }
  BOOST_TEST(terminated_calls.load() == 1);
}

BOOST_AUTO_TEST_SUITE_END()

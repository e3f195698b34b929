// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// shutdown(): the two shutdown policies, the run-state progression, and
// rejection of work submitted afterwards.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;
using chronopool::rejected_execution;
using chronopool::run_state;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;
using pool_test::steady;
using pool_test::long_wait;
using pool_test::ready_within;
using pool_test::state_name;

namespace bdata = boost::unit_test::data;

namespace {

/// Samples a pool's state on its own thread and records whether it ever
/// went backwards. Joined by stop() or the destructor.
class state_monitor {
 public:
  explicit state_monitor(const scheduled_thread_pool& pool)
      : thread_([this, &pool](std::stop_token st) {
          int last = static_cast<int>(run_state::running);
          while (!st.stop_requested()) {
            const int now = static_cast<int>(pool.state());
            if (now < last) regressed_ = true;
            if (now > last) last = now;
            std::this_thread::sleep_for(100us);
          }
        }) {}
  void stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  bool regressed() const { return regressed_; }

 private:
  std::atomic<bool> regressed_{false};
  std::jthread thread_;
};

/// Counts calls of the terminated hook and the state seen inside it.
struct termination_probe {
  std::atomic<int> calls{0};
  std::atomic<int> state_in_hook{-1};
  std::atomic<scheduled_thread_pool*> pool{nullptr};

  void install(scheduled_thread_pool_options& o) {
    o.terminated = [this] {
      calls.fetch_add(1);
      if (scheduled_thread_pool* p = pool.load()) state_in_hook.store(static_cast<int>(p->state()));
    };
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(shutdown_policy)

// One periodic task, one delayed one-shot and two due one-shots are queued
// behind a running task when shutdown() is called. The pool runs on a
// manual clock: the delayed task cannot fall due before the test says so,
// and runs at exactly its deadline (join_runs_due_and_delayed_work_then_
// terminates and the never-task cases below keep the real clock covered).
BOOST_DATA_TEST_CASE(policies_decide_what_queued_work_does,
                     bdata::make({false, true}) * bdata::make({false, true}) * bdata::make({false, true}),
                     continue_periodic, execute_delayed, via_setters) {
  BOOST_TEST_MESSAGE("continue_periodic=" << continue_periodic << " execute_delayed=" << execute_delayed
                                          << " via_setters=" << via_setters);
  // Everything the tasks use is declared before the pool, so it outlives
  // the pool's threads even when a check aborts the test early.
  termination_probe term;
  pool_test::gate release;
  pool_test::counter started;
  std::atomic<int> periodic_runs{0};
  std::atomic<steady::rep> delayed_ran_at{0};
  std::atomic<int> late_runs{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.use_manual_clock = true;
  if (!via_setters) {
    o.continue_existing_periodic_tasks_after_shutdown = continue_periodic;
    o.execute_existing_delayed_tasks_after_shutdown = execute_delayed;
  }
  term.install(o);
  scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  term.pool = &pool;
  if (via_setters) {
    // Flip each setting away from its value and back, so a setter that does
    // nothing cannot pass.
    pool.set_continue_existing_periodic_tasks_after_shutdown(!continue_periodic);
    pool.set_execute_existing_delayed_tasks_after_shutdown(!execute_delayed);
    BOOST_TEST(pool.continue_existing_periodic_tasks_after_shutdown() == !continue_periodic);
    BOOST_TEST(pool.execute_existing_delayed_tasks_after_shutdown() == !execute_delayed);
    pool.set_continue_existing_periodic_tasks_after_shutdown(continue_periodic);
    pool.set_execute_existing_delayed_tasks_after_shutdown(execute_delayed);
  }
  BOOST_TEST(pool.continue_existing_periodic_tasks_after_shutdown() == continue_periodic);
  BOOST_TEST(pool.execute_existing_delayed_tasks_after_shutdown() == execute_delayed);

  BOOST_TEST(state_name(pool) == "running");
  BOOST_TEST(!pool.is_shutdown());
  BOOST_TEST(!pool.is_terminating());
  BOOST_TEST(!pool.is_terminated());
  state_monitor monitor(pool);

  // Occupy the only thread so everything below stays queued.
  auto blocker = pool.submit([&] {
    started.bump();
    return release.wait();
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));

  auto periodic = pool.schedule_at_fixed_rate(0ms, 2ms, [&] { periodic_runs.fetch_add(1); });
  const auto delayed_deadline = clock.now() + 300ms;
  auto delayed = pool.schedule_at(delayed_deadline, [&] {
    delayed_ran_at.store(pool.now().time_since_epoch().count());
    return 2;
  });
  auto due_now = pool.submit([] { return 3; });
  auto due_soon = pool.schedule(1ms, [] { return 4; });
  clock.stall(20ms);  // due_soon is overdue when shutdown() comes; the delayed task is 280 ms away

  pool.shutdown();
  BOOST_TEST(pool.is_shutdown());
  BOOST_TEST(pool.is_terminating());
  BOOST_TEST(!pool.is_terminated());
  BOOST_TEST(state_name(pool) == "shutdown");
  BOOST_TEST(!pool.wait_for_termination(0ms));

  // shutdown() applies the policies to the queue itself.
  BOOST_TEST(periodic.cancelled() == !continue_periodic);
  BOOST_TEST(delayed.cancelled() == !execute_delayed);
  BOOST_TEST(!due_now.done());
  BOOST_TEST(!due_soon.done());
  BOOST_TEST(!blocker.done());

  // New work is rejected (abort policy) and never runs.
  BOOST_CHECK_THROW(pool.submit([&] { late_runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.execute([&] { late_runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule(1ms, [&] { late_runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [&] { late_runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 1ms, [&] { late_runs.fetch_add(1); }), rejected_execution);

  pool.shutdown();  // idempotent
  BOOST_TEST(state_name(pool) == "shutdown");

  release.open();
  BOOST_REQUIRE(ready_within(blocker));
  BOOST_TEST(blocker.get());
  // Due work runs under either policy.
  BOOST_REQUIRE(ready_within(due_now));
  BOOST_TEST(due_now.get() == 3);
  BOOST_REQUIRE(ready_within(due_soon));
  BOOST_TEST(due_soon.get() == 4);

  if (execute_delayed) {
    // The queued delayed task keeps the pool alive until its deadline.
    clock.advance(280ms - 1ns);
    BOOST_TEST(!pool.is_terminated());
    BOOST_TEST(!delayed.done());
    clock.advance(1ns);
    BOOST_REQUIRE(ready_within(delayed));
    BOOST_TEST(delayed.get() == 2);
    BOOST_TEST(delayed_ran_at.load() == delayed_deadline.time_since_epoch().count(), "ran off its deadline");
  } else {
    BOOST_REQUIRE(ready_within(delayed));
    BOOST_CHECK_THROW(delayed.get(), task_cancelled);
  }

  if (continue_periodic) {
    // Periodic work goes on after shutdown(), so the pool cannot terminate.
    const int runs_then = periodic_runs.load();
    clock.advance(6ms);  // three more instants of the 2 ms grid
    BOOST_TEST(periodic_runs.load() >= runs_then + 3);
    BOOST_TEST(!pool.wait_for_termination(20ms));
    BOOST_TEST(!periodic.done());
    BOOST_TEST(state_name(pool) == "shutdown");
    BOOST_TEST(pool.is_terminating());

    auto pending = pool.shutdown_now();
    BOOST_TEST(pending.size() <= 1u);  // the periodic task, unless it was running
    for (const auto& p : pending) BOOST_TEST(p.belongs_to(periodic));
    pending.clear();  // dropping cancels
    BOOST_REQUIRE(pool.wait_for_termination(long_wait));
    BOOST_TEST(periodic.cancelled());
  } else {
    BOOST_REQUIRE(pool.wait_for_termination(long_wait));
    BOOST_TEST(periodic_runs.load() == 0);
    BOOST_REQUIRE(periodic.done());
    BOOST_CHECK_THROW(periodic.get(), task_cancelled);
  }
  const int periodic_final = periodic_runs.load();

  BOOST_TEST(pool.is_terminated());
  BOOST_TEST(pool.is_shutdown());
  BOOST_TEST(!pool.is_terminating());
  BOOST_TEST(state_name(pool) == "terminated");
  BOOST_TEST(term.calls.load() == 1);
  BOOST_TEST(state_name(static_cast<run_state>(term.state_in_hook.load())) == "tidying");
  BOOST_TEST(pool.pool_size() == 0u);
  BOOST_TEST(pool.queued_count() == 0u);
  BOOST_TEST(pool.active_count() == 0u);

  // Everything after termination is a no-op.
  BOOST_TEST(pool.shutdown_now().empty());
  pool.shutdown();
  pool.join();
  BOOST_TEST(pool.wait_for_termination(0ms));
  std::this_thread::sleep_for(10ms);
  BOOST_TEST(periodic_runs.load() == periodic_final);
  BOOST_TEST(late_runs.load() == 0);
  BOOST_TEST(term.calls.load() == 1);

  monitor.stop();
  BOOST_TEST(!monitor.regressed());
}

BOOST_AUTO_TEST_CASE(idle_pool_terminates_on_shutdown) {
  termination_probe term;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  term.install(o);
  scheduled_thread_pool pool(o);
  term.pool = &pool;
  BOOST_TEST(pool.pool_size() == 0u);
  pool.shutdown();
  BOOST_TEST(pool.is_shutdown());
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(state_name(pool) == "terminated");
  BOOST_TEST(term.calls.load() == 1);
  BOOST_TEST(state_name(static_cast<run_state>(term.state_in_hook.load())) == "tidying");
}

BOOST_AUTO_TEST_CASE(idle_pool_with_threads_terminates_on_shutdown) {
  termination_probe term;
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  term.install(o);
  scheduled_thread_pool pool(o);
  term.pool = &pool;
  BOOST_TEST(pool.prestart_core_threads() == 3u);
  pool.shutdown();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(pool.pool_size() == 0u);
  BOOST_TEST(term.calls.load() == 1);
}

BOOST_AUTO_TEST_CASE(never_task_keeps_pool_alive_when_delayed_tasks_execute) {
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto never = pool.schedule(std::chrono::hours::max(), [&] { runs.fetch_add(1); });
  BOOST_TEST(never.delay().count() == steady::duration::max().count());
  pool.shutdown();
  BOOST_TEST(!never.done());
  BOOST_TEST(!pool.wait_for_termination(100ms));
  BOOST_TEST(pool.queued_count() == 1u);
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 1u);
  BOOST_TEST(pending[0].belongs_to(never));
  pending.clear();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(never.cancelled());
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(never_task_is_cancelled_when_delayed_tasks_do_not_execute) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.execute_existing_delayed_tasks_after_shutdown = false;
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(o);
  auto never = pool.schedule(std::chrono::hours::max(), [&] { runs.fetch_add(1); });
  auto hour = pool.schedule(1h, [&] { runs.fetch_add(1); });
  pool.shutdown();
  BOOST_TEST(never.cancelled());
  BOOST_TEST(hour.cancelled());
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(join_runs_due_and_delayed_work_then_terminates) {
  termination_probe term;
  std::atomic<int> runs{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  term.install(o);
  scheduled_thread_pool pool(o);
  term.pool = &pool;
  std::vector<chronopool::scheduled_future<int>> futures;
  for (int i = 0; i < 20; ++i) {
    futures.push_back(pool.schedule(std::chrono::milliseconds(i % 5 * 10), [&runs, i] {
      runs.fetch_add(1);
      return i;
    }));
  }
  pool.join();
  BOOST_TEST(pool.is_terminated());
  BOOST_TEST(runs.load() == 20);
  for (int i = 0; i < 20; ++i) {
    BOOST_REQUIRE(futures[static_cast<std::size_t>(i)].done());
    BOOST_TEST(futures[static_cast<std::size_t>(i)].get() == i);
  }
  BOOST_TEST(term.calls.load() == 1);
  BOOST_CHECK_THROW(pool.submit([] { return 0; }), rejected_execution);
}

BOOST_AUTO_TEST_CASE(submissions_racing_shutdown_either_run_or_are_rejected) {
  // Two threads submit while a third calls shutdown(): every submission that
  // did not throw must run exactly once.
  constexpr int per_thread = 2000;
  std::atomic<int> runs{0};
  std::atomic<int> rejected{0};
  scheduled_thread_pool pool(2);
  std::vector<chronopool::scheduled_future<int>> futures[2];
  {
    std::jthread producers[2];
    for (int t = 0; t < 2; ++t) {
      producers[t] = std::jthread([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          try {
            futures[t].push_back(pool.submit([&runs, i] {
              runs.fetch_add(1);
              return i;
            }));
          } catch (const rejected_execution&) {
            rejected.fetch_add(1);
          }
        }
      });
    }
    std::this_thread::sleep_for(1ms);
    pool.shutdown();
  }
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  const std::size_t accepted = futures[0].size() + futures[1].size();
  BOOST_TEST(accepted + static_cast<std::size_t>(rejected.load()) == 2u * per_thread);
  BOOST_TEST(static_cast<std::size_t>(runs.load()) == accepted);
  for (const auto& v : futures) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      BOOST_REQUIRE(v[i].done());
      BOOST_TEST(!v[i].cancelled());
    }
  }
  BOOST_TEST_MESSAGE("accepted " << accepted << ", rejected " << rejected.load());
}

BOOST_AUTO_TEST_SUITE_END()

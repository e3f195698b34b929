// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Destroying a pool, a timer or an io_context while work is pending, from
// another thread and from inside a task or handler. The documented outcomes
// (scheduled_thread_pool.hpp, basic_scheduled_timer.hpp, timer_service.hpp):
// - a pool's destructor acts as shutdown_now(): queued tasks are cancelled,
//   running ones are asked to stop and finished, pending timer waits on the
//   pool are destroyed without their handlers being called; from inside one
//   of its own tasks it detaches its threads instead of joining them;
// - a timer's destructor cancels its waits: each handler runs once, with
//   operation_aborted;
// - destroying an io_context destroys pending handlers without calling them.
// In every case: no crash, no handler run twice, nothing leaked (ASan).
// (Destroying a pool from inside its own task with a plain queued task is in
// test/unit/pool/destruction_test.cpp.)
#include "fault_support.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using sys_ns::error_code;
using chronopool::scheduled_thread_pool;
using chronopool::steady_timer;
using namespace fault;

namespace {

/// Counts calls of one handler and the lives of its copies.
struct handler_ledger {
  std::atomic<int> calls{0};
  std::atomic<int> aborted{0};
  life_counter copies;

  auto handler() {
    return [this, t = tracked(copies)](const error_code& ec) {
      calls.fetch_add(1);
      if (ec == asio::error::operation_aborted) aborted.fetch_add(1);
    };
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(destruction_with_work_pending)

BOOST_AUTO_TEST_CASE(a_pool_destroyed_from_another_thread_while_busy) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      life_counter callables;
      handler_ledger wait;
      std::atomic<bool> stop_seen{false};
      std::atomic<int> running{0};
      auto pool = std::make_unique<scheduled_thread_pool>(2);
      // Running: a task that only ends when asked to stop.
      auto runner = pool->submit([&, t = tracked(callables)](std::stop_token st) {
        running.fetch_add(1);
        while (!st.stop_requested()) std::this_thread::sleep_for(100us);
        stop_seen.store(true);
        return 1;
      });
      // Queued: delayed and periodic tasks, executor work, a timer's wait
      // (the timer itself goes first, as Asio requires of I/O objects).
      auto delayed = pool->schedule(1h, [t = tracked(callables)] { return 2; });
      auto periodic = pool->schedule_at_fixed_rate(0ms, 1ms, [t = tracked(callables)] {});
      asio::post(pool->get_executor(), [t = tracked(callables)] {});
      {
        steady_timer timer(*pool, 1h);
        timer.async_wait(wait.handler());
      }  // its aborted completion is now queued on the pool
      BOOST_REQUIRE(eventually([&] { return running.load() == 1; }));
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(rng)));

      injected("a pool destroyed from another thread with work pending");
      std::thread([&] { pool.reset(); }).join();

      BOOST_TEST(stop_seen.load());  // the running task was asked to stop, and finished
      BOOST_TEST(runner.done());
      BOOST_TEST(delayed.cancelled());
      BOOST_TEST(periodic.done());
      BOOST_TEST(wait.calls.load() <= 1);  // run before the stop, or destroyed uncalled
      BOOST_TEST(wait.copies.live.load() == 0);
      BOOST_TEST(callables.live.load() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_pool_destroyed_from_inside_its_task_while_another_runs) {
  for (int round = 0; round < 20; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      life_counter callables;
      auto* pool = new scheduled_thread_pool(2);
      auto delayed = pool->schedule(1h, [t = tracked(callables)] {});
      std::atomic<bool> busy_started{false};
      std::atomic<bool> busy_stop{false};
      auto busy = pool->submit([&, t = tracked(callables)](std::stop_token st) {
        busy_started.store(true);
        while (!st.stop_requested()) std::this_thread::sleep_for(100us);
        busy_stop.store(true);
      });
      // Running, not just taken from the queue (a taken task that has not
      // started when the pool stops is cancelled instead).
      BOOST_REQUIRE(eventually([&] { return busy_started.load(); }));
      std::promise<void> submitted, destroyed;
      auto destroyed_future = destroyed.get_future();
      injected("a pool destroyed from inside its own task while another runs");
      pool->execute([pool, &destroyed, gate = submitted.get_future().share()] {
        gate.wait();  // this thread has left execute(): no call into the pool is in progress
        delete pool;
        destroyed.set_value();
      });
      submitted.set_value();
      BOOST_REQUIRE(destroyed_future.wait_for(long_wait) == std::future_status::ready);
      BOOST_TEST(eventually([&] { return busy_stop.load() && busy.done(); }));
      BOOST_TEST(delayed.cancelled());
      BOOST_TEST(eventually([&] { return callables.live.load() == 0; }));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_timer_destroyed_from_another_thread_while_run_runs) {
  for (int round = 0; round < 50; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      asio::io_context io;
      auto work = asio::make_work_guard(io);
      std::thread runner([&] { io.run(); });
      std::vector<handler_ledger> waits(6);
      auto timer = std::make_unique<steady_timer>(io, steady::now() + std::chrono::microseconds(round * 40));
      for (auto& w : waits) timer->async_wait(w.handler());
      std::this_thread::sleep_for(std::chrono::microseconds(round * 40));  // some may fire first
      injected("a timer destroyed from another thread while io_context::run() runs");
      std::thread([&] { timer.reset(); }).join();
      work.reset();
      runner.join();
      for (auto& w : waits) {
        BOOST_TEST(w.calls.load() == 1);  // fired or aborted, exactly once
        BOOST_TEST(w.copies.live.load() == 0);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_timer_destroyed_inside_its_own_handler) {
  asio::io_context io;
  auto timer = std::make_unique<steady_timer>(io, 1ms);
  handler_ledger later;
  int first_calls = 0;
  timer->async_wait([&](const error_code&) {
    ++first_calls;
    timer->async_wait(later.handler());  // still pending when the timer goes
    injected("a timer destroyed inside its own completion handler");
    timer.reset();
  });
  BOOST_TEST(run_until_idle(io));
  BOOST_TEST(first_calls == 1);
  BOOST_TEST(later.calls.load() == 1);
  BOOST_TEST(later.aborted.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_pool_timer_destroyed_inside_a_pool_task) {
  scheduled_thread_pool pool(2);
  handler_ledger wait;
  auto timer = std::make_unique<steady_timer>(pool, 1h);
  timer->async_wait(wait.handler());
  injected("a pool-driven timer destroyed inside a pool task");
  auto f = pool.submit([&] { timer.reset(); });
  BOOST_REQUIRE(f.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(eventually([&] { return wait.calls.load() == 1; }));
  BOOST_TEST(wait.aborted.load() == 1);
  BOOST_TEST(eventually([&] { return wait.copies.live.load() == 0; }));
}

BOOST_AUTO_TEST_CASE(an_io_context_destroyed_from_another_thread_while_a_pool_keeps_its_waits) {
  // use_pool: the pool's threads keep the context's time; its waits are far
  // off, so none is firing when the context goes (see the case below for
  // one that is).
  scheduled_thread_pool pool(2);
  for (int round = 0; round < 20; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      std::vector<handler_ledger> waits(4);
      {
        auto io = std::make_unique<asio::io_context>();
        chronopool::use_pool(*io, pool);
        chronopool::async_sleep(io->get_executor(), 1h, waits[0].handler());
        std::vector<std::unique_ptr<steady_timer>> timers;
        for (std::size_t i = 1; i < waits.size(); ++i) {
          timers.push_back(std::make_unique<steady_timer>(*io, 1h));
          timers.back()->async_wait(waits[i].handler());
        }
        injected("an io_context destroyed from another thread while a pool keeps its waits");
        std::thread([&] {
          timers.clear();  // (timers go before their context, as Asio requires)
          io.reset();
        }).join();
      }
      for (auto& w : waits) {
        BOOST_TEST(w.calls.load() == 0);  // io never ran: no handler was called
        BOOST_TEST(w.copies.live.load() == 0);
      }
      BOOST_TEST(pool.queued_count() == 0u);  // the pool let go of the context's waits
    }
  }
  BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
}

BOOST_AUTO_TEST_CASE(an_io_context_destroyed_after_run_stopped_midway) {
  handler_ledger near, far;
  {
    asio::io_context io;
    steady_timer a(io, 1ms), b(io, 1h);
    a.async_wait([&](const error_code&) { io.stop(); });
    b.async_wait(far.handler());
    steady_timer c(io, 2ms);
    c.async_wait(near.handler());
    io.run();  // stopped by a's handler, with b (and maybe c) pending
    injected("an io_context destroyed with waits pending after stop()");
    // Leaving the scope destroys the timers (their aborts are queued on io)
    // and then io, which destroys those queued handlers without calling them.
  }
  BOOST_TEST(far.calls.load() == 0);
  BOOST_TEST(far.copies.live.load() == 0);
  BOOST_TEST(near.calls.load() <= 1);
  BOOST_TEST(near.copies.live.load() == 0);
}

// A pool thread may have started firing one of a use_pool context's waits
// (task_base::try_start done) without having reached begin_delivery() when
// the context is destroyed. timer_service::shutdown() once did not wait for
// it, and the pool thread then used the destroyed service and released work
// on the destroyed io_context (heap-use-after-free within a few hundred
// rounds); shutdown() now waits until every registered wait has been
// delivered, refused or withdrawn.
BOOST_AUTO_TEST_CASE(an_io_context_destroyed_while_a_pool_completes_its_waits) {
  // use_pool: pool threads fire the waits and hand their completions to the
  // io_context, which is destroyed (never run) at about the same moment.
  scheduled_thread_pool pool(2);
  for (int round = 0; round < 3000; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      std::vector<handler_ledger> waits(4);
      {
        auto io = std::make_unique<asio::io_context>();
        chronopool::use_pool(*io, pool);
        std::vector<std::unique_ptr<steady_timer>> timers;
        for (std::size_t i = 0; i < waits.size(); ++i) {
          timers.push_back(std::make_unique<steady_timer>(*io, steady::now() + std::chrono::microseconds(100 * i)));
          timers.back()->async_wait(waits[i].handler());
        }
        std::this_thread::sleep_for(std::chrono::microseconds((round % 60) * 5));
        injected("an io_context destroyed while a pool completes waits into it");
        std::thread([&] {
          timers.clear();  // (timers go before their context, as Asio requires)
          io.reset();
        }).join();
      }
      for (auto& w : waits) {
        BOOST_TEST(w.calls.load() == 0);  // io never ran: no handler was called
        BOOST_TEST(w.copies.live.load() == 0);
      }
    }
  }
  BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
}

// A wait that belongs to no timer object (async_sleep, a periodic handler's
// tick), pending when its pool is destroyed, is discarded by the pool. It
// once stayed in the timer service's registry after being freed, and
// shutdown() touched it (heap-use-after-free); a discarded wait now
// withdraws itself from the registry before it can be freed.
BOOST_AUTO_TEST_CASE(a_pool_destroyed_with_an_async_sleep_pending) {
  handler_ledger wait;
  {
    scheduled_thread_pool pool(1);
    chronopool::async_sleep(pool.get_executor(), 1h, wait.handler());
    injected("a pool destroyed with an async_sleep pending");
  }
  BOOST_TEST(wait.calls.load() == 0);
  BOOST_TEST(wait.copies.live.load() == 0);
}

BOOST_AUTO_TEST_CASE(a_pool_destroyed_before_the_io_context_whose_waits_it_keeps) {
  // use_pool, then the pool goes first: the context's pending waits are
  // discarded with it (handlers destroyed, never called), and destroying the
  // context afterwards touches none of them.
  handler_ledger sleep_wait, timer_wait;
  {
    asio::io_context io;
    std::unique_ptr<steady_timer> timer;  // outlives the pool
    {
      scheduled_thread_pool pool(1);
      chronopool::use_pool(io, pool);
      timer = std::make_unique<steady_timer>(io, 1h);
      chronopool::async_sleep(io.get_executor(), 1h, sleep_wait.handler());
      timer->async_wait(timer_wait.handler());
      injected("a pool destroyed before the io_context whose waits it keeps");
    }
    BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 0u);
    BOOST_TEST(timer->cancel() == 0u);  // nothing left to cancel
    timer.reset();
  }
  for (auto* w : {&sleep_wait, &timer_wait}) {
    BOOST_TEST(w->calls.load() == 0);
    BOOST_TEST(w->copies.live.load() == 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()

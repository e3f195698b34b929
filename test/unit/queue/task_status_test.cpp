// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The task status machine of task_base in isolation (no pool, no owner).
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queue_test;
using cpd::task_status;

/// Runs a started task the way a worker does: invoke, then finish_run with
/// whatever it threw.
void run_started(cpd::task_base& t) {
  const time_point started = clock::now();
  std::exception_ptr error;
  try {
    t.invoke();
  } catch (...) {
    error = std::current_exception();
  }
  t.finish_run(error, started);
}

/// t->wait_until(limit) on another thread, bounded by hang_limit (a hung
/// wait is released by cancelling the task, and the test fails).
bool wait_until_bounded(const cpd::task_ptr& t, time_point limit) {
  bool result = false;
  const bool in_time = finishes_in_time([&] { result = t->wait_until(limit); }, [&] { t->cancel(false); });
  BOOST_TEST(in_time, "wait_until still blocked after the hang limit");
  return result;
}

template <class R>
const R& result_of(const cpd::task_ptr& t) {
  return static_cast<const cpd::task_with_result<R>&>(*t).result();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(task_status_machine)

// A one-shot task carries no periodic schedule: the periodic fields live in
// the periodic task's periodic_task_state. The bound is for LP64 with
// libstdc++ or libc++ (8-byte stop_source and exception_ptr): the vtable
// pointer, the heap node (3 words), the stop source, the flags word, the
// error, the owner, the counters word, the waiter list and the schedule
// pointer, then the callable's optional.
BOOST_AUTO_TEST_CASE(a_one_shot_task_has_no_periodic_state) {
  auto f = [] {};
  using one_shot = cpd::task_impl<decltype(f), void, std::allocator<void>, false>;
  using periodic = cpd::task_impl<decltype(f), void, std::allocator<void>, true>;
  BOOST_TEST(sizeof(one_shot) + sizeof(cpd::periodic_task_state) <= sizeof(periodic));
  if constexpr (sizeof(void*) == 8) BOOST_TEST(sizeof(one_shot) <= 96u);
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, f);
  BOOST_TEST((t->period() == cpd::duration::zero()));
  BOOST_TEST(!t->pause());
  BOOST_TEST(!t->trigger_now());
}

BOOST_AUTO_TEST_CASE(try_start_moves_pending_to_running_once) {
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {});
  BOOST_TEST(t->status() == task_status::pending);
  BOOST_TEST(!t->done());
  BOOST_TEST(!t->cancelled());
  BOOST_TEST(!t->is_periodic());
  BOOST_TEST(t->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(t->try_start());
  BOOST_TEST(t->status() == task_status::running);
  BOOST_TEST(!t->done());
  BOOST_TEST(!t->try_start());  // already running
  BOOST_TEST(t->status() == task_status::running);
}

BOOST_AUTO_TEST_CASE(cancel_of_pending_task_releases_callable_at_once) {
  auto token = std::make_shared<int>(7);
  std::weak_ptr<int> watch = token;
  life_counter c;
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [token, g = tracked(c)] { (void)g; return *token; });
  token.reset();
  BOOST_TEST(!watch.expired());
  BOOST_TEST(c.live.load() == 1);

  BOOST_TEST(t->cancel(false));
  BOOST_TEST(watch.expired());  // released by cancel, not when the task dies
  BOOST_TEST(c.live.load() == 0);
  BOOST_TEST(t->status() == task_status::cancelled);
  BOOST_TEST(t->cancelled());
  BOOST_TEST(t->done());
  BOOST_TEST(!t->error());

  BOOST_TEST(!t->cancel(false));  // already cancelled
  BOOST_TEST(!t->cancel(true));
  BOOST_TEST(!t->try_start());  // never runs
  BOOST_TEST(t->status() == task_status::cancelled);
  BOOST_TEST(wait_until_bounded(t, clock::now()));  // done: no wait
}

BOOST_AUTO_TEST_CASE(cancel_of_running_task_keeps_it_cancelled_after_finish) {
  life_counter c;
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)] { (void)g; });
  BOOST_TEST_REQUIRE(t->try_start());
  BOOST_TEST(t->cancel(false));
  BOOST_TEST(t->status() == task_status::cancelled);
  BOOST_TEST(t->done());
  BOOST_TEST(c.live.load() == 1);  // the runner still uses the callable
  BOOST_TEST(!t->cancel(true));

  t->invoke();  // the run goes on; its result is discarded
  t->finish_run(nullptr, clock::now());
  BOOST_TEST(t->status() == task_status::cancelled);
  BOOST_TEST(c.live.load() == 0);  // released by the runner
  BOOST_TEST(!t->error());
  BOOST_TEST(wait_until_bounded(t, clock::now()));
  BOOST_TEST(!t->cancel(false));
}

BOOST_AUTO_TEST_CASE(successful_run_succeeds_and_releases_callable) {
  life_counter c;
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)] {
    (void)g;
    return std::string("done");
  });
  BOOST_TEST_REQUIRE(t->try_start());
  run_started(*t);
  BOOST_TEST(t->status() == task_status::succeeded);
  BOOST_TEST(t->done());
  BOOST_TEST(!t->cancelled());
  BOOST_TEST(!t->error());
  BOOST_TEST(result_of<std::string>(t) == "done");
  BOOST_TEST(c.live.load() == 0);
  BOOST_TEST(wait_until_bounded(t, clock::now()));
  BOOST_TEST(finishes_in_time([&] { t->wait(); }, [] {}));  // returns at once
  BOOST_TEST(!t->cancel(false));  // too late
  BOOST_TEST(!t->cancel(true));
  BOOST_TEST(!t->try_start());
  BOOST_TEST(t->status() == task_status::succeeded);
}

BOOST_AUTO_TEST_CASE(throwing_run_fails_and_keeps_the_exception) {
  life_counter c;
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)]() -> int {
    (void)g;
    throw std::runtime_error("boom");
  });
  BOOST_TEST_REQUIRE(t->try_start());
  BOOST_CHECK_THROW(t->invoke(), std::runtime_error);  // invoke() propagates

  cpd::task_ptr t2 = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)]() -> int {
    (void)g;
    throw std::runtime_error("boom");
  });
  BOOST_TEST_REQUIRE(t2->try_start());
  run_started(*t2);
  BOOST_TEST(t2->status() == task_status::failed);
  BOOST_TEST(t2->done());
  BOOST_TEST(!t2->cancelled());
  BOOST_TEST_REQUIRE(static_cast<bool>(t2->error()));
  BOOST_CHECK_EXCEPTION(std::rethrow_exception(t2->error()), std::runtime_error,
                        [](const std::runtime_error& e) { return std::string(e.what()) == "boom"; });
  BOOST_TEST(wait_until_bounded(t2, clock::now()));
  BOOST_TEST(!t2->cancel(false));
  BOOST_TEST(t2->status() == task_status::failed);

  t->finish_run(std::make_exception_ptr(std::logic_error("other")), clock::now());
  BOOST_TEST(t->status() == task_status::failed);
  BOOST_CHECK_THROW(std::rethrow_exception(t->error()), std::logic_error);
  BOOST_TEST(c.live.load() == 0);
}

BOOST_AUTO_TEST_CASE(cancel_true_requests_stop_of_a_running_callable) {
  struct state {
    std::atomic<bool> started{false};
    std::atomic<bool> go{false};
    std::atomic<int> saw_stop{-1};
  };

  for (const bool interrupt : {true, false}) {
    BOOST_TEST_CONTEXT("may_interrupt " << interrupt) {
      auto s = std::make_shared<state>();
      cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [s, interrupt](std::stop_token st) {
        s->started.store(true);
        if (interrupt) {
          // Ends when stop is requested (or, on a bug, after the hang limit).
          eventually([&] { return st.stop_requested(); });
        } else {
          eventually([&] { return s->go.load(); });
        }
        s->saw_stop.store(st.stop_requested() ? 1 : 0);
        return 1;
      });
      BOOST_TEST_REQUIRE(t->try_start());
      std::thread runner([t] { run_started(*t); });
      BOOST_TEST(eventually([&] { return s->started.load(); }));
      BOOST_TEST(t->cancel(interrupt));
      s->go.store(true);
      runner.join();
      BOOST_TEST(s->saw_stop.load() == (interrupt ? 1 : 0));
      BOOST_TEST(t->status() == task_status::cancelled);
    }
  }

  // A callable without a stop_token: cancel(true) is harmless.
  cpd::task_ptr plain = cpd::make_task(cpd::task_kind::one_shot, [] { return 3; });
  BOOST_TEST_REQUIRE(plain->try_start());
  BOOST_TEST(plain->cancel(true));
  run_started(*plain);
  BOOST_TEST(plain->status() == task_status::cancelled);
}

BOOST_AUTO_TEST_CASE(wait_until_times_out_on_a_pending_task) {
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {});
  const time_point limit = clock::now() + 30ms;
  BOOST_TEST(!wait_until_bounded(t, limit));
  BOOST_TEST(ticks(clock::now()) >= ticks(limit));
  BOOST_TEST(!wait_until_bounded(t, clock::now() - 1s));  // limit already passed
  BOOST_TEST(t->status() == task_status::pending);
  BOOST_TEST_REQUIRE(t->try_start());
  BOOST_TEST(!wait_until_bounded(t, clock::now() + 5ms));  // running is not done either
}

BOOST_AUTO_TEST_CASE(blocked_waiters_are_woken_by_cancel_and_by_completion) {
  struct state {
    std::atomic<int> entered{0};
    std::atomic<int> woke{0};
  };
  for (const bool by_cancel : {true, false}) {
    BOOST_TEST_CONTEXT((by_cancel ? "cancel" : "finish_run")) {
      auto s = std::make_shared<state>();
      cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {});
      std::vector<std::thread> waiters;
      for (int i = 0; i < 3; ++i) {
        waiters.emplace_back([s, t, i] {
          s->entered.fetch_add(1);
          if (i == 0) {
            t->wait();
          } else {
            (void)t->wait_until(clock::now() + 1h);
          }
          s->woke.fetch_add(1);
        });
      }
      BOOST_TEST_REQUIRE(eventually([&] { return s->entered.load() == 3; }));
      std::this_thread::sleep_for(30ms);  // let them block (the check below holds either way)
      BOOST_TEST(s->woke.load() == 0);

      if (by_cancel) {
        BOOST_TEST(t->cancel(false));
      } else {
        BOOST_TEST_REQUIRE(t->try_start());
        std::thread runner([t] { run_started(*t); });
        runner.join();
      }
      const bool all_woke = eventually([&] { return s->woke.load() == 3; });
      BOOST_TEST(all_woke);
      BOOST_TEST(t->status() == (by_cancel ? task_status::cancelled : task_status::succeeded));
      for (auto& w : waiters) {
        // A waiter that was never woken holds its own references: leave it.
        if (all_woke) {
          w.join();
        } else {
          w.detach();
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(cancel_races_with_try_start_and_with_cancel) {
  constexpr int rounds = 300;
  for (int round = 0; round < rounds; ++round) {
    life_counter c;
    cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)] { (void)g; });
    std::latch go(3);
    bool started = false;
    bool cancel1 = false, cancel2 = false;
    std::thread a([&] {
      go.arrive_and_wait();
      started = t->try_start();
      if (started) run_started(*t);
    });
    std::thread b([&] {
      go.arrive_and_wait();
      cancel1 = t->cancel(true);
    });
    std::thread d([&] {
      go.arrive_and_wait();
      cancel2 = t->cancel(false);
    });
    a.join();
    b.join();
    d.join();
    BOOST_TEST_CONTEXT("round " << round << " started " << started << " cancels " << cancel1 << cancel2) {
      const task_status st = t->status();
      const int cancels = int(cancel1) + int(cancel2);
      BOOST_TEST_REQUIRE(cancels <= 1);  // only one cancel can win
      BOOST_TEST_REQUIRE(c.live.load() == 0);  // released exactly by whoever ended it
      BOOST_TEST_REQUIRE(t->done());
      if (cancels == 1) {
        BOOST_TEST_REQUIRE(st == task_status::cancelled);
      } else {
        // No cancel won: the run finished before both.
        BOOST_TEST_REQUIRE(started);
        BOOST_TEST_REQUIRE(st == task_status::succeeded);
      }
      if (!started) BOOST_TEST_REQUIRE(cancels == 1);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

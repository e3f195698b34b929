// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Allocation failure injected at submission time: through a handler's
// associated allocator (the pool's executor and chronopool's timers allocate
// their work with it) and through the global operator new (everything else:
// tasks made with std::allocator, queue growth, thread start-up).
//
// Each sweep fails the 1st, 2nd, ... allocation of one call until the call
// makes no n-th allocation any more. Whenever an allocation failed, the call
// must have thrown std::bad_alloc to its caller (or, for an allocation it can
// do without, succeeded), its callable or handler must be gone, nothing may
// stay queued or registered, tracked work must be given back, and the pool,
// queue or timer must keep working. ASan checks that nothing leaks.
#include "failing_allocator.hpp"
#include "failing_new.hpp"
#include "fault_support.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/support/handoff_allocator.hpp>
#include <chronopool/detail/timer/wait_op.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using chronopool::scheduled_thread_pool;
using namespace fault;

namespace {

/// What one sweep step saw.
struct step {
  bool fired = false;  // the n-th allocation happened (and threw)
  bool threw = false;  // the call threw std::bad_alloc
};

/// Calls @p attempt(n) for n = 1, 2, ... (each with a fresh setup inside
/// @p attempt) until the n-th allocation no longer happens. Returns how many
/// allocations were failed.
template <class Attempt>
int sweep_allocations(Attempt attempt) {
  for (std::size_t n = 1; n < 256; ++n) {
    bool fired = false;
    BOOST_TEST_CONTEXT("failing allocation #" << n) { fired = attempt(n).fired; }
    if (!fired) return static_cast<int>(n - 1);
  }
  BOOST_ERROR("more than 255 allocations in one call");
  return 255;
}

/// Runs @p call with the n-th allocation on this thread failing (with @p
/// from_then_on, every one after it too: memory that stays short).
template <class Call>
step with_nth_allocation_failing(std::size_t n, Call call, bool from_then_on = false) {
  step s;
  scoped_allocation_failure failure(n, from_then_on);
  try {
    call();
  } catch (const std::bad_alloc&) {
    s.threw = true;
  }
  s.fired = failure.fired();
  return s;
}

bool pool_runs_work(scheduled_thread_pool& pool) {
  auto f = pool.submit([] { return 3; });
  return f.wait_for(long_wait) == std::future_status::ready && f.get() == 3;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(allocation_failure)

// ---- through a handler's associated allocator -----------------------------------------

BOOST_AUTO_TEST_CASE(executor_post_with_a_failing_handler_allocator) {
  int failures = 0;
  for (std::size_t fail_at = 1; fail_at <= 3; ++fail_at) {
    BOOST_TEST_CONTEXT("allocation #" << fail_at << " fails") {
      allocation_budget budget;
      budget.fail_at = fail_at;
      life_counter c;
      std::atomic<int> ran{0};
      int accepted = 0;
      int refused = 0;
      {
        scheduled_thread_pool pool(1);
        for (int i = 0; i < 4; ++i) {
          try {
            asio::post(pool.get_executor(), asio::bind_allocator(failing_allocator<int>(budget),
                                                                 [&ran, t = tracked(c)] { ran.fetch_add(1); }));
            ++accepted;
          } catch (const std::bad_alloc&) {
            ++refused;
          }
        }
        BOOST_TEST(refused == static_cast<int>(budget.failures.load()));
        BOOST_TEST(eventually([&] { return ran.load() == accepted; }));
        BOOST_TEST(pool_runs_work(pool));
        pool.shutdown();  // a leaked work count would hold off termination
        BOOST_TEST(pool.wait_for_termination(long_wait));
      }
      failures += refused;
      BOOST_TEST(c.live.load() == 0);
      BOOST_TEST(budget.balanced());
    }
  }
  BOOST_TEST(failures >= 1);
}

BOOST_AUTO_TEST_CASE(timer_waits_with_a_failing_handler_allocator) {
  int failures = 0;
  for (std::size_t fail_at = 1; fail_at <= 3; ++fail_at) {
    BOOST_TEST_CONTEXT("allocation #" << fail_at << " fails") {
      allocation_budget budget;
      budget.fail_at = fail_at;
      life_counter c;
      int calls = 0;
      int accepted = 0;
      int refused = 0;
      {
        asio::io_context io;
        chronopool::steady_timer t(io, 1ms);
        for (int i = 0; i < 4; ++i) {
          try {
            t.async_wait(asio::bind_allocator(failing_allocator<int>(budget),
                                              [&calls, tok = tracked(c)](const sys_ns::error_code& ec) {
                                                if (!ec) ++calls;
                                              }));
            ++accepted;
          } catch (const std::bad_alloc&) {
            ++refused;
          }
        }
        // A refused wait registers nothing: only the accepted ones are pending.
        BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() ==
                   static_cast<std::size_t>(accepted));
        BOOST_TEST(run_until_idle(io));
        BOOST_TEST(calls == accepted);
        BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 0u);
        // Also async_sleep, which allocates its wait the same way.
        budget.fail_at = budget.attempts.load() + 1;
        bool slept = false;
        BOOST_CHECK_THROW(chronopool::async_sleep(io.get_executor(), 1ms,
                                                  asio::bind_allocator(failing_allocator<int>(budget),
                                                                       [&](const sys_ns::error_code&) { slept = true; })),
                          std::bad_alloc);
        BOOST_TEST(run_until_idle(io));
        BOOST_TEST(!slept);
      }
      failures += refused + 1;
      BOOST_TEST(c.live.load() == 0);
      BOOST_TEST(budget.balanced());
    }
  }
  BOOST_TEST(failures >= 2);
}

// ---- through the global operator new ---------------------------------------------------

BOOST_AUTO_TEST_CASE(pool_submissions_on_a_warm_pool) {
  // Threads running and queue storage grown: a submission allocates only its
  // task (a new slab for it, below).
  scheduled_thread_pool pool(2);
  pool.prestart_core_threads();
  {
    std::vector<chronopool::scheduled_future<void>> warm;
    for (int i = 0; i < 256; ++i) warm.push_back(pool.schedule(1h, [] {}));
    for (auto& f : warm) f.cancel();
  }
  using submit_fn = std::function<chronopool::scheduled_future_base(life_counter&)>;
  const submit_fn submissions[] = {
      [&](life_counter& c) { return pool.submit([t = tracked(c)] { return 1; }); },
      [&](life_counter& c) { return pool.schedule(1h, [t = tracked(c)] {}); },
      [&](life_counter& c) { return pool.schedule_at_fixed_rate(1h, 1h, [t = tracked(c)] {}); },
  };
  int failed = 0;
  for (const auto& submit : submissions) {
    failed += sweep_allocations([&](std::size_t n) {
      life_counter c;
      chronopool::scheduled_future_base f;
      // A task's memory comes from this thread's slabs; make the submission
      // take a new one, so that the task's allocation is among those failed.
      chronopool::detail::handoff_start_new_slabs();
      const step s = with_nth_allocation_failing(n, [&] { f = submit(c); });
      if (s.fired) {
        BOOST_TEST(s.threw, "a failed allocation must reach the caller");
        BOOST_TEST(!f.valid());
        BOOST_TEST(c.live.load() == 0, "the callable of a refused task must be destroyed");
        BOOST_TEST(pool.queued_count() == 0u);
      }
      f.cancel();
      BOOST_TEST(eventually([&] { return c.live.load() == 0; }));
      return s;
    });
  }
  BOOST_TEST(failed >= 3);
  BOOST_TEST(pool_runs_work(pool));
}

BOOST_AUTO_TEST_CASE(executor_post_with_the_default_allocator) {
  scheduled_thread_pool pool(1);
  pool.prestart_core_threads();
  const int failed = sweep_allocations([&](std::size_t n) {
    life_counter c;
    std::atomic<bool> ran{false};
    const step s = with_nth_allocation_failing(
        n, [&] { asio::post(pool.get_executor(), [&ran, t = tracked(c)] { ran.store(true); }); });
    if (s.fired) BOOST_TEST(s.threw);
    if (!s.threw) BOOST_TEST(eventually([&] { return ran.load(); }));
    BOOST_TEST(eventually([&] { return c.live.load() == 0; }));
    return s;
  });
  BOOST_TEST(failed >= 1);
  BOOST_TEST(pool_runs_work(pool));
  pool.shutdown();
  BOOST_TEST(pool.wait_for_termination(long_wait));
}

// A fresh pool: the first submission also grows the queue and starts the
// first thread, and either may fail.
BOOST_AUTO_TEST_CASE(pool_submission_on_a_fresh_pool) {
  const int failed = sweep_allocations([&](std::size_t n) {
    life_counter c;
    step s;
    {
      scheduled_thread_pool pool(1);
      chronopool::scheduled_future<int> f;
      s = with_nth_allocation_failing(n, [&] { f = pool.submit([t = tracked(c)] { return 1; }); });
      if (s.fired) {
        BOOST_TEST(s.threw == !f.valid());
        if (s.threw) BOOST_TEST(c.live.load() == 0, "the callable of a refused task must be destroyed");
      }
      if (f.valid()) {
        BOOST_TEST((f.wait_for(long_wait) == std::future_status::ready));
      }
      BOOST_TEST(pool_runs_work(pool));
    }
    BOOST_TEST(c.live.load() == 0);
    return s;
  });
  BOOST_TEST(failed >= 2);
}

// The three cases below found bugs, since fixed (see each).

// A wait on an io_context is allocated with the handler's allocator; then
// timer_service::schedule_native() queues it (the queue may grow) and
// arm_locked() may create the native timer (make_unique<native_wakeup>, and
// Asio's deadline_timer_service, epoll_reactor and timer queue on first use).
// Whichever of those allocations fails, async_wait() throws std::bad_alloc
// and the wait is gone: not pending, its handler destroyed and never run.
// (It once stayed registered and unarmed: run() never returned and a later
// cancel() ran the handler of a call that had reported failure.)
BOOST_AUTO_TEST_CASE(timer_async_wait_with_the_default_allocator) {
  const int failed = sweep_allocations([&](std::size_t n) {
    life_counter c;
    step s;
    {
      asio::io_context io;
      chronopool::steady_timer t(io, 1ms);
      int calls = 0;
      s = with_nth_allocation_failing(
          n, [&] { t.async_wait([&calls, tok = tracked(c)](const sys_ns::error_code&) { ++calls; }); });
      auto& service = asio::use_service<chronopool::timer_service>(io);
      if (s.fired) BOOST_TEST(s.threw);
      if (s.threw) {
        BOOST_TEST(service.pending_waits() == 0u, "a refused wait must not stay registered");
        BOOST_TEST(c.live.load() == 0, "the handler of a refused wait must be destroyed");
      }
      BOOST_TEST(run_until_idle(io));
      BOOST_TEST(calls == (s.threw ? 0 : 1), "a refused wait's handler must never run");
      BOOST_TEST(service.pending_waits() == 0u);
    }
    BOOST_TEST(c.live.load() == 0);
    return s;
  });
  BOOST_TEST(failed >= 1);
}

// The same on a pool: when the pool's queue cannot grow, async_wait() throws
// and the wait is gone from the timer's pending list and the registry.
BOOST_AUTO_TEST_CASE(pool_timer_async_wait_with_the_default_allocator) {
  const int failed = sweep_allocations([&](std::size_t n) {
    life_counter c;
    step s;
    {
      scheduled_thread_pool pool(1);
      pool.prestart_core_threads();
      chronopool::steady_timer t(pool, 1ms);
      std::atomic<int> calls{0};
      s = with_nth_allocation_failing(
          n, [&] { t.async_wait([&calls, tok = tracked(c)](const sys_ns::error_code&) { calls.fetch_add(1); }); });
      auto& service = asio::use_service<chronopool::timer_service>(pool);
      if (s.fired) BOOST_TEST(s.threw);
      if (s.threw) {
        BOOST_TEST(service.pending_waits() == 0u, "a refused wait must not stay registered");
        BOOST_TEST(c.live.load() == 0, "the handler of a refused wait must be destroyed");
      } else {
        BOOST_TEST(eventually([&] { return calls.load() == 1; }));
      }
      BOOST_TEST(t.cancel() == 0u, "nothing may be left to cancel");
      std::this_thread::sleep_for(5ms);
      BOOST_TEST(calls.load() == (s.threw ? 0 : 1), "a refused wait's handler must never run");
    }
    BOOST_TEST(c.live.load() == 0);
    return s;
  });
  BOOST_TEST(failed >= 1);
}

// Cancelling a pool-driven wait posts its operation_aborted completion to
// the pool, which allocates a task for it inside a noexcept path
// (task_base::cancel -> wait_op::on_cancel_before_run -> post). That failure
// once called std::terminate; now the handler, still held by the wait, runs
// on the cancelling thread as a last resort, exactly once.
BOOST_AUTO_TEST_CASE(cancelling_a_pool_wait_whose_completion_cannot_be_allocated) {
  scheduled_thread_pool pool(1);
  chronopool::steady_timer t(pool, 1h);
  std::atomic<int> calls{0};
  t.async_wait([&](const sys_ns::error_code&) { calls.fetch_add(1); });
  std::size_t cancelled = 0;
  const step s = with_nth_allocation_failing(1, [&] { cancelled = t.cancel(); });
  // Either outcome keeps the promise that the handler runs exactly once:
  // cancel() reports the failure and the wait stays pending, or it succeeds.
  if (s.threw) {
    BOOST_TEST(cancelled == 0u);
    BOOST_TEST(t.cancel() == 1u);
  }
  BOOST_TEST(eventually([&] { return calls.load() == 1; }));
}

// ---- a timer's inline wait (see detail::timer_impl) ------------------------------------

namespace {

/// What a one-word handler saw: it captures a pointer to one of these.
struct inline_result {
  std::atomic<int> calls{0};
  sys_ns::error_code ec;
};

void wait_with_one_word(chronopool::steady_timer& t, inline_result& r) {
  inline_result* p = &r;
  t.async_wait([p](const sys_ns::error_code& ec) {
    p->ec = ec;
    p->calls.fetch_add(1);
  });
}

// Checks that @p n waits of at least @p block_bytes each took a block:
// from operator new each (@p allocations; the per-thread cache may have a
// few ready), or, where the handoff allocator's slabs serve blocks, from a
// new slab per 64 KiB of them (the spare and the current slab may take the
// first), each new slab one of @p allocations.
void expect_a_block_each(std::size_t n, std::size_t block_bytes, std::size_t allocations, std::size_t slabs_before) {
  if (chronopool::detail::handoff_enabled()) {
    const std::size_t slabs_grown = chronopool::detail::handoff_thread_slabs() - slabs_before;
    BOOST_TEST(slabs_grown + 2 >= n * block_bytes / 65536);
    BOOST_TEST(allocations >= slabs_grown);
  } else {
    BOOST_TEST(allocations + 16 >= n);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(arming_waits_with_handlers_of_two_words_or_less_allocates_far_less_than_once_a_wait) {
  // The wait lives in its timer: only the shard's index grows (its buffers
  // double). A handler of three words takes a block per wait (the control;
  // see expect_a_block_each).
  asio::io_context io;
  constexpr std::size_t n = 4096;
  std::vector<chronopool::steady_timer> timers;
  timers.reserve(3 * n);
  for (std::size_t i = 0; i < 3 * n; ++i) timers.emplace_back(io, std::chrono::hours(1) + std::chrono::microseconds(i));
  int sink = 0;
  int* p = &sink;
  std::size_t one_word_allocations = 0, two_word_allocations = 0, block_allocations = 0;
  {
    scoped_allocation_failure count(SIZE_MAX);
    for (std::size_t i = 0; i < n; ++i) timers[i].async_wait([p](const sys_ns::error_code&) { ++*p; });
    one_word_allocations = count.allocations();
  }
  {
    scoped_allocation_failure count(SIZE_MAX);
    for (std::size_t i = n; i < 2 * n; ++i)
      timers[i].async_wait([p, i](const sys_ns::error_code&) { *p += static_cast<int>(i & 1); });
    two_word_allocations = count.allocations();
  }
  const std::size_t slabs_before = chronopool::detail::handoff_thread_slabs();
  {
    scoped_allocation_failure count(SIZE_MAX);
    for (std::size_t i = 2 * n; i < 3 * n; ++i)
      timers[i].async_wait([p, q = p, i](const sys_ns::error_code&) { *p += (q != nullptr) + static_cast<int>(i & 1); });
    block_allocations = count.allocations();
  }
  BOOST_TEST(one_word_allocations * 16 < n);
  BOOST_TEST(two_word_allocations * 16 < n);
  expect_a_block_each(n, 64, block_allocations, slabs_before);
  for (auto& t : timers) t.cancel();
  BOOST_TEST(run_until_idle(io));
}

// Disabled in the module's run: it fills the process's table of inline
// operations for good, which would send every later handler type in the
// process to blocks. CTest runs it alone (fault_inline_ops_table_full).
BOOST_AUTO_TEST_CASE(a_handler_type_met_once_the_table_is_full_waits_in_a_block,
                     *boost::unit_test::disabled()) {
  // Operations no timer will ever hold: numbers are handed out until none is left.
  static constexpr chronopool::detail::inline_wait_ops never_used{nullptr, nullptr, nullptr, nullptr, 1};
  std::size_t numbered = 0;
  while (chronopool::detail::register_inline_ops(&never_used) != 0) ++numbered;
  BOOST_TEST(numbered <= 65'535u);
  BOOST_TEST(chronopool::detail::register_inline_ops(&never_used) == 0u);  // stays full

  // A one-word handler type first met now gets no number: each of its waits
  // takes a block, and each still completes once.
  asio::io_context io;
  constexpr std::size_t n = 4096;
  std::vector<chronopool::steady_timer> timers;
  timers.reserve(n);
  for (std::size_t i = 0; i < n; ++i) timers.emplace_back(io, std::chrono::hours(1));
  std::vector<inline_result> results(n);
  std::size_t allocations = 0;
  const std::size_t slabs_before = chronopool::detail::handoff_thread_slabs();
  {
    scoped_allocation_failure count(SIZE_MAX);
    for (std::size_t i = 0; i < n; ++i) wait_with_one_word(timers[i], results[i]);
    allocations = count.allocations();
  }
  expect_a_block_each(n, 48, allocations, slabs_before);  // a block each
  std::size_t cancelled = 0;
  for (auto& t : timers) cancelled += t.cancel();
  BOOST_TEST(cancelled == n);
  BOOST_TEST(run_until_idle(io));
  for (const auto& r : results) {
    BOOST_TEST(r.calls.load() == 1);
    BOOST_TEST((r.ec == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE(an_inline_wait_cancelled_with_no_memory_left_completes_once_in_the_call) {
  // Neither a chunk for the abort batch nor a block of its own can be had:
  // the call, which keeps the timer alive, completes it as a last resort.
  asio::io_context io;
  chronopool::steady_timer t(io, std::chrono::hours(1));
  inline_result r;
  wait_with_one_word(t, r);
  std::size_t cancelled = 0;
  step s;
  // A fresh thread: its recycling cache is empty, and with new slabs only,
  // the block needs operator new.
  std::thread canceller([&] {
    chronopool::detail::handoff_start_new_slabs();
    s.fired = false;
    scoped_allocation_failure failure(1, true);
    cancelled = t.cancel();
    s.fired = failure.fired();
  });
  canceller.join();
  BOOST_TEST(s.fired);
  BOOST_TEST(cancelled == 1u);
  BOOST_TEST(r.calls.load() == 1);
  BOOST_TEST((r.ec == asio::error::operation_aborted));
  BOOST_TEST(run_until_idle(io));
  BOOST_TEST(r.calls.load() == 1);
  BOOST_TEST(t.cancel() == 0u);
}

BOOST_AUTO_TEST_CASE(an_inline_wait_firing_with_memory_short_completes_once) {
  // Every allocation on the firing thread fails from the n-th on: the wait
  // that cannot leave its timer is parked, and completes (with success)
  // once memory is back and the shard is busy again (another wait here).
  const int failed = sweep_allocations([&](std::size_t n) {
    asio::io_context io;
    chronopool::steady_timer t(io, std::chrono::milliseconds(1));
    inline_result r;
    wait_with_one_word(t, r);
    step s;
    std::thread runner([&] {
      chronopool::detail::handoff_start_new_slabs();  // the block the wait moves into needs operator new
      s = with_nth_allocation_failing(n, [&] { io.run_for(20ms); }, true);
    });
    runner.join();
    chronopool::steady_timer nudge(io, std::chrono::milliseconds(1));
    inline_result nudged;
    wait_with_one_word(nudge, nudged);
    BOOST_TEST(run_until_idle(io));
    BOOST_TEST(r.calls.load() == 1);
    BOOST_TEST(!r.ec);
    BOOST_TEST(nudged.calls.load() == 1);
    return s;
  });
  BOOST_TEST(failed >= 1);
}

// A wheel slot moves onto the deadline index's run when it comes near, and
// the run may have to grow for it (inside noexcept pops). When it cannot,
// the slot stays whole in the wheel, after every node before it: its nodes
// are late, never lost, early or out of order, and move once memory is back.
BOOST_AUTO_TEST_CASE(a_wheel_slot_that_cannot_move_onto_the_run) {
  namespace cpd = chronopool::detail;
  struct bare_node : cpd::index_node {};
  const int failed = sweep_allocations([](std::size_t n) {
    cpd::deadline_index index;
    const auto start = cpd::clock::now() + 20ms;
    // Two slots of 150 (each run buffer small enough to come from operator new).
    std::vector<bare_node> nodes(300);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto slot = i < 150 ? 0ms : 1ms;
      nodes[i].set_deadline(start + slot + std::chrono::nanoseconds((i * 7919) % 1000));
      nodes[i].set_sequence(i);
      index.insert(&nodes[i]);
    }
    std::vector<const cpd::index_node*> out;
    out.reserve(nodes.size());  // only the index allocates while armed
    const step s = with_nth_allocation_failing(n, [&] {
      while (cpd::index_node* node = index.pop_due(start + 3ms)) out.push_back(node);
    });
    BOOST_TEST(!s.threw);  // noexcept all the way
    BOOST_TEST(index.check_invariants());
    BOOST_TEST(out.size() + index.size() == nodes.size());
    if (auto wake = index.wake_time(); wake && !out.empty()) BOOST_TEST((*wake >= out.back()->deadline()));
    while (cpd::index_node* node = index.pop_first()) out.push_back(node);
    BOOST_TEST(out.size() == nodes.size());
    BOOST_TEST(std::is_sorted(out.begin(), out.end(), [](const cpd::index_node* a, const cpd::index_node* b) {
      return runs_before(*a, *b);
    }));
    return s;
  });
  BOOST_TEST(failed >= 1);
}

BOOST_AUTO_TEST_SUITE_END()

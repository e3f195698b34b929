// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Construction options of a scheduled_thread_pool.
#pragma once

#include <chronopool/log.hpp>
#include <chronopool/pool_thread.hpp>
#include <chronopool/rejected_task.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/task_view.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <string>

namespace chronopool {

/// A non-owning reference to the body of a task, handed to a task decorator.
/// Calling it runs the task's callable (once); it is valid only during the
/// decorator call.
class task_body {
 public:
  /// Runs the task's callable; call it once, during the decorator call.
  void operator()() const { run_(ctx_); }

  /// For the pool: binds the body to a run (`run(ctx)` runs it).
  task_body(void (*run)(void*), void* ctx) noexcept : run_(run), ctx_(ctx) {}

 private:
  void (*run_)(void*);
  void* ctx_;
};

/// Everything a scheduled_thread_pool is constructed with; the defaults are a
/// one-thread pool with Java's shutdown policies. Several settings can be
/// changed later through the pool's setters.
struct scheduled_thread_pool_options {
  /// Threads kept alive even when idle (Java's corePoolSize). Threads start on
  /// demand as work arrives. 0 is allowed: work then runs on a single thread
  /// made on demand, which retires after keep_alive once the queue is empty.
  std::size_t core_pool_size = 1;

  /// Name given to each OS thread by the default thread factory: prefix +
  /// "-" + index (Linux truncates to 15 bytes). Unused with a thread_factory.
  std::string thread_name_prefix = "chronopool";

  /// Starts each pool thread (Java's ThreadFactory), to set its name, stack
  /// size, affinity or priority. Called with the index the pool gives the
  /// thread (0, 1, ... in creation order) and the thread's body; it must
  /// start a new thread that calls `body()` once (it may do its own set-up
  /// first), and return it (a std::thread, std::jthread, or any
  /// joinable_thread, see pool_thread). The pool joins it after the body
  /// returns. The body is the pool's: a second call, or a call after the
  /// factory failed, does nothing. Empty: a std::thread named from
  /// thread_name_prefix.
  ///
  /// The factory is called under the pool's internal lock: it must not call
  /// the pool (submit, stats, ...), nor wait for the body to return.
  ///
  /// A factory may fail: throw, or return no thread (a default pool_thread
  /// or a thread that is not joinable, reported as std::system_error with
  /// std::errc::resource_unavailable_try_again). No task is lost either way.
  /// While other pool threads run, the submission succeeds, its task waits
  /// for them, and the error goes to the error_handler. When no pool thread
  /// runs at all, the submitting call throws the error and its task is not
  /// queued (so none sits in a queue that no thread serves); the pool stays
  /// usable and the next submission or prestart tries again. std::thread's
  /// own failure to start (std::system_error) is handled the same way.
  std::function<pool_thread(std::size_t thread_index, std::function<void()> body)> thread_factory;

  /// What the pool does with a task it refuses, when no rejection_handler
  /// is set.
  rejection_policy rejection = rejection_policy::abort;

  /// A user's rejection handler (Java's RejectedExecutionHandler). When set
  /// it replaces the rejection policy for every refused task (the policy
  /// applies again if it is reset to empty). It is called on the submitting
  /// thread with the rejected_task, which may run the task there or drop it;
  /// a task the handler leaves is dropped (its future cancelled), and an
  /// exception it throws propagates from the submitting call (the task is
  /// dropped). Work posted through the executor is never rejected, so never
  /// handed to it.
  std::function<void(rejected_task&)> rejection_handler;

  /// Refuse new tasks once this many are queued (the rejection policy
  /// decides what happens). Re-arming a periodic task is never refused.
  std::size_t max_queued = std::numeric_limits<std::size_t>::max();

  /// After shutdown(): do periodic tasks keep running? (Java default: no.)
  bool continue_existing_periodic_tasks_after_shutdown = false;
  /// After shutdown(): do queued delayed one-shot tasks still run at their
  /// deadline? (Java default: yes.) Tasks already due run either way.
  bool execute_existing_delayed_tasks_after_shutdown = true;
  /// Does cancel() take the task out of the queue at once? (Default yes; Java's
  /// default is no, which keeps cancelled entries queued until their deadline
  /// or purge().) The callable is released at cancel() either way.
  bool remove_on_cancel = true;

  /// How long a thread above the core size (or any thread, with
  /// allow_core_thread_timeout) waits idle before it retires.
  std::chrono::nanoseconds keep_alive = std::chrono::milliseconds(10);
  /// Core threads retire after keep_alive idle too (Java's
  /// allowCoreThreadTimeOut); they start again on demand.
  bool allow_core_thread_timeout = false;

  /// Precision mode, off when zero. The thread waiting for the next deadline
  /// sleeps until just before it and spins the rest, so that work starts
  /// within microseconds of its deadline rather than after the kernel's
  /// wake-up latency (tens of microseconds, more on a busy or virtual
  /// machine). The spin window follows the wake-up lateness the pool
  /// measures (twice the worst recent one), never longer than this. An idle
  /// thread spins one window too before it sleeps, so that when the leader
  /// takes a task the next one takes over at once instead of after a
  /// wake-up. The cost is one core busy for up to a window before each
  /// deadline, and each idle thread for one window each time it goes idle.
  /// Negative values are rejected.
  std::chrono::nanoseconds precision_spin_limit{0};

  /// How much later than its deadline a task or timer may start so that
  /// one wake-up serves several deadlines. The thread waiting for the next
  /// deadline sleeps on to the latest one at most this far after it, and
  /// runs everything due by then: nothing starts early, and nothing starts
  /// more than the slack later than an exact wait would have started it.
  /// The default, 50 us, is Linux's default timer slack, which the kernel
  /// applies to a thread's own sleeps (and so to Java's
  /// ScheduledThreadPoolExecutor); with it the pool also sleeps rather than
  /// spins for a deadline that is near, and spends its CPU on wake-ups only
  /// when deadlines are more than the slack apart. Zero: every deadline is
  /// waited for exactly. Ignored in precision mode and on a manual clock.
  /// Must be in [0, 1 ms] (std::invalid_argument).
  std::chrono::nanoseconds wakeup_slack = std::chrono::microseconds(50);

  /// Testing: the pool runs on a manual clock (chronopool::pool_manual_clock,
  /// from manual_clock_of(pool)) instead of the real ones. Its delayed,
  /// periodic, wall-clock and calendar tasks, its timers and its now() read
  /// virtual time, which moves only when the test advances the clock.
  /// precision_spin_limit must then be zero (std::invalid_argument).
  bool use_manual_clock = false;
  /// Testing, with use_manual_clock: the manual clock auto-advances from the
  /// start (pool_manual_clock::auto_advance): whenever every pool thread is
  /// idle and nothing is due, the virtual time jumps to the earliest
  /// deadline queued, so delayed work runs without advance(). Off by
  /// default: the test's own thread is outside the pool, which would
  /// otherwise race ahead of the test's steps. Without use_manual_clock:
  /// std::invalid_argument.
  bool manual_clock_auto_advance = false;

  // ---- hooks (all optional; called on pool threads unless noted) ----------

  /// Errors that no future will report: exceptions from execute()d work and
  /// executor functions, from periodic runs with continue_after_error, and
  /// from the other hooks. @p task is null when the error does not come from
  /// a queued task (a function the executor ran inline, or a thread or
  /// terminated hook). Default (empty): an error log_record (event
  /// "task_failed", "function_failed", "hook_failed" or
  /// "thread_start_failed") to log_handler.
  std::function<void(std::exception_ptr error, const task_view* task)> error_handler;
  /// Where the pool's log records go; empty: the process-wide handler
  /// (chronopool::set_log_handler; by default one line on stderr).
  chronopool::log_handler log_handler{};
  /// Called on each new pool thread before it takes work.
  std::function<void(std::size_t thread_index)> on_thread_start;
  /// Called on each pool thread as it exits, after its last task.
  std::function<void(std::size_t thread_index)> on_thread_stop;
  /// Called before each run; an exception from it counts as the run's error
  /// (the callable is then not invoked).
  std::function<void(const task_view&)> before_execute;
  /// Called after each run with its error (null on success).
  std::function<void(const task_view&, std::exception_ptr)> after_execute;
  /// Wraps every run (Java's decorateTask): call `body()` to run the task.
  /// Use it to install per-task context (tracing, logging) around the run.
  /// Not calling body counts as the run's error.
  std::function<void(const task_view&, task_body body)> task_decorator;
  /// Called exactly once, when the pool reaches TERMINATED, on the thread that
  /// brought it there (the last pool thread, or the one calling shutdown).
  std::function<void()> terminated;
};

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The compiled machinery behind scheduled_thread_pool: the queue, the
// threads, the run state and the policies.
//
// It lives apart from the public object and is owned through a shared_ptr
// that every pool thread also holds, so a pool destroyed from inside one of
// its own tasks stays valid until that thread has left the task.
#pragma once

#include <chronopool/detail/queue/delayed_work_queue.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/detail/pool/pool_wait_op.hpp>
#include <chronopool/detail/pool/wall_clock_tasks.hpp>
#include <chronopool/detail/support/histogram_recorder.hpp>
#include <chronopool/pool_options.hpp>
#include <chronopool/pool_thread.hpp>
#include <chronopool/rejected_task.hpp>
#include <chronopool/pool_stats.hpp>
#include <chronopool/run_state.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace chronopool {
class pool_manual_clock;
}  // namespace chronopool

namespace chronopool::detail {

class pool_core final : public task_owner, public std::enable_shared_from_this<pool_core> {
 public:
  explicit pool_core(scheduled_thread_pool_options options);
  ~pool_core();

  // ---- time (the seam: see detail/time/manual_time.hpp) ----------------------
  /// The time the pool runs on: steady_clock::now(), or its manual clock's
  /// virtual time. While no manual clock exists in the process, one relaxed
  /// load and a branch never taken.
  time_point now() const noexcept {
    if (!any_manual_clock()) [[likely]]
      return clock::now();
    const manual_time* m = manual_time_of();
    return m != nullptr ? m->now() : clock::now();
  }
  /// The pool's manual clock (scheduled_thread_pool_options::use_manual_clock), or null.
  pool_manual_clock* manual_clock() const noexcept { return manual_clock_.get(); }
  /// For the manual clock's driver: the earliest deadline queued ("never"
  /// aside), none when nothing is.
  std::optional<time_point> manual_first_deadline() const;
  /// For the manual clock's driver, after it moved the time: every idle
  /// thread looks at the queue again.
  void manual_time_moved() noexcept { queue_.time_moved(); }
  /// For the manual clock's driver: whether every thread in the work loop
  /// waits for work (none is between runs, about to read the time).
  bool manual_threads_idle() const noexcept { return queue_.idle_takers() >= live_.load(); }
  /// For the manual clock's driver: blocks until manual_threads_idle()
  /// holds (told by the queue, not polled).
  void wait_manual_threads_idle() { queue_.wait_takers_idle(); }
  /// Auto-advance of the manual clock's @p time on (non-null) or off.
  void set_manual_auto_advance(manual_time* time) noexcept { queue_.set_auto_advance(time); }
  /// Times auto-advance moved the manual clock.
  std::uint64_t manual_auto_advances() const { return queue_.auto_advances(); }
  /// For the manual clock's driver, after a step of its system clock: the
  /// wall-clock tasks are re-timed as after a real step.
  void manual_system_step() noexcept { wall_.on_manual_step(); }

  /// Assigns a sequence number and queues @p t, or applies the rejection
  /// policy. @p where names the public call for error messages. @p owner
  /// becomes the task's owner (this pool when null).
  void enqueue(const task_ptr& t, const char* where, task_owner* owner = nullptr);
  /// enqueue() for a task that waits for the system_clock @p instant: it
  /// follows steps of the wall clock (see detail/pool/wall_clock_tasks.hpp).
  void enqueue_wall(const task_ptr& t, sys_time instant, const char* where);
  /// Whether @p t was queued by this pool (its owner is the pool or its
  /// wall-clock registry).
  bool owns(const task_base& t) const noexcept {
    const task_owner* const o = t.owner();
    return o == this || o == &wall_;
  }

  /// Queues executor work due now (in the queue's ready lane); from STOP on
  /// it is cancelled (destroyed without being invoked), never handed to the
  /// rejection policy.
  void submit_from_executor(const task_ptr& t);
  /// Whether functions posted through the executor may skip the task
  /// machinery: no before/after hook and no task decorator is configured
  /// (those must see every function the pool runs).
  bool runs_plain_functions() const noexcept {
    return !options_.before_execute && !options_.after_execute && !options_.task_decorator;
  }
  /// Queues a posted function in the queue's function lane; from STOP on it
  /// is destroyed unrun (Asio's rule), like submit_from_executor()'s work.
  void submit_function(queued_function* f);
  /// Queues internal work (a timer wake-up) at the deadline it already has, with
  /// the same shutdown handling as executor work; @p due_now puts it in the
  /// ready lane (its deadline must then be the submit's clock reading).
  void submit_internal(const task_ptr& t, bool due_now = false);
  /// Outstanding tracked executor work: after shutdown() it holds off
  /// termination until released.
  void work_started() noexcept { outstanding_work_.fetch_add(1); }
  void work_finished() noexcept;

  void shutdown();
  std::vector<task_ptr> shutdown_now();
  /// The destructor's path: shutdown_now(), then join every thread (or, from
  /// a pool thread, detach them all; see the class comment).
  void close();
  run_state state() const noexcept { return state_.load(); }
  bool wait_for_termination_until(time_point limit);
  /// shutdown(), then wait for termination and join the threads.
  void join();
  /// Links @p op to complete when the pool terminates or (quiet) is quiet
  /// before op->horizon (see detail/pool/pool_wait_op.hpp); completes it from
  /// this call when that holds already.
  void start_pool_wait(pool_wait_kind kind, pool_wait_op* op) noexcept;
  /// Completes the pending wait keyed @p key as aborted.
  void cancel_pool_wait(const void* key) noexcept;
  /// Blocks until the pool is quiet before @p horizon (nothing running,
  /// nothing queued due before it) or until @p limit; true when quiet.
  bool wait_until_quiet(time_point horizon, time_point limit);

  bool remove(task_base& t);
  std::size_t purge();

  void set_core_pool_size(std::size_t n);
  std::size_t core_pool_size() const noexcept { return core_size_.load(); }
  bool prestart_core_thread();
  std::size_t prestart_core_threads();
  void allow_core_thread_timeout(bool allow);
  bool allows_core_thread_timeout() const noexcept { return allow_core_timeout_.load(); }

  std::atomic<bool> continue_periodic_after_shutdown;
  std::atomic<bool> execute_delayed_after_shutdown;
  std::atomic<bool> remove_on_cancel;
  std::atomic<rejection_policy> rejection;
  void set_rejection_handler(std::function<void(rejected_task&)> handler);
  bool has_rejection_handler() const;

  pool_stats stats() const;
  std::size_t pool_size() const;
  std::size_t largest_pool_size() const;
  /// Threads running a task now (Java's getActiveCount: a snapshot).
  std::size_t active_count() const noexcept;
  std::size_t queued_count() const { return queue_.size(); }
  /// The slack the pool's waits for deadlines have (pool_options::wakeup_slack):
  /// zero in precision mode and on a manual clock, where waits are exact.
  std::chrono::nanoseconds wake_slack() const noexcept {
    return options_.precision_spin_limit > std::chrono::nanoseconds::zero() || options_.use_manual_clock
               ? std::chrono::nanoseconds::zero()
               : options_.wakeup_slack;
  }
  /// Task runs and posted functions completed, by every thread ever.
  std::uint64_t completed_task_count() const noexcept;
  bool running_in_this_thread() const noexcept;

  // task_owner
  void on_cancelled(task_base& t) noexcept override;
  bool reschedule(task_base& t) override;
  bool withdraw(task_base& t) noexcept override;
  bool park(task_base& t, bool from_queue) noexcept override;
  void unpark(task_base& t) noexcept override;
  /// Cancels every paused task (shutdown() without periodic continuation,
  /// shutdown_now(), close()): none may outlive the pool.
  void cancel_parked() noexcept;
  void report_error(std::exception_ptr error, const task_base& t) noexcept override;
  /// Reports an error not tied to a queued task: @p source names where it
  /// came from, @p event is the log record's event name.
  void report_untied_error(std::exception_ptr error, const char* source, const char* event) noexcept;

 private:
  struct worker {
    pool_thread thread;
    std::size_t index = 0;
    bool exited = false;         // guarded by mutex_; set as the thread leaves
    std::mutex current_mutex;    // guards current
    task_base* current = nullptr;  // the task being run, for shutdown_now's stop requests
    // Items this thread took from the queue and finished (run, skipped,
    // re-queued). Written by this thread alone, a store and no
    // read-modify-write; read by quiet checks.
    std::atomic<std::uint64_t> finished{0};
    // Whether this thread runs a task now, and how many task runs and posted
    // functions it completed: written by this thread alone (stores, no
    // read-modify-write on a line the other threads write too), summed by
    // active_count() and completed_task_count().
    std::atomic<bool> active{false};
    std::atomic<std::uint64_t> completed{0};
    // How late this thread's task runs started and how long they ran;
    // recorded by this thread alone, merged by stats() and, once the
    // thread is reaped, into the pool's retired histograms.
    histogram_shard lateness;
    histogram_shard run_time;
  };

  /// Whether the pool is quiet: nothing taken from the queue is still being
  /// run (every item takers took is finished) and the earliest queued
  /// deadline, if any.
  struct quiet_snapshot {
    bool idle = false;
    std::optional<time_point> earliest;
    bool quiet_before(time_point horizon) const noexcept { return idle && (!earliest || *earliest >= horizon); }
  };
  /// mutex_ held.
  quiet_snapshot snapshot_locked() const;
  /// mutex_ held: wakes the blocking quiet waiters when the pool is idle and
  /// moves the async quiet waits whose horizon is met to @p ready.
  void collect_quiet_locked(pool_wait_op*& ready);
  /// Re-checks the quiet waiters (if any) after queued work was removed.
  void poke_quiet_waiters() noexcept;
  /// Completes @p list (newest first) oldest first.
  static void complete_pool_waits(pool_wait_op* list, const pool_wait_completion& how) noexcept;
  void update_quiet_watched_locked() noexcept {
    quiet_watched_.store(quiet_waiters_ != nullptr || quiet_sync_waiters_ != 0, std::memory_order_relaxed);
  }

  /// shutdown_now()'s work. Timer waits complete with operation_aborted when
  /// @p complete_waits, else (the pool is being destroyed) are discarded.
  std::vector<task_ptr> stop_all(bool complete_waits);
  /// Whether @p t may still run in the current state (the shutdown policies).
  /// Inline: every offer and every run asks.
  bool can_run_in_current_state(const task_base& t) const noexcept {
    switch (state_.load()) {
      case run_state::running: return true;
      case run_state::shutdown:
        if (t.is_periodic()) return continue_periodic_after_shutdown.load();
        // Tasks already due run even when delayed ones are dropped (as Java).
        return execute_delayed_after_shutdown.load() || t.deadline() <= now();
      default: return false;
    }
  }
  /// After an offer: take the task back if a shutdown raced it (withdrawn:
  /// the caller settles it and then calls try_terminate()), else make sure a
  /// thread will run it (kept).
  enum class offer_outcome { kept, withdrawn };
  offer_outcome settle_after_offer(const task_ptr& t);
  void reject(const task_ptr& t, const char* where, bool after_shutdown);
  /// Cancels rejected @p t, counted as a rejection and not as a cancellation.
  void drop_rejected(const task_ptr& t) noexcept;
  /// Counts a task cancelled before its run, unless it is being rejected.
  void count_cancelled() noexcept;
  /// A user's rejection handler's part of reject().
  void reject_to_handler(const std::function<void(rejected_task&)>& handler, const task_ptr& t, const char* where,
                         rejection_reason reason);
  void ensure_prestart();
  /// After @p t was queued: makes sure a thread will run it. When no thread
  /// can be started and none runs, takes @p t back out and rethrows (the
  /// caller settles it); while others run, reports the failure and keeps it.
  void ensure_thread_for(task_base& t);
  /// Starts a thread if fewer than @p limit are alive and the state allows.
  /// Throws what starting it threw (the thread factory's error).
  bool add_worker(std::size_t limit);
  /// Starts the thread of @p w (index set), with the thread factory or the
  /// default one. Called with mutex_ held. Throws when no thread runs the
  /// body; returns a failure to report when the factory failed after its
  /// thread had already started the body (null otherwise).
  std::exception_ptr start_thread(worker& w);
  void run_worker(worker& w);
  /// The next task or posted function; neither when the thread must retire.
  /// @p after_task: this thread's last item was a task (see try_take()).
  delayed_work_queue::wait_result get_work(bool after_task);
  void run_task(worker& w, const task_ptr& t);
  /// Runs @p f; counts it as completed by @p w (null: not a pool thread).
  void run_function(queued_function& f, worker* w) noexcept;
  void try_terminate();
  /// Joins and forgets threads that have exited (all threads with @p all,
  /// once the pool is terminated). Never called with mutex_ held.
  void reap_threads(bool all);

  const scheduled_thread_pool_options options_;
  // Before the queue: the queue and the registry read its time until they go.
  std::unique_ptr<pool_manual_clock> manual_clock_;
  delayed_work_queue queue_;
  // After queue_: destroyed first (it may hold a pass in the queue).
  wall_clock_tasks wall_{*this, queue_};

  std::atomic<run_state> state_{run_state::running};
  std::atomic<std::size_t> core_size_;
  std::atomic<bool> allow_core_timeout_;
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<std::uint64_t> completed_elsewhere_{0};  // functions run by a thread not the pool's
  std::atomic<std::size_t> outstanding_work_{0};
  std::atomic<std::size_t> live_{0};  // threads in their work loop; written under mutex_
  std::size_t exiting_ = 0;           // threads past their loop, still in exit hooks; guarded by mutex_

  mutable std::mutex mutex_;  // guards workers_, largest_, next_index_, state transitions
  std::condition_variable termination_cv_;
  std::list<worker> workers_;
  mutable std::mutex handler_mutex_;  // guards rejection_handler_
  std::shared_ptr<const std::function<void(rejected_task&)>> rejection_handler_;
  std::size_t largest_ = 0;
  std::size_t next_index_ = 0;
  pool_wait_op* termination_waiters_ = nullptr;  // newest first; guarded by mutex_
  pool_wait_op* quiet_waiters_ = nullptr;        // newest first; guarded by mutex_
  std::size_t quiet_sync_waiters_ = 0;           // guarded by mutex_
  std::uint64_t retired_finished_ = 0;           // finished counts of reaped threads; guarded by mutex_
  std::uint64_t retired_completed_ = 0;          // completed counts of reaped threads; guarded by mutex_
  latency_histogram retired_lateness_;  // lateness of reaped threads' runs; guarded by mutex_
  latency_histogram retired_run_time_;  // run time of reaped threads' runs; guarded by mutex_
  std::atomic<std::uint64_t> failed_{0};     // task runs that threw
  std::atomic<std::uint64_t> rejected_{0};   // tasks and functions refused
  std::atomic<std::uint64_t> cancelled_{0};  // tasks cancelled before their run
  std::condition_variable quiet_cv_;
  // Whether anyone waits for quiet: written under mutex_, read without it by
  // the paths that remove queued work (after their removal, which the
  // queue's lock orders against a waiter's check).
  std::atomic<bool> quiet_watched_{false};
  // Paused periodic tasks (see park()): few, rarely changed, so a vector.
  std::mutex parked_mutex_;
  std::vector<task_ptr> parked_;  // guarded by parked_mutex_
};

}  // namespace chronopool::detail

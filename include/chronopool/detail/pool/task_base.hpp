// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The non-template part of a scheduled task: heap key and slot, schedule,
// and the status machine that makes every task end exactly once.
//
// Status transitions (all by compare-and-swap on one atomic):
//
//   pending ──try_start──▶ running ──finish_run──▶ succeeded | failed
//      │  ▲                   │  └── periodic ──▶ pending (re-queued)
//      │  └───────────────────┘
//      └──────cancel──────▶ cancelled ◀──cancel── running (result discarded)
//
// Periodic tasks also have `paused` (neither queued nor running):
//
//   pending ──pause (taken out of the queue)──▶ paused ──resume──▶ pending
//   running ──finish_run (a pause was asked)──▶ paused
//   paused ──cancel──▶ cancelled      paused ──resume (past `until`)──▶ succeeded
//
// The controls (pause, resume, rebase, trigger_now) and a periodic run's
// re-arming in finish_run() hold the task's control lock (striped, like the
// waiters'), so a control call sees a task either queued, running, or
// paused, never halfway through being re-queued; the one-shot path never
// takes it. A pending task a worker has already taken from the queue but
// not yet started counts as running for the controls.
//
// Whoever moves a task out of `pending` into a done state releases the
// callable; a running task's is released by its runner. Waiters use a
// striped lock shared by all tasks, so a task carries no mutex of its own.
//
// A periodic task's schedule (period, ideal instant, jitter, leeway, the
// controls' requests, the end conditions) is a periodic_task_state in the
// periodic task's own allocation, reached through periodic_, which is null
// for a one-shot task: a one-shot task carries none of it.
#pragma once

#include <chronopool/detail/pool/periodic_task_state.hpp>
#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/periodic_options.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <stop_token>

namespace chronopool::detail {

enum class task_kind : std::uint8_t { one_shot, fixed_rate, fixed_delay };

// Order matters: done() is `>= succeeded`.
enum class task_status : std::uint8_t { pending, running, paused, succeeded, failed, cancelled };

class task_base;

/// A pending async_wait on a task's completion (the typed part is
/// impl/scheduled_future.hpp's future_wait_op): a small intrusive operation
/// without virtual functions, linked into its task's list of async waiters
/// under the task's waiter-stripe lock. It leaves the list exactly once:
/// taken by the task's completion, or by a cancellation of the wait.
class async_wait_op {
 public:
  /// Completes the wait: @p owner is the task, @p aborted tells that the wait
  /// itself was cancelled (the task is untouched). With a null @p owner the
  /// operation is destroyed without completing.
  using func_type = void (*)(task_base* owner, async_wait_op* op, bool aborted);

  /// The address of the cancellation-slot handler that may cancel this wait
  /// (null without one); cancel_async_wait() finds the wait by it.
  const void* cancel_key = nullptr;

 protected:
  explicit async_wait_op(func_type f) noexcept : func_(f) {}
  ~async_wait_op() = default;

 private:
  friend class task_base;
  func_type func_;
  async_wait_op* next_ = nullptr;
};

/// What a task needs from the executor that owns it. Implemented by the pool.
class task_owner {
 public:
  /// A queued task was cancelled: take it out of the queue if configured to.
  virtual void on_cancelled(task_base& t) noexcept = 0;
  /// A periodic run finished and the next deadline is set: queue it again.
  /// Returns false when the owner no longer runs it (the task is then cancelled).
  virtual bool reschedule(task_base& t) = 0;
  /// An error that nobody will read from a future.
  virtual void report_error(std::exception_ptr error, const task_base& t) noexcept = 0;
  /// Takes a queued task out of the queue without ending it (a reschedule
  /// or trigger moves it); false when it is not queued here. By default
  /// nothing is ever withdrawn, and the controls wait for the task's run.
  virtual bool withdraw(task_base& t) noexcept {
    (void)t;
    return false;
  }
  /// Keeps a task that is about to be paused (taken out of the queue first
  /// when @p from_queue), so that a shutdown can end it: a paused task is in
  /// no queue, and must not outlive its owner. False when it may not be
  /// paused (the owner no longer runs it) or, with @p from_queue, is not
  /// queued here. By default nothing can be paused.
  virtual bool park(task_base& t, bool from_queue) noexcept {
    (void)t;
    (void)from_queue;
    return false;
  }
  /// Forgets a parked task (resumed, or cancelled while paused).
  virtual void unpark(task_base& t) noexcept { (void)t; }

  /// The manual clock's time this owner's tasks run on, or null: the real
  /// clocks (every owner in production). Set before the first task.
  const manual_time* manual_time_of() const noexcept { return manual_time_; }

 protected:
  ~task_owner() = default;
  /// Puts the owner's tasks on @p m (see manual_time_of()).
  void set_manual_time(const manual_time* m) noexcept { manual_time_ = m; }

 private:
  const manual_time* manual_time_ = nullptr;
};

class task_base : public index_node {
 public:
  explicit task_base(task_kind kind) noexcept : kind_(kind) {}
  task_base(const task_base&) = delete;
  task_base& operator=(const task_base&) = delete;
  virtual ~task_base() {
    // A pending async wait holds a reference to its task, so none is left
    // here; should one be, it is destroyed without being completed.
    if (async_waiters_ != nullptr) [[unlikely]]
      destroy_async_waiters();
  }

  // The heap key (deadline, sequence) and slot are index_node's: a queued
  // task's key is read by the queue under its mutex.

  // ---- schedule ----------------------------------------------------------
  task_kind kind() const noexcept { return kind_; }
  bool is_periodic() const noexcept { return kind_ != task_kind::one_shot; }
  /// Sets a periodic schedule; @p first is the ideal deadline of the first run.
  /// Throws std::invalid_argument for a max_runs of 0 or an `until` not
  /// after @p first (see validate_periodic_end()). Only for a periodic task
  /// (made with a periodic kind, so that it has its periodic_task_state).
  void set_periodic(duration period, time_point first, const periodic_options& opts);
  /// The period (fixed delay: the delay); zero for a one-shot task.
  duration period() const noexcept {
    return periodic_ != nullptr ? periodic_->period.load(std::memory_order_relaxed) : duration::zero();
  }
  /// The periodic_options::leeway it was scheduled with; zero for a one-shot task.
  duration leeway() const noexcept { return periodic_ != nullptr ? periodic_->leeway : duration::zero(); }
  /// Internal work (a timer service's wake-up), as opposed to a user's task:
  /// never handed back by shutdown_now(); cancelling it aborts the timer
  /// waits it would have woken instead.
  void set_internal(bool v) noexcept { internal_ = v; }
  bool is_internal() const noexcept { return internal_; }
  /// A calendar task (schedule_cron): its callable sets every next deadline
  /// (set_periodic during its run), so the controls, which would re-base or
  /// add runs behind its back, are no-ops returning false. Periodic tasks only.
  void set_calendar() noexcept { periodic_->calendar = true; }
  /// Fire-and-forget work (execute): errors go to the owner's error handler.
  void set_reports_errors(bool v) noexcept { reports_errors_ = v; }
  bool reports_errors() const noexcept { return reports_errors_; }

  // ---- owner ---------------------------------------------------------------
  void set_owner(task_owner* o) noexcept { owner_.store(o, std::memory_order_release); }
  task_owner* owner() const noexcept { return owner_.load(std::memory_order_acquire); }

  // ---- time: the owner's clocks (the seam, see detail/time/manual_time.hpp) --
  // While no manual clock exists in the process, one relaxed load and a
  // branch never taken; the owner is read only when one exists. A task
  // without an owner (run by hand after shutdown_now()) reads the real clocks.

  /// The steady time the task's owner runs on.
  time_point now() const noexcept {
    if (!any_manual_clock()) [[likely]]
      return clock::now();
    const manual_time* m = owner_time();
    return m != nullptr ? m->now() : clock::now();
  }
  /// The system time the task's owner runs on.
  sys_time system_now() const noexcept {
    if (!any_manual_clock()) [[likely]]
      return detail::system_now();
    const manual_time* m = owner_time();
    return m != nullptr ? m->system_now() : detail::system_now();
  }
  /// The steady deadline standing for @p instant on the owner's clocks.
  time_point steady_deadline_for(sys_time instant) const noexcept {
    const manual_time* m = any_manual_clock() ? owner_time() : nullptr;
    if (m == nullptr) [[likely]]
      return detail::steady_deadline_for(instant);
    return m->steady_deadline_for(instant);
  }

  // ---- status --------------------------------------------------------------
  // Status operations are seq_cst: the has_waiters_ handshake with waiters is a
  // store-then-load pattern on two variables, which acquire/release cannot order.
  task_status status() const noexcept { return status_.load(); }
  bool done() const noexcept { return status() >= task_status::succeeded; }
  bool cancelled() const noexcept { return status() == task_status::cancelled; }

  /// The task pushed before this one onto a delayed work queue's inbox
  /// (delayed_work_queue::offer_submitted), kept in heap_index, which no
  /// index reads while the task is in the inbox (it is in none): written by
  /// the submitter before the push, read and reset to not_queued by the
  /// drain under the queue's lock. A task stays within its size this way.
  task_base* inbox_next() const noexcept { return reinterpret_cast<task_base*>(heap_index); }
  void set_inbox_next(task_base* t) noexcept { heap_index = reinterpret_cast<std::size_t>(t); }

  /// pending → running. False when the task was cancelled (or already runs).
  bool try_start() noexcept;

  /// Runs the callable once on the current thread and stores its result.
  /// Throws whatever the callable throws. Call only after try_start().
  void invoke() { do_invoke(); }

  /// Runs the task once on this thread if it is still pending (try_start,
  /// invoke, finish_run) and returns what the run threw. Does nothing and
  /// returns null when the task was cancelled or already started.
  std::exception_ptr run_here() noexcept;

  /// Completes a run that try_start() began: @p error is what the run threw
  /// (null on success), @p started when it began. One-shot tasks become done;
  /// periodic ones compute their next deadline and ask the owner to re-queue
  /// them, or become done when the error stops them.
  void finish_run(std::exception_ptr error, time_point started) noexcept;

  /// Java's Future.cancel: true when the task was not yet done. A pending task
  /// never runs; a running one finishes but its result is discarded, and with
  /// @p may_interrupt its std::stop_token is asked to stop. Internal work (a
  /// timer wake-up) that is already running cannot be cancelled: it is
  /// completing the waits that came due.
  bool cancel(bool may_interrupt) noexcept;

  /// Called by a periodic run that returned periodic_control::stop: the
  /// run ends the schedule and the task succeeds. Only the running thread
  /// writes and reads it. Periodic tasks only.
  void end_schedule_after_run() noexcept { periodic_->ends_schedule = true; }

  // ---- control of a periodic schedule (scheduled_future<void>) -------------
  // Each returns true when it changed something, false (a no-op) for a
  // one-shot, calendar or done task and as documented on
  // scheduled_future<void>.

  /// Queued: taken out of the queue, now paused. Running (or taken by a
  /// worker): paused when the run ends. False when paused or pausing already.
  bool pause() noexcept;
  /// Paused: queued again at its next ideal instant (an instant missed while
  /// paused runs at once, then the missed-tick policy places the next), or
  /// succeeded when that instant is at or after `until`. Pausing (the run
  /// has not ended): the pause is withdrawn. False otherwise.
  bool resume() noexcept;
  /// Whether the task is paused (a pause asked during a run counts once the
  /// run ended).
  bool paused() const noexcept { return status() == task_status::paused; }
  /// Re-bases the schedule: the next ideal instant becomes @p next, and the
  /// period @p period unless it is zero. Queued: moved under the queue's
  /// lock; running: applied when the run ends; paused: applied on resume.
  bool rebase(duration period, time_point next) noexcept;
  /// One extra run as soon as possible, never overlapping: queued, it is
  /// moved to now; running, it runs again right after. A fixed-rate grid is
  /// not shifted. False when paused or pausing, or when an extra run is
  /// already pending (they do not accumulate).
  bool trigger_now() noexcept;
  /// Whether @p now is at or after the schedule's `until` (never when none).
  /// Periodic tasks only.
  bool past_end(time_point now) const noexcept { return periodic_->has_until && now >= periodic_->until; }

  /// Asks a running callable that takes a std::stop_token to stop.
  void request_stop() noexcept { stop_.request_stop(); }

  /// The stored exception of a failed task.
  std::exception_ptr error() const noexcept { return error_; }

  /// Blocks until done (or until @p limit); true when done.
  bool wait_until(time_point limit) const;
  void wait() const { wait_until(time_point::max()); }

  /// Starts an asynchronous wait for this task to be done: @p op completes
  /// (not aborted) once it is, from the thread that finishes or cancels it,
  /// or at once from this call when it is done already. The operation must
  /// hold a reference to the task until it completes.
  void start_async_wait(async_wait_op* op) noexcept;
  /// Cancels the pending async wait whose cancel_key is @p key: it completes
  /// aborted, from this call. Nothing happens when no such wait is pending
  /// (it completed, or was never linked).
  void cancel_async_wait(const void* key) noexcept;

  // ---- reference count (see task_ptr) --------------------------------------
  /// True when the caller's reference is the only one: no other handle,
  /// queue or worker holds the task, and none can appear (only a holder can
  /// make another).
  bool sole_owner() const noexcept { return refs_.load(std::memory_order_acquire) == 1; }
  friend void intrusive_add_ref(task_base* t) noexcept { t->refs_.fetch_add(1, std::memory_order_relaxed); }
  friend void intrusive_release(task_base* t) noexcept {
    if (t->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) t->destroy();
  }

 protected:
  virtual void do_invoke() = 0;
  /// Destroys the callable (and whatever it captured) now. Idempotent.
  virtual void release_callable() noexcept = 0;
  /// Destroys and deallocates this task with the allocator it was made with.
  virtual void destroy() noexcept = 0;
  /// cancel() won the race against every run: the task will never run. By
  /// default its callable is released; a timer wake-up aborts its shard's
  /// waits instead.
  virtual void on_cancel_before_run() noexcept { release_callable(); }

 public:
  /// Ends the task without running it and without any completion (its
  /// context is being destroyed). For user tasks this is cancel(false); a
  /// timer wake-up drops its shard's waits uncalled (Asio's rule).
  virtual void discard() noexcept { cancel(false); }

 protected:
  /// A periodic task's constructor hands over its schedule, which lives as
  /// long as the task (in the same allocation).
  void attach_periodic(periodic_task_state& s) noexcept { periodic_ = &s; }

  std::stop_source stop_{std::nostopstate};

 private:
  /// The owner's manual time, or null (no owner, or the real clocks).
  const manual_time* owner_time() const noexcept {
    const task_owner* o = owner();
    return o != nullptr ? o->manual_time_of() : nullptr;
  }
  bool complete(task_status final_status, std::exception_ptr error) noexcept;
  /// @p from (pending withdrawn from the queue, or paused) → succeeded: the
  /// schedule reached its `until`. Call under the control lock; the caller
  /// then calls finish_ended() outside it when this returned true.
  bool end_from(task_status from) noexcept;
  void finish_ended() noexcept;
  /// max_runs: counts this run of the periodic task @p p; true when it was
  /// the last one. Runner only.
  static bool count_run(periodic_task_state& p) noexcept { return p.max_runs != 0 && ++p.runs >= p.max_runs; }
  /// Queued again through @p o (false: the owner refused it). Under the
  /// control lock; the caller cancels the task outside it when refused.
  bool requeue(task_owner* o) noexcept;
  void destroy_async_waiters() noexcept;
  /// Wakes the blocked waiters and completes the async ones.
  void notify_waiters() noexcept;
  time_point next_deadline(periodic_task_state& p, time_point started, time_point finished) noexcept;

  task_kind kind_;
  bool reports_errors_ = false;
  bool internal_ = false;
  periodic_task_state* periodic_ = nullptr;  // null: one-shot (see the file comment)
  std::exception_ptr error_;
  std::atomic<task_owner*> owner_{nullptr};
  std::atomic<std::uint32_t> refs_{0};
  std::atomic<task_status> status_{task_status::pending};
  // Set, and never cleared, by the first blocking or async waiter: a task
  // nobody waited for completes without touching its stripe's lock.
  mutable std::atomic<bool> has_waiters_{false};
  async_wait_op* async_waiters_ = nullptr;  // newest first; guarded by the task's stripe mutex
};

}  // namespace chronopool::detail

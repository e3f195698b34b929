// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pool's tasks that wait for a system_clock instant, kept so that they
// follow steps of the wall clock.
//
// Such a task (schedule_at / execute_at with a system_clock time point, and
// every schedule_cron task) sits in the pool's delayed work queue at the
// steady deadline that stood for its instant when it was armed. This
// registry keeps its instant beside it, outside the task (a task_base stays
// the same size for every other task), and is the task's task_owner: the
// pool tells a wall-clock task from a steady one by its owner alone, one
// pointer compare. While the registry has tasks it listens to clock steps
// (detail/time/clock_steps.hpp):
//
//  * A step queues one pass (a function in the queue's function lane, run by
//    a pool thread; the watcher thread only flags and wakes). The pass takes
//    each registered task that is queued out of the queue, sets its deadline
//    to steady_deadline_for(instant) measured now, and queues it again: an
//    instant the step jumped over is due at once, later ones move with the
//    clock.
//  * Between a step and its pass a task may come due at a stale deadline: a
//    pool thread that takes a registered task asks hold_back() first, which
//    puts it back at the re-computed deadline when system_now() is still
//    before its instant. So a task never starts before its instant as the
//    clock read when it was taken.
//  * Whoever computes a deadline and then queues the task (submission,
//    hold_back, a periodic re-arm) notes the step count first and asks for
//    another pass when a step came in between: the pass that step queued
//    may have found the task out of the queue.
//
// Exactly one party holds a task out of the queue at a time (the queue's
// remove() and take are exclusive), so a pass and a taker never both re-queue
// it. A task leaves the registry when it ends: cancelled (on_cancelled),
// done after a run (after_run), rejected at submission (settle), or when the
// pool drains its queue (clear, at shutdown_now and destruction).
#pragma once

#include <chronopool/detail/pool/queued_function.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/detail/time/clock_steps.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>

namespace chronopool::detail {

class delayed_work_queue;

class wall_clock_tasks final : public task_owner, private clock_step_listener {
 public:
  /// A registry for the pool @p pool (the owner it forwards to) and its
  /// queue. Neither is used before the first add().
  wall_clock_tasks(task_owner& pool, delayed_work_queue& queue) noexcept;
  /// stop(), and takes a pass still queued back out of @p queue.
  ~wall_clock_tasks();
  wall_clock_tasks(const wall_clock_tasks&) = delete;
  wall_clock_tasks& operator=(const wall_clock_tasks&) = delete;

  /// Registers @p t, not yet queued, to run at @p instant, and sets its
  /// deadline to the steady deadline standing for it now. The caller queues
  /// it with this registry as its owner, then calls settle() with the value
  /// returned. The first registration subscribes to clock steps (unless
  /// stop() was called): throws what subscribe_clock_steps() throws, with
  /// nothing registered; std::bad_alloc.
  std::uint64_t add(const task_ptr& t, sys_time instant);
  /// After the submission of @p t returned: forgets it when it has ended
  /// (rejected, or already run), else queues a pass if a step came since
  /// @p stamp (add()'s value).
  void settle(const task_ptr& t, std::uint64_t stamp) noexcept;
  /// Forgets @p t (its submission threw).
  void forget(const task_base& t) noexcept;

  /// Asked by a pool thread that took @p t (owned by this registry) before
  /// it starts it. True when @p t is registered and system_now() is still
  /// before its instant: it was put back in the queue at the re-computed
  /// deadline (or cancelled, when the pool no longer runs it) and must not
  /// run now.
  bool hold_back(const task_ptr& t) noexcept;
  /// After a run of @p t: forgets it once it is done (a periodic one that
  /// goes on stays).
  void after_run(task_base& t) noexcept;
  /// A registered periodic task's next instant (a calendar task re-arming).
  void set_instant(const task_base& t, sys_time instant) noexcept;

  /// Forgets every task (the pool drained its queue: shutdown_now, destruction).
  void clear() noexcept;
  /// Unsubscribes from clock steps for good (the pool stopped or
  /// terminated). Tasks still registered are no longer moved by steps;
  /// hold_back() still guards them. Idempotent.
  void stop() noexcept;

  /// Tasks registered now.
  std::size_t size() const noexcept { return count_.load(); }

  /// Reads the pool's manual clock @p m instead of the real clocks, and
  /// follows its steps (on_manual_step) instead of the system clock's.
  /// Before the first add().
  void use_manual_time(const manual_time* m) noexcept { set_manual_time(m); }
  /// The manual clock's system time was stepped: a step, as on_clock_step.
  void on_manual_step() noexcept { on_clock_step(); }

  // task_owner: a registered task's calls, forwarded to the pool.
  /// Forgets @p t, then the pool's on_cancelled.
  void on_cancelled(task_base& t) noexcept override;
  /// A registered periodic task (a calendar one) re-arms: its deadline is
  /// re-computed from its instant, then the pool re-queues it.
  bool reschedule(task_base& t) override;
  /// The pool's report_error.
  void report_error(std::exception_ptr error, const task_base& t) noexcept override;

 private:
  struct entry {
    task_ptr task;  // a reference: the registry may meet the task out of the queue
    sys_time instant;
  };

  /// The pass queued in the pool's function lane. One node per registry,
  /// never freed by the queue: at most one pass is queued at a time.
  class pass_node final : public queued_function {
   public:
    explicit pass_node(wall_clock_tasks& r) noexcept : queued_function(&call), registry_(r) {}

   private:
    static void call(queued_function* f, bool run);
    wall_clock_tasks& registry_;
  };

  void on_clock_step() noexcept override;
  /// The system time and the steady deadline of @p instant on the pool's
  /// clocks (a manual clock's, or the library's).
  sys_time wall_now() const noexcept {
    const manual_time* m = manual_time_of();
    return m != nullptr ? m->system_now() : system_now();
  }
  time_point deadline_for(sys_time instant) const noexcept {
    const manual_time* m = manual_time_of();
    return m != nullptr ? m->steady_deadline_for(instant) : steady_deadline_for(instant);
  }
  /// Queues a pass unless one is queued already (or the queue is closed).
  void request_pass() noexcept;
  /// Queues a pass if a step came since @p stamp.
  void recheck(std::uint64_t stamp) noexcept;
  /// Re-computes and re-queues every registered task that is queued.
  void retime_all() noexcept;
  /// Re-queues @p t (out of the queue, its deadline set after @p stamp was
  /// read) through the pool; cancels it when the pool no longer runs it.
  void requeue(task_base& t, std::uint64_t stamp) noexcept;
  /// Takes @p t's entry out (the caller releases the reference, unlocked).
  task_ptr take_entry(const task_base& t) noexcept;

  task_owner& pool_;
  delayed_work_queue& queue_;
  mutable std::mutex mutex_;  // guards entries_
  std::map<const task_base*, entry> entries_;
  std::atomic<std::size_t> count_{0};          // entries_.size(), read by on_clock_step without the lock
  std::atomic<std::uint64_t> steps_{0};        // steps noticed
  std::atomic<bool> pass_queued_{false};       // pass_ is in the function lane
  pass_node pass_{*this};
  std::mutex subscription_mutex_;  // guards subscribed_ and stopped_; held across (un)subscribing
  bool subscribed_ = false;
  bool stopped_ = false;
};

/// A calendar task's next instant, told to the registry that owns @p t (if
/// any: not for a task run by hand, whose owner is null).
void note_wall_instant(const task_base& t, sys_time instant) noexcept;

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::pool_manual_clock — virtual time for testing a scheduled_thread_pool.
#pragma once

#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/time/saturating_time.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace chronopool {

class scheduled_thread_pool;

namespace detail {
class pool_core;
class timer_service_base;
}  // namespace detail

/// Virtual time for one scheduled_thread_pool, so that tests of delayed,
/// periodic and calendar work run at once and the same way every time. A
/// pool gets one when it is made with
/// scheduled_thread_pool_options::use_manual_clock; manual_clock_of(pool)
/// returns it. Production code is unchanged: schedule, schedule_at (steady
/// and system_clock instants), execute_after / execute_at, fixed-rate and
/// fixed-delay tasks and their controls, schedule_cron, the pool's now(),
/// scheduled_future::delay(), keep_alive, and the steady_timer,
/// system_timer, periodic_timer and sleeps on the pool's executor all read
/// this clock.
///
/// Time moves when the test says so (or, with auto-advance on, whenever
/// the pool is idle). The pool's threads run the work;
/// the calling thread moves the time one deadline at a time and waits,
/// at each, until the pool is quiet (nothing running, nothing due):
///
/// - advance(d) returns once every task due up to now() + d has run, in
///   deadline order (FIFO among equal deadlines), each seeing now() equal
///   to its own deadline: a 10 ms fixed-rate task advanced by 1 s runs 100
///   times. With one pool thread the order of runs is the same on every run
///   of the test.
/// - run_until_idle() auto-advances: while the pool is idle and its work
///   waits only on time, the time jumps to the next deadline (tokio's
///   rule); it returns when nothing is queued (a periodic schedule never
///   ends, so use advance() there).
/// - auto_advance(true) (or scheduled_thread_pool_options::
///   manual_clock_auto_advance) does the same without a driver: whenever
///   every pool thread waits for work and nothing is due, the thread that
///   went idle last moves the time to the earliest deadline queued and the
///   tasks due there run, each seeing now() at its deadline. A test then
///   only submits and waits (a future's get(), wait_for_termination()): a
///   task delayed by 10 minutes runs at once. Off by default, unlike
///   tokio's paused clock: the test's thread is outside the pool, which is
///   idle between the test's own steps and would run ahead of them. The
///   time never jumps while a task or posted function runs or is due.
///   Submissions from the test's thread race it: a pool idle between two
///   of them may jump in between. To queue a scenario in a set order,
///   submit it with auto-advance off and turn it on after, or submit it
///   from one task.
///   While advance(), run_for(), run_until_idle() or a wall step runs, that
///   call moves the time and auto-advance waits.
/// - set_system_time() and step_system_time() step the virtual system
///   clock: wall-clock tasks (schedule_at with a system_clock instant,
///   schedule_cron) and system timers on the pool follow the step as after
///   a real one, and those whose instant passed run.
///
/// The pool's own blocking waits with a timeout (wait_for_termination,
/// wait_until_quiet, scheduled_future::wait_for) keep real timeouts: they
/// bound how long the test's thread waits. A task must not block on
/// virtual time (a future of a later task, a timer's wait()): the clock's
/// driver waits for the task's run to end first.
///
/// @par Thread Safety
/// now() and system_now() from any thread. advance(), run_for(),
/// run_until_idle() and the wall steps from one thread at a time, never
/// from a pool thread (std::logic_error); tasks may be submitted and
/// controlled from any thread meanwhile. stall() from anywhere, a task
/// included.
class pool_manual_clock {
 public:
  using duration = std::chrono::steady_clock::duration;             ///< nanoseconds
  using time_point = std::chrono::steady_clock::time_point;         ///< steady_clock's time point
  using system_time_point = std::chrono::system_clock::time_point;  ///< system_clock's time point

  pool_manual_clock(const pool_manual_clock&) = delete;             ///< one per pool, owned by it
  pool_manual_clock& operator=(const pool_manual_clock&) = delete;  ///< one per pool, owned by it
  /// Destroyed with its pool.
  ~pool_manual_clock();

  /// The virtual steady time: what the pool's tasks and timers see as now.
  /// Starts at the real steady time of the pool's construction and only
  /// moves forward.
  time_point now() const noexcept { return time_.now(); }
  /// The virtual system time: the real system time of the pool's
  /// construction, moved by advance() and by the wall steps.
  system_time_point system_now() const noexcept { return time_.system_now(); }

  /// Runs what is due now, then moves the time forward by @p d, one
  /// deadline at a time, running the tasks due at each (and what they make
  /// due) before it moves on. Returns when all of them have run. Any unit,
  /// saturating; a negative @p d throws std::invalid_argument.
  template <class Rep, class Period>
  void advance(std::chrono::duration<Rep, Period> d) {
    drive(checked(d, "advance"), false, "advance");
  }
  /// advance(@p d), returning how many runs the pool completed meanwhile
  /// (each run of a periodic task and each posted function counts).
  template <class Rep, class Period>
  std::size_t run_for(std::chrono::duration<Rep, Period> d) {
    return drive(checked(d, "run_for"), false, "run_for");
  }
  /// Runs the pool with auto-advance until nothing is queued (a task
  /// waiting for "never" does not count); returns how many runs it
  /// completed. With a periodic task queued it does not return: use
  /// advance().
  std::size_t run_until_idle() { return drive(duration::max(), true, "run_until_idle"); }
  /// Moves the time forward by @p d and waits for nothing: a task that
  /// calls it takes @p d of virtual time (a long run), so the tasks due
  /// meanwhile run late, in deadline order. Any unit, saturating; a
  /// negative @p d throws std::invalid_argument.
  template <class Rep, class Period>
  void stall(std::chrono::duration<Rep, Period> d) {
    stall_by(checked(d, "stall"));
  }

  /// Turns auto-advance on or off (see the class comment); turned on, an
  /// idle pool jumps at once. Callable from any thread.
  void auto_advance(bool on) noexcept;
  /// Whether auto-advance is on.
  bool auto_advance() const noexcept { return auto_advance_.load(std::memory_order_acquire); }
  /// How many times auto-advance moved the time so far.
  std::uint64_t auto_advances() const;

  /// Steps the virtual system clock to @p t (back or forth), as NTP or
  /// `date -s` would, and waits until the pool has run what that made due.
  /// Returns how much completed_task_count() grew meanwhile (the pool's
  /// re-timing of its wall-clock tasks after the step counts as one). The
  /// steady time does not move.
  std::size_t set_system_time(system_time_point t);
  /// set_system_time(system_now() + @p step); any unit, saturating; either sign.
  template <class Rep, class Period>
  std::size_t step_system_time(std::chrono::duration<Rep, Period> step) {
    return step_by(detail::saturating_duration(step, "step_system_time step"));
  }

 private:
  friend class detail::pool_core;
  friend class scheduled_thread_pool;
  explicit pool_manual_clock(detail::pool_core& core) noexcept;

  template <class Rep, class Period>
  static duration checked(std::chrono::duration<Rep, Period> d, const char* what) {
    const duration n = detail::saturating_duration(d, what);
    if (n < duration::zero()) throw_negative(what, n);
    return n;
  }
  [[noreturn]] static void throw_negative(const char* what, duration d);
  /// Moves the time one deadline at a time up to now() + @p by
  /// (saturating), or, @p to_idle, while anything is queued; @p what names
  /// the call in errors.
  std::size_t drive(duration by, bool to_idle, const char* what);
  /// Waits until nothing runs and nothing is due by now().
  void settle();
  void stall_by(duration d) noexcept;
  std::size_t step_by(duration step);
  /// std::logic_error from a pool thread, naming @p what.
  void refuse_from_pool_thread(const char* what) const;

  detail::pool_core& core_;
  detail::timer_service_base* timers_ = nullptr;  // the pool's own timer service (its system timers follow steps)
  detail::manual_time time_;
  std::atomic<bool> auto_advance_{false};
};

/// The manual clock of @p pool; std::logic_error when @p pool runs on the
/// real clock (scheduled_thread_pool_options::use_manual_clock was not set).
pool_manual_clock& manual_clock_of(scheduled_thread_pool& pool);

/// Whether @p pool runs on a manual clock.
bool has_manual_clock(const scheduled_thread_pool& pool) noexcept;

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::scheduled_thread_pool — Java's ScheduledThreadPoolExecutor as an
/// Asio execution context.
#pragma once

#include <chronopool/detail/calendar/cron_run.hpp>
#include <chronopool/detail/pool/pool_limits.hpp>
#include <chronopool/detail/pool/queued_function.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/pool/task_impl.hpp>
#include <chronopool/detail/pool/pool_wait_op.hpp>
#include <chronopool/pending_task.hpp>
#include <chronopool/periodic_options.hpp>
#include <chronopool/pool_options.hpp>
#include <chronopool/pool_stats.hpp>
#include <chronopool/run_state.hpp>
#include <chronopool/scheduled_future.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

namespace chronopool {

namespace detail {
class pool_core;
}
class pool_manual_clock;

/// A pool of threads that runs one-shot and periodic tasks at their deadlines.
///
/// All work, including execute()/submit(), goes through one delayed work queue
/// ordered by (deadline, submission sequence); idle threads wait
/// leader/follower so only one sleeps on the head's deadline.
///
/// @par Thread Safety
/// Every member may be called from any thread, concurrently. Blocking waits
/// for termination (join(), wait_for_termination() with a non-zero timeout)
/// from one of the pool's own threads throw std::system_error with
/// std::errc::resource_deadlock_would_occur instead of deadlocking.
///
/// @par Threads
/// Threads start on demand (or by prestart) through the thread factory of
/// the options. When one cannot start, no task is lost: while other pool
/// threads run, the task waits for them and the error goes to the error
/// handler; when none runs, the submitting call throws the error and its
/// task is not queued.
///
/// @par Destruction
/// The destructor is the RAII-safe path: it acts as shutdown_now() (cancels
/// every queued task, asks running ones to stop through their stop tokens),
/// then joins the threads. It never waits for a delayed task's deadline.
/// join() is the graceful path.
class scheduled_thread_pool : public asio_ns::execution_context {
 public:
  using clock = std::chrono::steady_clock;  ///< the clock deadlines are kept in
  using duration = clock::duration;         ///< clock's duration
  using time_point = clock::time_point;     ///< clock's time point

  template <class Allocator, unsigned int Bits>
  class basic_executor_type;
  /// The pool's Asio executor (see impl/pool_executor.hpp).
  using executor_type = basic_executor_type<std::allocator<void>, 0>;

  /// The largest core pool size accepted.
  static constexpr std::size_t max_core_pool_size = detail::max_pool_threads;

  /// A pool with @p core_pool_size threads and default options.
  explicit scheduled_thread_pool(std::size_t core_pool_size);
  /// A pool configured by @p options. Throws std::invalid_argument when
  /// core_pool_size exceeds max_core_pool_size, keep_alive is not positive
  /// or precision_spin_limit is negative. No thread starts before work
  /// arrives (or a prestart call).
  explicit scheduled_thread_pool(scheduled_thread_pool_options options);
  /// Acts as shutdown_now(), then joins the threads (see the class).
  ~scheduled_thread_pool();

  scheduled_thread_pool(const scheduled_thread_pool&) = delete;             ///< not copyable
  scheduled_thread_pool& operator=(const scheduled_thread_pool&) = delete;  ///< not copyable

  /// An executor for this pool: post, dispatch, defer, co_spawn, strands and
  /// use_future work on it, as on asio::thread_pool.
  executor_type get_executor() noexcept;

  /// The time the pool's deadlines are measured on: steady_clock::now(), or
  /// the virtual time of the pool's manual clock
  /// (scheduled_thread_pool_options::use_manual_clock).
  time_point now() const noexcept {
    if (!detail::any_manual_clock()) [[likely]]
      return clock::now();
    return manual_ != nullptr ? manual_->now() : clock::now();
  }
  /// The system time the pool's wall-clock and calendar tasks follow:
  /// system_clock::now(), or the manual clock's virtual system time.
  std::chrono::system_clock::time_point system_now() const noexcept {
    if (!detail::any_manual_clock()) [[likely]]
      return detail::system_now();
    return manual_ != nullptr ? manual_->system_now() : detail::system_now();
  }

  // ---- submission ------------------------------------------------------------
  // Every callable may take a std::stop_token as its only parameter; it then
  // receives the task's token (requested by cancel(true) and shutdown_now()).
  // An empty callable throws std::invalid_argument. A rejected task is
  // handled by the rejection handler if one is set, else by the rejection
  // policy (abort throws rejected_execution, whose reason() says why). With
  // no pool thread running and none able to start, a call throws what the
  // thread start threw (see the class comment).

  /// Runs @p f as soon as possible, fire-and-forget: an exception it throws
  /// goes to the error handler.
  template <class F>
    requires detail::task_callable<F>
  void execute(F&& f);

  /// Runs @p f once after @p delay, fire-and-forget: the cheapest delayed
  /// work (no future; the queue holds the only reference). An exception it
  /// throws goes to the error handler. Delays saturate as schedule()'s do
  /// (negative means now, hours::max() means never). Work with equal
  /// deadlines runs in submission order.
  template <class Rep, class Period, class F>
    requires detail::task_callable<F>
  void execute_after(std::chrono::duration<Rep, Period> delay, F&& f);

  /// Runs @p f once at @p deadline, fire-and-forget (see execute_after).
  /// Clocks as for schedule_at(): a system_clock time point follows steps
  /// of the wall clock, other clocks than steady_clock are converted once,
  /// at submission.
  template <class Clock, class Duration, class F>
    requires detail::task_callable<F>
  void execute_at(std::chrono::time_point<Clock, Duration> deadline, F&& f);

  /// Runs @p f as soon as possible; the future receives its result or exception.
  template <class F>
    requires detail::task_callable<F>
  auto submit(F&& f) -> scheduled_future<detail::callable_result_t<F>>;

  /// Runs @p f once after @p delay (any unit; negative means now, a delay too
  /// large to represent, e.g. hours::max(), means never).
  template <class Rep, class Period, class F>
    requires detail::task_callable<F>
  auto schedule(std::chrono::duration<Rep, Period> delay, F&& f) -> scheduled_future<detail::callable_result_t<F>>;

  /// Runs @p f once at @p deadline.
  ///
  /// A std::chrono::system_clock time point follows the wall clock: the
  /// task waits for the steady deadline that stands for it, and when the
  /// system clock is stepped (an NTP step, a manual change, a resume from
  /// suspend) the pool re-computes that deadline: a task whose instant the
  /// step jumped over runs at once, a later one moves with the clock. It
  /// never starts before @p deadline as the system clock reads when a pool
  /// thread takes it. The first such task starts the process's one
  /// clock-step watcher thread (std::system_error when it cannot). A
  /// steady_clock time point is the deadline itself. Time points of other
  /// clocks are converted once, at submission (their distance from their
  /// clock's now(), carried over to the steady clock), and do not follow
  /// later changes of their clock.
  template <class Clock, class Duration, class F>
    requires detail::task_callable<F>
  auto schedule_at(std::chrono::time_point<Clock, Duration> deadline, F&& f)
      -> scheduled_future<detail::callable_result_t<F>>;

  /// Runs @p f first after @p initial_delay, then every @p period measured
  /// from the previous ideal deadline (late runs catch up, see
  /// periodic_options::missed_ticks). Runs never overlap. @p period must be
  /// positive (std::invalid_argument otherwise). @p f returns void, or
  /// periodic_control to end its own schedule from inside a run (its future
  /// then completes normally).
  template <class Rep1, class Period1, class Rep2, class Period2, class F>
    requires detail::task_callable<F>
  scheduled_future<void> schedule_at_fixed_rate(std::chrono::duration<Rep1, Period1> initial_delay,
                                                std::chrono::duration<Rep2, Period2> period, F&& f,
                                                periodic_options options = {});

  /// Runs @p f first after @p initial_delay, then @p delay after the end of
  /// each run. @p delay must be positive. @p f returns void or periodic_control.
  template <class Rep1, class Period1, class Rep2, class Period2, class F>
    requires detail::task_callable<F>
  scheduled_future<void> schedule_with_fixed_delay(std::chrono::duration<Rep1, Period1> initial_delay,
                                                   std::chrono::duration<Rep2, Period2> delay, F&& f,
                                                   periodic_options options = {});

  /// Runs @p f first at the steady_clock instant @p first, then every
  /// @p period after it: the ideal deadlines are exactly first + k * period
  /// (not a delay re-measured from now). A @p first already past runs at
  /// once; periodic_options::missed_ticks then applies to that schedule.
  /// @p period must be positive (std::invalid_argument otherwise).
  ///
  /// The period is steady time and does not follow steps of the wall clock.
  /// To start at a system_clock instant, convert only that instant (its
  /// distance from system_clock::now(), added to steady_clock::now()); for a
  /// schedule on the calendar that follows the wall clock, use
  /// schedule_cron().
  template <class Duration, class Rep, class Period, class F>
    requires detail::task_callable<F>
  scheduled_future<void> schedule_at_fixed_rate(std::chrono::time_point<clock, Duration> first,
                                                std::chrono::duration<Rep, Period> period, F&& f,
                                                periodic_options options = {});

  /// Runs @p f first at the steady_clock instant @p first (at once when
  /// past), then @p delay after the end of each run. @p delay must be
  /// positive.
  template <class Duration, class Rep, class Period, class F>
    requires detail::task_callable<F>
  scheduled_future<void> schedule_with_fixed_delay(std::chrono::time_point<clock, Duration> first,
                                                   std::chrono::duration<Rep, Period> delay, F&& f,
                                                   periodic_options options = {});

  /// Runs @p f at each instant @p schedule names, from the first one after
  /// now, as a periodic task: the future completes only when it is
  /// cancelled, when @p f returns periodic_control::stop (normally), when a
  /// run throws (with the exception, unless
  /// periodic_options::continue_after_error) or at shutdown, as for
  /// schedule_at_fixed_rate. @p f is invocable with a cron_fire (the
  /// instant of the run) or with nothing, and returns void or
  /// periodic_control.
  ///
  /// Runs never overlap: the next instant is chosen when a run ends. When
  /// instants have passed by then (a long run, a suspend, a busy pool),
  /// @p misfire decides how many of them still run (once, by default); see
  /// cron_misfire. periodic_options::missed_ticks is not used; jitter and
  /// leeway must be 0 (std::invalid_argument), as must error_handler, and
  /// max_runs and until must be empty. The future's schedule controls
  /// (pause(), reschedule(), trigger_now(), ...) are no-ops returning false.
  ///
  /// Wall clock: each instant is turned into a steady deadline when its run
  /// is armed (steady now + (instant − system now)), and the task follows
  /// steps of the system clock as schedule_at()'s system_clock tasks do
  /// (a manual change, an NTP step, a resume; DST moves no instant): after a
  /// forward step over the next instant that run comes at once (the misfire
  /// rule then applies to the instants the step jumped over), after a
  /// backward step it moves with the clock. A run never starts before its
  /// instant by the system clock.
  ///
  /// Hooks, task_view and shutdown_now() see the task as a fixed-delay task
  /// whose period() is its wait before the next run. Run by hand after
  /// shutdown_now() (pending_task::run), it calls @p f once for the instant
  /// it was queued for, at once.
  template <class F>
    requires detail::cron_callable<F>
  scheduled_future<void> schedule_cron(const cron_schedule& schedule, F&& f, periodic_options options = {},
                                       cron_misfire misfire = {});

  /// schedule_cron with a cron_schedule(@p expression, @p time_zone): throws
  /// its std::invalid_argument for a bad expression or zone.
  template <class F>
    requires detail::cron_callable<F>
  scheduled_future<void> schedule_cron(std::string_view expression, std::string_view time_zone, F&& f,
                                       periodic_options options = {}, cron_misfire misfire = {});

  // ---- life cycle -------------------------------------------------------------

  /// Stops accepting work. Queued tasks follow the shutdown policies; running
  /// ones finish. Does not wait. Idempotent.
  void shutdown();

  /// Stops accepting work, runs nothing more, asks running tasks to stop, and
  /// returns the tasks that never started, in deadline order. Does not wait.
  std::vector<pending_task> shutdown_now();

  bool is_shutdown() const noexcept;     ///< state is past running
  bool is_terminating() const noexcept;  ///< shut down but not yet terminated
  bool is_terminated() const noexcept;   ///< state is terminated
  run_state state() const noexcept;      ///< the current run state

  /// Waits until terminated or @p timeout passes; true when terminated. A zero
  /// (or negative) timeout only answers, from any thread.
  template <class Rep, class Period>
  bool wait_for_termination(std::chrono::duration<Rep, Period> timeout) {
    return wait_for_termination_until(
        detail::deadline_after(clock::now(), detail::saturating_duration(timeout, "timeout")));
  }

  /// The graceful path: shutdown(), then wait until terminated (which, after
  /// shutdown(), also waits for outstanding tracked executor work, as
  /// asio::thread_pool::join() does).
  void join();

  /// Waits asynchronously until the pool has terminated; does not shut it
  /// down (see async_join()).
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  /// Success once the pool is TERMINATED; operation_aborted when the wait was
  /// cancelled.
  ///
  /// @par Where the Handler Runs
  /// On the handler's associated executor (this pool's executor when it has
  /// none), never inside the initiating call. A terminated pool runs nothing
  /// posted to it, so a handler whose executor belongs to this pool (its
  /// executor, a strand on it) runs directly on the thread that brought the
  /// pool to TERMINATED: a pool thread leaving, or the thread whose call
  /// (shutdown(), shutdown_now(), the destructor, ...) finished it; when the
  /// pool had terminated before the wait started, such a handler is posted
  /// to the system executor. Work is tracked on any other executor while the
  /// wait is pending; on this pool's it is not (it would hold off the
  /// termination waited for). A coroutine running on this pool holds the
  /// pool's work itself (co_spawn's), so it cannot await the pool's own
  /// termination short of shutdown_now().
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation complete the wait with
  /// operation_aborted; the pool is untouched.
  ///
  /// @par Thread Safety
  /// May be called from any thread, the pool's own included (it never blocks).
  template <asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
  auto async_wait_for_termination(CompletionToken&& token);

  /// The asynchronous join(): shutdown() when the operation is initiated
  /// (for a deferred token: when it is launched), then waits as
  /// async_wait_for_termination() does. Cancelling it cancels the wait, not
  /// the shutdown. Unlike join(), it may be called from a pool thread; it
  /// does not join the threads (the destructor does).
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  template <asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
  auto async_join(CompletionToken&& token);

  // ---- quiescence -----------------------------------------------------------------
  // The pool is *quiet before* a horizon when no task or posted function is
  // running on its threads and nothing is queued with a deadline before the
  // horizon: no task (one-shot or periodic), no function posted through the
  // executor (due at once), no timer wake-up of a timer on this pool. Work
  // due at or after the horizon (a periodic task's next run, a far delayed
  // task) does not count. A running task that queues due work keeps the pool
  // busy: the check sees the new work before the run counts as finished. A
  // cancelled task still queued (remove_on_cancel off) counts until it is
  // purged or its deadline comes. The pool is not shut down; it may become
  // busy again at once, through new submissions. Useful for tests and
  // graceful drains.

  /// Blocks until the pool is quiet before @p horizon (see above) or until
  /// @p timeout passes; true when it was quiet. @p timeout must be positive
  /// (std::invalid_argument otherwise). From one of the pool's own threads
  /// it throws std::system_error(resource_deadlock_would_occur): that thread
  /// keeps the pool busy. Time points of other clocks are converted once.
  template <class Clock, class Duration, class Rep, class Period>
  bool wait_until_quiet(std::chrono::time_point<Clock, Duration> horizon, std::chrono::duration<Rep, Period> timeout) {
    return wait_until_quiet_steady(to_steady(horizon, "horizon"), detail::saturating_duration(timeout, "timeout"));
  }

  /// Waits asynchronously until the pool is quiet before @p horizon (see
  /// above).
  ///
  /// @par Completion Signature
  /// @code void(sys_ns::error_code) @endcode
  /// Success once quiet (at once, through the handler's executor, when it is
  /// already; also once the pool has terminated); operation_aborted when the
  /// wait was cancelled.
  ///
  /// @par Where the Handler Runs
  /// As for async_wait_for_termination(): on the handler's associated
  /// executor (this pool's when it has none), never inside the initiating
  /// call. Completed from a pool thread that just went idle, or from the
  /// call that removed the last queued work before the horizon. A handler on
  /// this pool's executor runs as posted work there (making it busy again
  /// for its run); once the pool is stopped, on the terminating thread or the
  /// system executor.
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation complete it with
  /// operation_aborted.
  ///
  /// @par Thread Safety
  /// May be called from any thread, the pool's own included (it never blocks).
  template <class Clock, class Duration,
            asio_ns::completion_token_for<void(sys_ns::error_code)> CompletionToken>
  auto async_wait_quiet(std::chrono::time_point<Clock, Duration> horizon, CompletionToken&& token);

  // ---- queue control ------------------------------------------------------------

  /// Takes a queued task out of the queue and cancels its future. True if it
  /// was queued here.
  bool remove(const scheduled_future_base& handle);

  /// Drops cancelled tasks still queued (only possible with remove_on_cancel
  /// off). Returns how many.
  std::size_t purge();

  // ---- sizing and policies -------------------------------------------------------

  /// Throws std::invalid_argument above max_core_pool_size. Growing starts
  /// threads for queued work (a thread that cannot start throws its error;
  /// the new size stays); shrinking retires idle threads.
  void set_core_pool_size(std::size_t n);
  /// The core pool size set now.
  std::size_t core_pool_size() const noexcept;
  /// Starts one idle core thread if fewer than the core size run; true if
  /// started. A thread that cannot start throws its error.
  bool prestart_core_thread();
  /// Starts all missing core threads; returns how many were started.
  std::size_t prestart_core_threads();
  /// Sets scheduled_thread_pool_options::allow_core_thread_timeout; turning
  /// it on lets idle core threads retire after keep_alive from now on.
  void allow_core_thread_timeout(bool allow);
  /// Whether core threads retire when idle.
  bool allows_core_thread_timeout() const noexcept;

  /// Sets scheduled_thread_pool_options::continue_existing_periodic_tasks_after_shutdown.
  /// Turning it off after shutdown() cancels the periodic tasks still queued.
  void set_continue_existing_periodic_tasks_after_shutdown(bool v);
  /// Whether periodic tasks keep running after shutdown().
  bool continue_existing_periodic_tasks_after_shutdown() const noexcept;
  /// Sets scheduled_thread_pool_options::execute_existing_delayed_tasks_after_shutdown.
  /// Turning it off after shutdown() cancels the delayed tasks still queued.
  void set_execute_existing_delayed_tasks_after_shutdown(bool v);
  /// Whether queued delayed one-shot tasks still run after shutdown().
  bool execute_existing_delayed_tasks_after_shutdown() const noexcept;
  /// Sets scheduled_thread_pool_options::remove_on_cancel, for later cancels.
  void set_remove_on_cancel(bool v) noexcept;
  /// Whether cancel() takes a task out of the queue at once.
  bool remove_on_cancel() const noexcept;
  /// Sets the rejection policy, for later rejections.
  void set_rejection_policy(rejection_policy p) noexcept;
  /// The rejection policy (not applied while a rejection handler is set).
  rejection_policy get_rejection_policy() const noexcept;
  /// Replaces the rejection handler (see
  /// scheduled_thread_pool_options::rejection_handler); empty restores the
  /// rejection policy. A rejection already in its handler finishes with the
  /// handler it started with.
  void set_rejection_handler(std::function<void(rejected_task&)> handler);
  /// Whether a rejection handler is set.
  bool has_rejection_handler() const;

  // ---- introspection --------------------------------------------------------------
  // Each value is read at the call; the pool may have moved on by the return.

  /// All the counters below and the state, with the start lateness of recent runs.
  pool_stats stats() const;
  std::size_t pool_size() const;          ///< threads alive now
  std::size_t largest_pool_size() const;  ///< most threads ever alive at once
  std::size_t active_count() const noexcept;  ///< threads running a task now
  std::size_t queued_count() const;       ///< tasks in the queue, cancelled ones not yet purged included
  /// Runs completed + tasks running + tasks queued, as Java's getTaskCount().
  std::uint64_t task_count() const;
  /// Runs completed (each run of a periodic task counts).
  std::uint64_t completed_task_count() const noexcept;

  /// True on a thread of this pool.
  bool running_in_this_thread() const noexcept;

 private:
  friend class timer_service;
  friend pool_manual_clock& manual_clock_of(scheduled_thread_pool& pool);
  friend bool has_manual_clock(const scheduled_thread_pool& pool) noexcept;

  // For the executor: queue work due now; after shutdown it is destroyed
  // without being invoked (Asio's rule), not handed to the rejection policy.
  void submit_from_executor(const detail::task_ptr& t);
  // For the executor: posted functions skip the task machinery unless hooks
  // or a task decorator must see them.
  bool runs_plain_functions() const noexcept;
  void submit_function(detail::queued_function* f);
  void work_started() noexcept;
  void work_finished() noexcept;
  void report_executor_error(std::exception_ptr e) noexcept;

  /// Assigns a sequence number and queues @p t, applying the rejection policy.
  void enqueue(const detail::task_ptr& t, const char* where);
  /// enqueue() for a task that waits for the wall-clock @p instant and
  /// follows steps of the system clock (detail/pool/wall_clock_tasks.hpp).
  void enqueue_wall(const detail::task_ptr& t, detail::sys_time instant, const char* where);
  bool wait_for_termination_until(time_point limit);
  bool wait_until_quiet_steady(time_point horizon, duration timeout);
  /// A time point of any clock on the pool's steady time: another clock's is
  /// measured once, now, from the pool's now().
  template <class Clock, class Duration>
  time_point to_steady(std::chrono::time_point<Clock, Duration> t, const char* what) const {
    if constexpr (std::is_same_v<Clock, clock>) {
      return time_point(detail::saturating_duration(t.time_since_epoch(), what));
    } else {
      return detail::steady_deadline_of(t, what, now());
    }
  }

  template <class F>
  detail::task_ptr make_one_shot(F&& f, time_point deadline, const char* where);
  template <class Clock, class Duration>
  time_point steady_deadline(std::chrono::time_point<Clock, Duration> deadline) const;
  template <class Rep1, class Period1, class Rep2, class Period2, class F>
  scheduled_future<void> schedule_periodic(detail::task_kind kind, std::chrono::duration<Rep1, Period1> initial_delay,
                                           std::chrono::duration<Rep2, Period2> period, F&& f,
                                           const periodic_options& options, const char* where);
  static void check_periodic(duration period, const periodic_options& options, const char* where);
  template <class Rep, class Period, class F>
  scheduled_future<void> schedule_periodic_from(detail::task_kind kind, time_point first,
                                                std::chrono::duration<Rep, Period> period, F&& f,
                                                const periodic_options& options, const char* where);


  std::shared_ptr<detail::pool_core> core_;
  // The manual clock's time (use_manual_clock), or null: read by now().
  const detail::manual_time* manual_ = nullptr;
};

}  // namespace chronopool

#include <chronopool/impl/pool_executor.hpp>
#include <chronopool/impl/scheduled_thread_pool.hpp>
#include <chronopool/impl/scheduled_thread_pool_cron.hpp>

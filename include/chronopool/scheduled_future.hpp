// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// The handle to a scheduled task: Java's ScheduledFuture, C++-style.
#pragma once

#include <chronopool/detail/pool/future_wait_op.hpp>
#include <chronopool/detail/time/periodic_schedule.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/pool/task_impl.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/errors.hpp>
#include <chronopool/task_view.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <exception>
#include <future>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace chronopool {

class scheduled_thread_pool;

/// The non-template part of every scheduled_future<T>: cancel, status, delay
/// and waiting. Copies refer to the same task. Dropping a handle never
/// cancels its task.
class scheduled_future_base {
 public:
  /// The clock of delay() and of the task's deadlines.
  using clock = std::chrono::steady_clock;

  /// A handle to no task; valid() is false.
  scheduled_future_base() noexcept = default;

  /// Whether this handle refers to a task. The members that wait or read the
  /// result throw std::future_error(no_state) when it does not.
  bool valid() const noexcept { return static_cast<bool>(task_); }
  /// The task's identity, shared by its copies and its pending_task; the
  /// empty id when not valid().
  task_id id() const noexcept { return task_id(task_.get()); }

  /// Java's cancel(mayInterruptIfRunning). Returns true when the task was not
  /// yet done: it is then cancelled at once and waiters wake with
  /// task_cancelled. A queued task never runs (and, with remove_on_cancel, is
  /// taken out of the queue and its callable destroyed); a running one
  /// finishes, its result is discarded, and with @p may_interrupt its
  /// std::stop_token is asked to stop. Cancelling a periodic task stops all
  /// later runs. False when already done or for an invalid handle.
  bool cancel(bool may_interrupt = false) noexcept { return task_ && task_->cancel(may_interrupt); }

  /// Whether the task was cancelled (false for an invalid handle).
  bool cancelled() const noexcept { return task_ && task_->cancelled(); }
  /// Completed, failed or cancelled. A periodic task is done only once it is
  /// cancelled or stopped by an error.
  bool done() const noexcept { return task_ && task_->done(); }
  /// Whether the task runs at a fixed rate or with a fixed delay.
  bool is_periodic() const noexcept { return task_ && task_->is_periodic(); }

  /// Time left until the task's next deadline (negative when overdue;
  /// clock::duration::max() for "never"), on the pool's clock: a manual
  /// clock's virtual time on a pool that runs on one.
  clock::duration delay() const {
    check_valid();
    const auto d = task_->deadline();
    if (detail::is_never(d)) return clock::duration::max();
    return detail::saturating_difference(d, task_->now());
  }

  /// Blocks until done.
  void wait() const {
    check_valid();
    task_->wait();
  }

  /// Blocks until done or until @p timeout passes: ready or timeout (never
  /// deferred). Any duration type; a timeout too large to represent waits
  /// without limit. The timeout is the caller's real time, also on a pool
  /// that runs on a manual clock.
  template <class Rep, class Period>
  std::future_status wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return wait_until(detail::deadline_after(clock::now(), detail::saturating_duration(timeout, "timeout")));
  }

  /// Blocks until done or until @p limit: ready or timeout. Time points of
  /// clocks other than steady_clock are converted once, at the call.
  template <class Clock, class Duration>
  std::future_status wait_until(std::chrono::time_point<Clock, Duration> limit) const {
    check_valid();
    time_point_type steady_limit;
    if constexpr (std::is_same_v<Clock, clock>) {
      steady_limit = time_point_type(detail::saturating_duration(limit.time_since_epoch(), "time point"));
    } else {
      steady_limit = detail::steady_deadline_of(limit, "time point");
    }
    return task_->wait_until(steady_limit) ? std::future_status::ready : std::future_status::timeout;
  }

  /// Equal when both refer to the same task, or both to none.
  friend bool operator==(const scheduled_future_base& a, const scheduled_future_base& b) noexcept {
    return a.task_ == b.task_;
  }

 protected:
  /// clock's time point, for the derived futures.
  using time_point_type = clock::time_point;
  /// A handle sharing ownership of @p t, for the pool and the derived futures.
  explicit scheduled_future_base(detail::task_ptr t) noexcept : task_(std::move(t)) {}

  /// Throws std::future_error(no_state) when the handle refers to no task.
  void check_valid() const {
    if (!task_) throw std::future_error(std::future_errc::no_state);
  }

  /// Waits, then throws the task's error or task_cancelled if it did not succeed.
  void wait_and_check() const {
    wait();
    switch (task_->status()) {
      case detail::task_status::failed: std::rethrow_exception(task_->error());
      case detail::task_status::cancelled: throw task_cancelled();
      default: break;
    }
  }

  detail::task_ptr task_;  ///< the task, shared with its other handles (null: none)

  friend class scheduled_thread_pool;
  friend class pending_task;
};

/// Handle to a task producing T. get() blocks until the task is done and
/// returns its value, rethrows its exception, or throws task_cancelled.
/// Periodic tasks have T = void and are done only when cancelled or failed.
///
/// The value lives in the task, shared by every handle. It can be moved out
/// once, by take() or by get() on an rvalue handle; from then on every
/// get(), take() or async_wait() through any handle of the task throws (or
/// delivers) std::future_error(future_already_retrieved), never a moved-from
/// value.
template <class T>
class scheduled_future : public scheduled_future_base {
 public:
  using value_type = T;  ///< the task's result type
  /// A handle to no task; valid() is false.
  scheduled_future() noexcept = default;

  /// Blocks until done; a reference to the result stored in the task.
  ///
  /// The reference stays valid while any handle to the task exists (this
  /// one or a copy) and the value has not been taken. Binding it from a
  /// temporary handle is therefore safe only through the rvalue overload
  /// below, which returns the value: `const auto& v = pool.submit(f).get();`
  /// extends the returned value's life, not the task's.
  ///
  /// Throws the task's exception, task_cancelled, std::future_error
  /// (future_already_retrieved) after a take, or (no_state) for an invalid
  /// handle.
  const T& get() const& {
    wait_and_check();
    return result_storage().result();
  }

  /// Blocks until done and returns the result by value: moved out of the
  /// task when this is the task's last handle or T cannot be copied
  /// (a move-only result is thereby retrieved, see take()), otherwise
  /// copied, so that other handles still see it.
  T get() && {
    wait_and_check();
    return result_storage().release_or_copy();
  }

  /// Blocks until done and moves the result out of the task, once: a later
  /// get(), take() or async_wait() through any handle throws (delivers)
  /// std::future_error(future_already_retrieved). Of several handles taking
  /// concurrently exactly one gets the value. A take must not race with a
  /// get() reading the value through another handle (a data race on T).
  T take() {
    wait_and_check();
    return result_storage().take();
  }

  /// Waits asynchronously for the task to be done: Java's get() for
  /// coroutines and callbacks. `T v = co_await f.async_wait(use_awaitable);`
  /// returns the value or rethrows the task's exception. Any completion
  /// token works: a callback, use_future, deferred, use_awaitable.
  ///
  /// @par Completion Signature
  /// @code void(std::exception_ptr, T) @endcode
  /// As co_spawn's: null and the value when the task succeeded; the task's
  /// exception, task_cancelled, or operation_aborted (see below) and a
  /// value-initialised T otherwise (T must be default-constructible). The
  /// value is a copy of the result when T is copy-constructible; a move-only
  /// T is moved out of the task (as by take()), so that a second wait, get()
  /// or take() through any handle receives
  /// std::future_error(future_already_retrieved) as its exception.
  ///
  /// Throws std::future_error(no_state) from this call for a handle to no
  /// task (nothing is initiated then).
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation cancel the wait, not the task:
  /// the wait completes with an exception_ptr holding
  /// sys_ns::system_error(asio_ns::error::operation_aborted), and
  /// the task runs on as if nobody had waited. This makes
  /// `co_await (f.async_wait(use_awaitable) || timer.async_wait(use_awaitable))`
  /// a wait with a timeout. Cancelling the task (cancel()) completes the wait
  /// with task_cancelled instead.
  ///
  /// @par Thread Safety
  /// Any number of waits, on any handles of the task, may be started and
  /// cancelled from any threads. The wait completes on the handler's
  /// associated executor (the system executor when it has none), with
  /// outstanding work tracked on it while pending, and never inside this
  /// call: a wait on a task that is done already is posted. No thread blocks
  /// while it waits. The wait's memory comes from the handler's associated
  /// allocator and is freed before the handler runs. When that executor no
  /// longer runs work (its context stopped, e.g. a pool after
  /// shutdown_now()), the handler is destroyed without being called, as Asio
  /// does with work posted to a stopped context.
  template <asio_ns::completion_token_for<void(std::exception_ptr, T)> CompletionToken>
  auto async_wait(CompletionToken&& token) const {
    return detail::async_wait_on<T>(task_, std::forward<CompletionToken>(token));
  }

 private:
  friend class scheduled_thread_pool;
  explicit scheduled_future(detail::task_ptr t) noexcept : scheduled_future_base(std::move(t)) {}

  detail::task_with_result<T>& result_storage() const noexcept {
    return static_cast<detail::task_with_result<T>&>(*task_);
  }
};

/// Handle to a task with no result, and to every periodic task. get() blocks
/// until the task is done and rethrows its exception, or throws
/// task_cancelled.
template <>
class scheduled_future<void> : public scheduled_future_base {
 public:
  using value_type = void;  ///< no result
  /// A handle to no task; valid() is false.
  scheduled_future() noexcept = default;

  /// Blocks until done; throws the task's exception, task_cancelled, or
  /// std::future_error(no_state) for an invalid handle. On a periodic task
  /// it returns only after a cancel(), a stop by the task itself, or an error.
  void get() const { wait_and_check(); }

  /// Waits asynchronously for the task to be done: `co_await
  /// f.async_wait(use_awaitable);` returns when it succeeded and rethrows
  /// its exception (task_cancelled when cancelled) otherwise. A periodic
  /// task is done only when it is cancelled or stopped by an error.
  ///
  /// @par Completion Signature
  /// @code void(std::exception_ptr) @endcode
  /// As co_spawn's: null when the task succeeded; the task's exception,
  /// task_cancelled, or operation_aborted (see below) otherwise.
  ///
  /// Throws std::future_error(no_state) from this call for a handle to no
  /// task (nothing is initiated then).
  ///
  /// @par Per-Operation Cancellation
  /// terminal, partial and total cancellation cancel the wait, not the task:
  /// the wait completes with an exception_ptr holding
  /// sys_ns::system_error(asio_ns::error::operation_aborted), and
  /// the task runs on as if nobody had waited. This makes
  /// `co_await (f.async_wait(use_awaitable) || timer.async_wait(use_awaitable))`
  /// a wait with a timeout. Cancelling the task (cancel()) completes the wait
  /// with task_cancelled instead.
  ///
  /// @par Thread Safety
  /// Any number of waits, on any handles of the task, may be started and
  /// cancelled from any threads. The wait completes on the handler's
  /// associated executor (the system executor when it has none), with
  /// outstanding work tracked on it while pending, and never inside this
  /// call: a wait on a task that is done already is posted. No thread blocks
  /// while it waits. The wait's memory comes from the handler's associated
  /// allocator and is freed before the handler runs. When that executor no
  /// longer runs work (its context stopped, e.g. a pool after
  /// shutdown_now()), the handler is destroyed without being called, as Asio
  /// does with work posted to a stopped context.
  template <asio_ns::completion_token_for<void(std::exception_ptr)> CompletionToken>
  auto async_wait(CompletionToken&& token) const {
    return detail::async_wait_on<void>(task_, std::forward<CompletionToken>(token));
  }

  /// @name Control of a periodic schedule
  /// Thread-safe, from any thread, racing the task's runs: each call is
  /// decided once, under the task's control lock and (for a queued task)
  /// the queue's lock, so no run is lost or doubled and runs never overlap.
  /// The task keeps its identity (id()) and this future. Every control is a
  /// no-op returning false on a one-shot task, on a calendar task
  /// (schedule_cron), on a done task (cancelled,
  /// failed, or ended), on one handed back by shutdown_now() and for an
  /// invalid handle. A task a worker has
  /// already taken from the queue but not yet started counts as running.
  /// @{

  /// Pauses the schedule: a queued task leaves the queue at once; a running
  /// one finishes its run and is then not queued again. True when this call
  /// paused it (or will when the run ends); false when already paused or
  /// pausing. A pause drops a pending trigger_now() run. A paused task is in
  /// no queue and does not hold off termination. shutdown() cancels it
  /// unless continue_existing_periodic_tasks_after_shutdown is set (as it
  /// cancels queued periodic tasks); shutdown_now() and the pool's
  /// destruction cancel it (it is not handed back). Once the pool no longer
  /// runs periodic tasks a pause has no effect: the shutdown has cancelled
  /// the task (false) or is about to, and a pause asked during a run is
  /// ignored when the run ends (the task is then cancelled, not paused).
  bool pause() noexcept { return task_ && task_->pause(); }

  /// Resumes a paused schedule at its next ideal instant, unchanged by the
  /// pause. When the pause outlasted that instant the run comes at once and
  /// periodic_options::missed_ticks places the ones after it as for any late
  /// run: burst runs every missed instant back to back, skip goes on at the
  /// first ideal instant after the resumed run started, delay a period after
  /// it (fixed delay: at once, then the delay after each run). When that
  /// instant is at or after periodic_options::until the task ends instead
  /// (its future completes normally). Called while a pause waits for the
  /// current run to end, it withdraws the pause (true). False when the task
  /// is not paused (a documented no-op).
  bool resume() noexcept { return task_ && task_->resume(); }

  /// Whether the schedule is paused (a pause asked during a run counts once
  /// that run has ended).
  bool paused() const noexcept { return task_ && task_->paused(); }

  /// Changes the period (fixed delay: the delay) and re-bases the schedule:
  /// the next run is one new period from this call, then every new period
  /// (the old grid is dropped). Queued: moved at once; running: applies when
  /// the run ends (a run ending after the new instant is followed at once);
  /// paused: applies, and resume() starts from the new instant. Any
  /// duration type, converted with saturation. Throws
  /// std::invalid_argument when @p period is not positive or not above the
  /// task's leeway (checked first, even on a handle the call would ignore).
  template <class Rep, class Period>
  bool reschedule(std::chrono::duration<Rep, Period> period) {
    const auto p = detail::saturating_duration(period, "period");
    if (p <= clock::duration::zero())
      throw std::invalid_argument("chronopool: reschedule: period must be positive");
    if (!task_) return false;
    detail::validate_leeway(p, task_->leeway(), "reschedule");
    return task_->rebase(p, detail::saturating_add(task_->now(), p));
  }

  /// Re-bases the schedule on @p next, keeping the period: the next run's
  /// ideal instant is @p next (at once when past), then every period after
  /// it (fixed delay: the delay after each run). Applies as reschedule()
  /// does. Time points of other clocks are converted once, at the call.
  template <class Clock, class Duration>
  bool reschedule_next(std::chrono::time_point<Clock, Duration> next) {
    if (!task_) return false;
    time_point_type steady_next;
    if constexpr (std::is_same_v<Clock, clock>) {
      steady_next = time_point_type(detail::saturating_duration(next.time_since_epoch(), "time point"));
    } else if constexpr (std::is_same_v<Clock, std::chrono::system_clock>) {
      // On the pool's system clock (a manual clock's, on a pool that runs on one).
      const auto d = detail::saturating_duration(next.time_since_epoch(), "time point");
      steady_next = task_->steady_deadline_for(detail::sys_time(std::chrono::ceil<detail::sys_time::duration>(d)));
    } else {
      steady_next = detail::steady_deadline_of(next, "time point", task_->now());
    }
    return task_->rebase(clock::duration::zero(), steady_next);
  }

  /// One extra run as soon as possible, never overlapping another: a queued
  /// task runs now, a running one again right after its run. A fixed-rate
  /// grid is not shifted (the next scheduled run keeps its instant; when
  /// the extra run ends after it, that run follows at once); a fixed-delay
  /// task waits its delay after the extra run. The extra run counts toward
  /// periodic_options::max_runs. False (no-op) when the task is paused or
  /// pausing, or an extra run is already pending: they do not accumulate.
  bool trigger_now() noexcept { return task_ && task_->trigger_now(); }
  /// @}

 private:
  friend class scheduled_thread_pool;
  explicit scheduled_future(detail::task_ptr t) noexcept : scheduled_future_base(std::move(t)) {}
};

}  // namespace chronopool

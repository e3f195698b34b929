// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Periodic handlers on any executor: a server's io_context, a strand, a pool.
#pragma once

#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/detail/support/check_not_empty.hpp>
#include <chronopool/detail/support/histogram_recorder.hpp>
#include <chronopool/detail/time/periodic_schedule.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>
#include <chronopool/periodic_stats.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace chronopool {

namespace detail {

class periodic_state_base {
 public:
  virtual ~periodic_state_base() = default;

  /// Stops the schedule; true when it was still running.
  bool cancel() noexcept {
    const bool was_active = !stopped_.exchange(true);
    cancel_wait();
    return was_active;
  }
  bool active() const noexcept { return !stopped_.load(); }
  std::uint64_t ticks() const noexcept { return ticks_.load(); }
  /// The exception that stopped the schedule, once it has.
  std::exception_ptr error() const noexcept { return failed_.load() ? error_ : nullptr; }
  /// The runs so far: their count and the histograms they recorded.
  periodic_stats stats() const {
    periodic_stats s;
    s.runs = ticks();
    lateness_.add_to(s.lateness_histogram);
    run_time_.add_to(s.run_time_histogram);
    return s;
  }

  // Controls (periodic_handle): false when the schedule is stopped, and as
  // documented there. A schedule without them (a calendar schedule, which
  // has no period to re-base) keeps these defaults: every control is a
  // no-op returning false.
  virtual bool pause() noexcept { return false; }
  virtual bool resume() noexcept { return false; }
  virtual bool paused() const noexcept { return false; }
  /// The next ideal instant becomes @p next, and the period @p period unless zero.
  virtual bool rebase(duration period, time_point next) noexcept {
    (void)period;
    (void)next;
    return false;
  }
  virtual bool trigger_now() noexcept { return false; }
  /// The periodic_options::leeway the schedule started with.
  virtual duration leeway() const noexcept { return duration::zero(); }
  /// Now on the schedule's context: the steady clock, or its manual clock.
  virtual time_point schedule_now() noexcept { return clock::now(); }

 protected:
  /// Cancels the pending tick's wait, if any.
  virtual void cancel_wait() noexcept = 0;

  /// A run threw and the schedule stops: keep @p e for error(). Called at
  /// most once, on the executor; failed_ publishes it.
  void stop_with(std::exception_ptr e) noexcept {
    error_ = std::move(e);
    failed_.store(true);
    stopped_.store(true);
  }

  /// Counts a run that ended, by returning (@p stop: it returned
  /// periodic_control::stop) or by throwing @p error, which goes to
  /// @p o.error_handler and stops the schedule unless o.continue_after_error.
  /// The run that reaches @p o.max_runs also stops it. True when the
  /// schedule goes on.
  bool end_run(bool stop, std::exception_ptr error, const periodic_options& o) noexcept {
    // periodic_options::max_runs: the run that reaches it is the last one.
    const std::uint64_t ran = ticks_.fetch_add(1) + 1;
    if (o.max_runs && ran >= *o.max_runs) stop = true;
    if (error) {
      if (!o.continue_after_error) stop_with(error);
      report_periodic_error(o.error_handler, std::move(error));
    }
    if (stop) stopped_.store(true);
    return !stopped_.load();
  }

  /// Records a run that started @p lateness after its deadline and took
  /// @p run_time. Called by the run, before end_run(): runs never overlap,
  /// and each next run is armed after the one before ended (through the
  /// timer's lock), so the recorders have one writer at a time.
  void record_run(duration lateness, duration run_time) noexcept {
    lateness_.record_exclusive(lateness);
    run_time_.record_exclusive(run_time);
  }

  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> ticks_{0};

 private:
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  histogram_shard lateness_;
  histogram_shard run_time_;
};

/// A periodic callable returns void or periodic_control.
template <class Handler>
inline constexpr bool steers_its_schedule_v = std::is_same_v<std::invoke_result_t<Handler&>, periodic_control>;

/// What every schedule of handlers on an executor has: one timer wait at a
/// time on @p Executor's context, completing in Derived::on_tick; on the
/// steady clock, or on the system clock (a calendar schedule), whose waits
/// follow its steps.
template <class Derived, class Executor, class Clock = std::chrono::steady_clock>
class executor_schedule : public periodic_state_base, public std::enable_shared_from_this<Derived> {
 protected:
  explicit executor_schedule(const Executor& ex) : timer_(ex) {}

 public:
  /// Now on the timer's context (see timer_service_base::now): the executor
  /// is only looked at while a manual clock exists in the process.
  time_point schedule_now() noexcept final {
    if (!any_manual_clock()) [[likely]]
      return clock::now();
    return context_now(timer_.get_executor());
  }

 protected:

  /// Waits for @p deadline; Derived::on_tick gets the outcome with
  /// @p generation, which lets a schedule that re-arms tell a stale wait.
  void wait_until(typename Clock::time_point deadline, std::uint64_t generation = 0) {
    timer_.expires_at(deadline);
    auto self = this->shared_from_this();
    timer_.async_wait([self, generation](const sys_ns::error_code& ec) { self->on_tick(ec, generation); });
    // A cancel() that ran between on_tick's check and this wait found
    // nothing to cancel: cancel the wait it missed.
    if (stopped_.load()) timer_.cancel();
  }

  /// Cancels the pending tick's wait, if any; a wait that already
  /// completed is not recalled.
  void cancel_wait() noexcept final {
    try {
      timer_.cancel();
    } catch (...) {
      // Only a mutex that cannot be locked throws here; the tick still to
      // come then finds the schedule stopped (or a newer generation) and
      // does nothing.
    }
  }

  /// The system time on the timer's context: the library's, or its manual
  /// clock's (see context_system_now).
  sys_time schedule_system_now() noexcept { return context_system_now(timer_.get_executor()); }

 private:
  basic_scheduled_timer<Clock, asio_ns::wait_traits<Clock>, Executor> timer_;
};

template <class Executor, class Handler>
class periodic_state final : public executor_schedule<periodic_state<Executor, Handler>, Executor> {
  friend class executor_schedule<periodic_state, Executor>;
  using base = executor_schedule<periodic_state, Executor>;

 public:
  periodic_state(const Executor& ex, Handler h, bool fixed_rate, duration period, periodic_options o)
      : base(ex), handler_(std::move(h)), fixed_rate_(fixed_rate), period_(period), options_(std::move(o)) {}

  /// Waits for the instant @p ideal (plus jitter) on the executor's context.
  void arm(time_point ideal) {
    std::lock_guard lock(mutex_);
    arm_locked(ideal, run_deadline(ideal, period_, options_.jitter, options_.leeway));
  }

  bool pause() noexcept override {
    std::lock_guard lock(mutex_);
    if (this->stopped_.load() || paused_ || pause_requested_) return false;
    trigger_requested_ = false;  // a pause drops a pending extra run
    if (running_) {
      pause_requested_ = true;  // takes effect when the run ends
      return true;
    }
    paused_ = true;
    extra_ = false;
    ++generation_;  // the pending wait, even one already completing, runs nothing
    this->cancel_wait();
    return true;
  }

  bool resume() noexcept override {
    std::lock_guard lock(mutex_);
    if (this->stopped_.load()) return false;
    if (running_) return std::exchange(pause_requested_, false);
    if (!paused_) return false;
    paused_ = false;
    // The next ideal instant where the pause left it: a missed one runs at
    // once, and the missed-tick policy places the next, as after a late run.
    return try_arm(ideal_, run_deadline(ideal_, period_, options_.jitter, options_.leeway));
  }

  bool paused() const noexcept override {
    std::lock_guard lock(mutex_);
    return paused_ && !this->stopped_.load();
  }

  bool rebase(duration period, time_point next) noexcept override {
    std::lock_guard lock(mutex_);
    if (this->stopped_.load()) return false;
    if (running_) {
      has_rebase_ = true;
      rebase_period_ = period;
      rebase_next_ = next;
      return true;
    }
    if (period > duration::zero()) period_ = period;
    ideal_ = next;
    if (paused_) return true;  // applies on resume
    // A pending extra run stays due now; the grid moves.
    return try_arm(next, extra_ ? this->schedule_now() : run_deadline(next, period_, options_.jitter, options_.leeway));
  }

  bool trigger_now() noexcept override {
    std::lock_guard lock(mutex_);
    if (this->stopped_.load() || paused_ || pause_requested_ || trigger_requested_ || extra_) return false;
    if (running_) {
      trigger_requested_ = true;  // right after the run
      return true;
    }
    extra_ = true;
    return try_arm(ideal_, this->schedule_now());  // ideal_ kept: the grid does not move
  }

  duration leeway() const noexcept override { return options_.leeway; }

 private:
  // Under mutex_: (re)arms the wait for @p deadline, the run for @p ideal.
  // A wait already pending completes with operation_aborted (expires_at), or,
  // if it completed already, finds a newer generation and runs nothing.
  void arm_locked(time_point ideal, time_point deadline) {
    ideal_ = ideal;
    deadline_ = deadline;
    if (options_.until && deadline >= *options_.until) {
      this->stopped_.store(true);  // periodic_options::until: no run starts at or after it
      return;
    }
    this->wait_until(deadline, ++generation_);
  }

  // arm_locked() for the controls, which must not throw: a failure to
  // arm stops the schedule (its error() tells why).
  bool try_arm(time_point ideal, time_point deadline) noexcept {
    try {
      arm_locked(ideal, deadline);
      return true;
    } catch (...) {
      this->stop_with(std::current_exception());
      return false;
    }
  }

  // Runs on the executor. The next wait is armed only after the handler
  // returns, so runs never overlap. An exception from the handler never
  // leaves this function: it goes to the error handler, and stops the
  // schedule unless continue_after_error is set.
  void on_tick(const sys_ns::error_code& ec, std::uint64_t generation) {
    bool extra = false;
    time_point due;  // the deadline this run's wait was armed for
    {
      std::lock_guard lock(mutex_);
      // A stale wait (re-armed, paused or triggered since) runs nothing.
      if (ec || this->stopped_.load() || generation != generation_ || paused_) return;
      if (options_.until && this->schedule_now() >= *options_.until) {
        this->stopped_.store(true);  // a tick completed so late that its run would start after the end
        return;
      }
      running_ = true;
      extra = std::exchange(extra_, false);
      due = deadline_;
    }
    const time_point started = this->schedule_now();
    bool stop = false;
    std::exception_ptr error;
    try {
      if constexpr (steers_its_schedule_v<Handler>) {
        stop = handler_() == periodic_control::stop;
      } else {
        handler_();
      }
    } catch (...) {
      error = std::current_exception();
    }
    // One more clock read per run, for its run time.
    // Saturating: a schedule's first instant may be at the clock's far end.
    this->record_run(saturating_difference(started, due), saturating_difference(this->schedule_now(), started));
    const bool goes_on = this->end_run(stop, std::move(error), options_);
    std::lock_guard lock(mutex_);
    running_ = false;
    if (!goes_on || this->stopped_.load()) return;
    time_point ideal;
    if (has_rebase_) {  // reschedule during the run: the grid starts again there
      has_rebase_ = false;
      if (rebase_period_ > duration::zero()) period_ = rebase_period_;
      ideal = rebase_next_;
    } else if (extra && fixed_rate_) {
      ideal = ideal_;  // an extra run leaves the grid where it was
    } else {
      ideal = next_ideal(started);
    }
    if (std::exchange(pause_requested_, false)) {
      ideal_ = ideal;
      paused_ = true;
      return;
    }
    time_point deadline = run_deadline(ideal, period_, options_.jitter, options_.leeway);
    if (std::exchange(trigger_requested_, false)) {
      extra_ = true;
      deadline = this->schedule_now();
    }
    arm_locked(ideal, deadline);
  }

  time_point next_ideal(time_point started) noexcept {
    return fixed_rate_ ? next_fixed_rate_instant(ideal_, period_, started, options_.missed_ticks)
                       : saturating_add(this->schedule_now(), period_);
  }

  Handler handler_;
  bool fixed_rate_;
  duration period_;
  periodic_options options_;
  // Guards the schedule below and the timer's re-arming: the controls come
  // from any thread, the runs from the executor.
  mutable std::mutex mutex_;
  time_point ideal_{};
  time_point deadline_{};         // of the current wait (ideal_ plus jitter, or a trigger's now)
  std::uint64_t generation_ = 0;  // of the current wait; older completions run nothing
  bool running_ = false;          // the handler runs now
  bool paused_ = false;           // no wait pending until resume()
  bool pause_requested_ = false;  // running: pause when the run ends
  bool trigger_requested_ = false;  // running: one extra run right after
  bool extra_ = false;            // the pending wait is for an extra run (trigger_now)
  bool has_rebase_ = false;       // running: rebase_* apply when it ends
  duration rebase_period_{};
  time_point rebase_next_{};
};

/// Starts a periodic handler whose first ideal instant is @p first exactly
/// (the grid is first + k * period). A @p first already past runs at once;
/// the missed-tick policy then applies to that grid.
template <class Executor, class Handler>
std::shared_ptr<periodic_state_base> start_periodic_at(const Executor& ex, time_point first, duration period,
                                                       Handler&& h, bool fixed_rate, const periodic_options& o,
                                                       const char* where) {
  static_assert(std::is_void_v<std::invoke_result_t<std::decay_t<Handler>&>> ||
                    steers_its_schedule_v<std::decay_t<Handler>>,
                "chronopool: a periodic handler must return void or chronopool::periodic_control");
  validate_periodic(period, o, where);
  check_not_empty(h, where);
  validate_periodic_end(first, o);
  auto state = std::make_shared<periodic_state<Executor, std::decay_t<Handler>>>(ex, std::forward<Handler>(h),
                                                                                fixed_rate, period, o);
  state->arm(first);
  return state;
}

/// start_periodic_at with the first instant @p initial from now.
template <class Executor, class Handler>
std::shared_ptr<periodic_state_base> start_periodic(const Executor& ex, duration initial, duration period,
                                                    Handler&& h, bool fixed_rate, const periodic_options& o,
                                                    const char* where) {
  return start_periodic_at(ex, deadline_after(context_now(ex), initial), period, std::forward<Handler>(h), fixed_rate, o,
                           where);
}

}  // namespace detail

/// Handle to a periodic handler started with chronopool::schedule_at_fixed_rate
/// or chronopool::schedule_with_fixed_delay on an executor. Copies share the
/// schedule; dropping every handle does not stop it.
class periodic_handle {
 public:
  periodic_handle() noexcept = default;
  /// Stops later ticks (a tick already running finishes). True when this call
  /// stopped a running schedule.
  bool cancel() noexcept { return state_ && state_->cancel(); }
  /// True until cancelled, stopped by a handler that threw, or ended by a
  /// handler that returned periodic_control::stop.
  bool active() const noexcept { return state_ && state_->active(); }
  /// Handler runs that ended, by returning or by throwing.
  std::uint64_t ticks() const noexcept { return state_ ? state_->ticks() : 0; }
  /// The exception that stopped the schedule (see
  /// periodic_options::continue_after_error); null while none has.
  std::exception_ptr error() const noexcept { return state_ ? state_->error() : nullptr; }
  /// The runs so far, how late each started and how long each took (see
  /// periodic_stats); empty for an empty handle. A calendar schedule
  /// (chronopool::schedule_cron) measures lateness from its instant by the
  /// context's system clock. Recording costs each run one clock read (two
  /// for a calendar schedule) and two histogram increments.
  periodic_stats stats() const { return state_ ? state_->stats() : periodic_stats{}; }

  /// @name Control of the schedule
  /// The same semantics as scheduled_future<void>'s controls for a pool's
  /// periodic tasks, from any thread, racing the runs on the executor: each
  /// call is decided under the schedule's mutex, a re-armed wait makes the
  /// one it replaces run nothing, and runs never overlap. Every control is a
  /// no-op returning false once the schedule is stopped (cancelled, failed,
  /// ended), for an empty handle and for a calendar schedule
  /// (chronopool::schedule_cron), whose instants come from its calendar.
  /// @{

  /// Pauses: a pending tick's wait is cancelled at once; a running handler
  /// finishes and is then not re-armed. False when paused or pausing
  /// already. Drops a pending trigger_now() run. While paused the schedule
  /// holds no wait, so it keeps no run() of its context going.
  bool pause() noexcept { return state_ && state_->pause(); }
  /// Resumes at the next ideal instant, unchanged by the pause (missed: at
  /// once, then the missed-tick policy). During a run whose pause has not
  /// taken effect, withdraws it (true). False when not paused.
  bool resume() noexcept { return state_ && state_->resume(); }
  /// Whether the schedule is paused.
  bool paused() const noexcept { return state_ && state_->paused(); }
  /// New period (fixed delay: delay), the next tick one new period from now.
  /// Applies after a running handler returns, and on resume() when paused.
  /// Throws std::invalid_argument when @p period is not positive or not
  /// above the leeway.
  template <class Rep, class Period>
  bool reschedule(std::chrono::duration<Rep, Period> period) {
    const auto p = detail::saturating_duration(period, "period");
    if (p <= detail::duration::zero())
      throw std::invalid_argument("chronopool: periodic_handle::reschedule: period must be positive");
    if (!state_) return false;
    detail::validate_leeway(p, state_->leeway(), "periodic_handle::reschedule");
    return state_->rebase(p, detail::saturating_add(state_->schedule_now(), p));
  }
  /// The next tick's ideal instant becomes the steady_clock instant @p next
  /// (at once when past), the period is kept.
  template <class Duration>
  bool reschedule_next(std::chrono::time_point<std::chrono::steady_clock, Duration> next) {
    return state_ &&
           state_->rebase(detail::duration::zero(),
                          detail::time_point(detail::saturating_duration(next.time_since_epoch(), "time point")));
  }
  /// One extra run as soon as possible, never overlapping: now when waiting,
  /// right after the handler when running. A fixed-rate grid is not shifted.
  /// False when paused or pausing, or an extra run is pending already.
  bool trigger_now() noexcept { return state_ && state_->trigger_now(); }
  /// @}

 /// For chronopool's own use: wraps a started schedule.
  explicit periodic_handle(std::shared_ptr<detail::periodic_state_base> s) noexcept : state_(std::move(s)) {}

 private:
  std::shared_ptr<detail::periodic_state_base> state_;
};

/// Runs @p handler on @p ex first after @p initial_delay, then every
/// @p period from the previous ideal instant (options.missed_ticks decides
/// what a late tick does). Each tick waits in the timer heap of @p ex's
/// context; the next tick is queued only after the handler returns, so runs
/// never overlap. @p period must be positive (std::invalid_argument).
///
/// The handler returns void, or periodic_control to end the schedule from
/// inside a run. An exception it throws never leaves the executor's run():
/// it goes to options.error_handler and stops the schedule, or, with
/// options.continue_after_error, only goes to the handler.
template <class Executor, class Rep1, class Period1, class Rep2, class Period2, class Handler>
periodic_handle schedule_at_fixed_rate(const Executor& ex, std::chrono::duration<Rep1, Period1> initial_delay,
                                       std::chrono::duration<Rep2, Period2> period, Handler&& handler,
                                       periodic_options options = {}) {
  return periodic_handle(detail::start_periodic(ex, detail::saturating_duration(initial_delay, "initial delay"),
                                                detail::saturating_duration(period, "period"),
                                                std::forward<Handler>(handler), true, options,
                                                "schedule_at_fixed_rate"));
}

/// Like schedule_at_fixed_rate, but each next tick comes @p delay after the
/// previous handler returned.
template <class Executor, class Rep1, class Period1, class Rep2, class Period2, class Handler>
periodic_handle schedule_with_fixed_delay(const Executor& ex, std::chrono::duration<Rep1, Period1> initial_delay,
                                          std::chrono::duration<Rep2, Period2> delay, Handler&& handler,
                                          periodic_options options = {}) {
  return periodic_handle(detail::start_periodic(ex, detail::saturating_duration(initial_delay, "initial delay"),
                                                detail::saturating_duration(delay, "delay"),
                                                std::forward<Handler>(handler), false, options,
                                                "schedule_with_fixed_delay"));
}

/// Like schedule_at_fixed_rate with an initial delay, but the first run's
/// ideal instant is the steady_clock time point @p first itself, and the
/// schedule is first + k * @p period. A @p first already past runs at once,
/// then options.missed_ticks applies to that schedule. @p period must be
/// positive (std::invalid_argument).
template <class Executor, class Duration, class Rep, class Period, class Handler>
periodic_handle schedule_at_fixed_rate(const Executor& ex,
                                       std::chrono::time_point<std::chrono::steady_clock, Duration> first,
                                       std::chrono::duration<Rep, Period> period, Handler&& handler,
                                       periodic_options options = {}) {
  return periodic_handle(detail::start_periodic_at(
      ex, detail::time_point(detail::saturating_duration(first.time_since_epoch(), "first run")),
      detail::saturating_duration(period, "period"), std::forward<Handler>(handler), true, options,
      "schedule_at_fixed_rate"));
}

/// Like schedule_with_fixed_delay with an initial delay, but the first run's
/// instant is the steady_clock time point @p first itself (at once when past);
/// each next run comes @p delay after the previous handler returned.
template <class Executor, class Duration, class Rep, class Period, class Handler>
periodic_handle schedule_with_fixed_delay(const Executor& ex,
                                          std::chrono::time_point<std::chrono::steady_clock, Duration> first,
                                          std::chrono::duration<Rep, Period> delay, Handler&& handler,
                                          periodic_options options = {}) {
  return periodic_handle(detail::start_periodic_at(
      ex, detail::time_point(detail::saturating_duration(first.time_since_epoch(), "first run")),
      detail::saturating_duration(delay, "delay"), std::forward<Handler>(handler), false, options,
      "schedule_with_fixed_delay"));
}

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Status machine of a scheduled task; see detail/pool/task_base.hpp.
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/support/intrusive_list.hpp>
#include <chronopool/detail/time/periodic_schedule.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace chronopool::detail {
namespace {

// Futures wait on one of a fixed set of mutex/condition-variable pairs chosen
// by the task's address, so a task needs no synchronisation object of its own.
// Unrelated waiters sharing a stripe only see a spurious wake-up.
struct alignas(64) waiter_stripe {
  std::mutex mutex;
  std::condition_variable cv;
};

constexpr std::size_t stripe_count = 64;

waiter_stripe& stripe_for(const void* p) noexcept {
  static waiter_stripe stripes[stripe_count];
  const auto h = reinterpret_cast<std::uintptr_t>(p) >> 6;
  return stripes[(h ^ (h >> 7)) % stripe_count];
}

// The control lock of a periodic task: serialises pause, resume, rebase and
// trigger_now with each other and with the re-arming at the end of a run.
// Separate from the waiter stripes: a control call may cancel its task,
// which notifies waiters under their stripe's lock.
struct alignas(64) control_stripe {
  std::mutex mutex;
};

std::mutex& control_mutex_for(const void* p) noexcept {
  static control_stripe stripes[stripe_count];
  const auto h = reinterpret_cast<std::uintptr_t>(p) >> 6;
  return stripes[(h ^ (h >> 7)) % stripe_count].mutex;
}

}  // namespace

void task_base::set_periodic(duration period, time_point first, const periodic_options& opts) {
  validate_periodic_end(first, opts);
  periodic_task_state& p = *periodic_;
  p.has_until = opts.until.has_value();
  if (p.has_until) p.until = *opts.until;
  p.max_runs = opts.max_runs.value_or(0);
  p.period.store(period, std::memory_order_relaxed);
  p.ideal = first;
  p.continue_after_error = opts.continue_after_error;
  p.missed_ticks = opts.missed_ticks;
  p.jitter = opts.jitter;
  p.leeway = opts.leeway;
  set_deadline(run_deadline(first, period, p.jitter, p.leeway));
}

bool task_base::try_start() noexcept {
  auto expected = task_status::pending;
  return status_.compare_exchange_strong(expected, task_status::running);
}

std::exception_ptr task_base::run_here() noexcept {
  if (!try_start()) return {};
  const time_point started = now();
  std::exception_ptr error;
  try {
    invoke();
  } catch (...) {
    error = std::current_exception();
  }
  finish_run(error, started);
  return error;
}

bool task_base::complete(task_status final_status, std::exception_ptr error) noexcept {
  if (error) error_ = std::move(error);  // published by the release below
  auto expected = task_status::running;
  const bool won = status_.compare_exchange_strong(expected, final_status);
  // Lost only to a cancel() during the run: the result is discarded and the
  // canceller already woke the waiters.
  release_callable();
  if (won) notify_waiters();
  return won;
}

time_point task_base::next_deadline(periodic_task_state& p, time_point started, time_point finished) noexcept {
  duration period = p.period.load(std::memory_order_relaxed);
  if (p.has_rebase) {
    // reschedule during the run: the grid starts again from the new instant.
    p.has_rebase = false;
    if (p.rebase_period > duration::zero()) p.period.store(period = p.rebase_period, std::memory_order_relaxed);
    p.ideal = p.rebase_next;
  } else if (kind_ == task_kind::fixed_delay) {
    p.ideal = saturating_add(finished, period);
  } else if (!p.extra_run) {
    p.ideal = next_fixed_rate_instant(p.ideal, period, started, p.missed_ticks);
  }
  // An extra run (trigger_now) leaves a fixed-rate grid where it was: p.ideal
  // is still the instant of the next scheduled run.
  p.extra_run = false;
  time_point d = run_deadline(p.ideal, period, p.jitter, p.leeway);
  if (p.trigger_requested) {
    p.trigger_requested = false;
    p.extra_run = true;
    d = std::min(d, finished);
  }
  return d;
}

void task_base::finish_run(std::exception_ptr error, time_point started) noexcept {
  task_owner* const o = owner();
  periodic_task_state* const schedule = periodic_;
  if (schedule == nullptr || (error && !schedule->continue_after_error) || o == nullptr || schedule->ends_schedule ||
      count_run(*schedule)) {
    // One-shot work, a periodic task stopped by its error, ended by its run
    // or by max_runs, or a periodic task run once by hand after
    // shutdown_now(): the run is the last one.
    if (error && reports_errors_ && o != nullptr) o->report_error(error, *this);
    // Decide the status before handing the error over: in one argument list
    // the move could happen first (evaluation order is unspecified).
    const task_status final_status = error ? task_status::failed : task_status::succeeded;
    complete(final_status, std::move(error));
    return;
  }
  if (error) o->report_error(error, *this);  // continue_after_error: keep going
  periodic_task_state& p = *schedule;
  bool requeued = true;
  bool ends = false;
  {
    // The controls see the task running until this block has re-queued it
    // (or paused or ended it): one decision per run, under the control lock.
    std::lock_guard lock(control_mutex_for(this));
    const time_point d = next_deadline(p, started, now());
    ends = past_end(d);  // no run starts at or after `until`
    // A pause takes effect only if the owner keeps the paused task (not
    // after a shutdown): parked first, so that a shutdown sweeping the
    // parked tasks either sees it or has already made park() refuse it.
    const bool pause = p.pause_requested && !ends && o->park(*this, false);
    p.pause_requested = false;
    if (pause) p.extra_run = false;  // a pause drops a pending extra run
    if (!ends) {
      set_deadline(d);
      auto expected = task_status::running;
      if (!status_.compare_exchange_strong(expected, pause ? task_status::paused : task_status::pending)) {
        if (pause) o->unpark(*this);
        release_callable();  // cancelled during the run; the canceller notified
        return;
      }
      if (!pause) requeued = requeue(o);
    }
  }
  // `until` reached: running → succeeded, as any last run ends.
  if (ends) complete(task_status::succeeded, nullptr);
  if (!requeued) cancel(false);
}

bool task_base::requeue(task_owner* o) noexcept {
  if (o == nullptr) return false;
  try {
    return o->reschedule(*this);
  } catch (...) {
    return false;
  }
}

bool task_base::end_from(task_status from) noexcept {
  return status_.compare_exchange_strong(from, task_status::succeeded);
}

void task_base::finish_ended() noexcept {
  release_callable();  // neither queued nor running: nobody else touches it
  notify_waiters();
}

bool task_base::pause() noexcept {
  if (periodic_ == nullptr || periodic_->calendar) return false;
  periodic_task_state& p = *periodic_;
  std::lock_guard lock(control_mutex_for(this));
  switch (status()) {
    case task_status::pending: {
      task_owner* const o = owner();
      if (o == nullptr) return false;  // handed back by shutdown_now(): no schedule left
      if (o->park(*this, true)) {
        // Out of the queue, so no worker can take it: pending → paused, or
        // a cancel() won meanwhile (the queue's reference is dropped here).
        auto expected = task_status::pending;
        if (!status_.compare_exchange_strong(expected, task_status::paused)) {
          o->unpark(*this);
          return false;
        }
        p.extra_run = false;  // a queued extra run is dropped with the pause
        return true;
      }
      // Taken by a worker that has not started it: it counts as running.
      // (Or the owner refused to park it after a shutdown: the pause then
      // has no effect when the run ends, see finish_run().)
      [[fallthrough]];
    }
    case task_status::running:
      if (p.pause_requested) return false;
      p.pause_requested = true;
      p.trigger_requested = false;  // a pause drops a pending extra run
      return true;
    default: return false;  // paused already, or done
  }
}

bool task_base::resume() noexcept {
  if (periodic_ == nullptr || periodic_->calendar) return false;
  periodic_task_state& p = *periodic_;
  bool requeued = true;
  {
    std::lock_guard lock(control_mutex_for(this));
    const task_status s = status();
    if (s == task_status::pending || s == task_status::running) {
      // A pause asked during the run that has not taken effect: withdrawn.
      return std::exchange(p.pause_requested, false);
    }
    if (s != task_status::paused) return false;
    task_owner* const o = owner();
    // The next ideal instant is where the pause left it: when the pause
    // outlasted it, it runs at once and the missed-tick policy places the
    // run after it, as for any late run. The task leaves the owner's parked
    // tasks only once it is queued again or ended (a cancel that wins
    // meanwhile takes it out itself): after shutdown() a parked task is what
    // keeps the pool from terminating.
    const time_point d = run_deadline(p.ideal, period(), p.jitter, p.leeway);
    if (past_end(d)) {
      if (!end_from(task_status::paused)) return false;  // cancelled meanwhile
      if (o != nullptr) o->unpark(*this);
    } else {
      set_deadline(d);
      auto expected = task_status::paused;
      if (!status_.compare_exchange_strong(expected, task_status::pending)) return false;
      requeued = requeue(o);
      if (o != nullptr) o->unpark(*this);
      if (requeued) return true;
    }
  }
  if (requeued) {
    finish_ended();  // ended by `until`
  } else {
    cancel(false);  // the owner no longer runs it (shut down)
  }
  return true;
}

bool task_base::rebase(duration period, time_point next) noexcept {
  if (periodic_ == nullptr || periodic_->calendar) return false;
  periodic_task_state& p = *periodic_;
  bool requeued = true;
  {
    std::lock_guard lock(control_mutex_for(this));
    const auto apply = [&] {
      if (period > duration::zero()) p.period.store(period, std::memory_order_relaxed);
      p.ideal = next;
    };
    switch (status()) {
      case task_status::pending: {
        task_owner* const o = owner();
        if (o == nullptr) return false;  // handed back by shutdown_now(): no schedule left
        if (o->withdraw(*this)) {
          apply();
          // A queued extra run stays due now; the grid moves.
          const time_point d = p.extra_run ? deadline() : run_deadline(p.ideal, this->period(), p.jitter, p.leeway);
          if (past_end(d)) {
            if (!end_from(task_status::pending)) return false;  // cancelled meanwhile
            break;  // ended: completed below
          }
          set_deadline(d);
          requeued = requeue(o);
          if (requeued) return true;
          break;
        }
        [[fallthrough]];  // taken by a worker: counts as running
      }
      case task_status::running:
        p.has_rebase = true;
        p.rebase_period = period;
        p.rebase_next = next;
        return true;
      case task_status::paused: apply(); return true;
      default: return false;
    }
  }
  if (requeued) {
    finish_ended();  // ended by `until`
  } else {
    cancel(false);  // the owner no longer runs it (shut down)
  }
  return true;
}

bool task_base::trigger_now() noexcept {
  if (periodic_ == nullptr || periodic_->calendar) return false;
  periodic_task_state& p = *periodic_;
  {
    std::lock_guard lock(control_mutex_for(this));
    switch (status()) {
      case task_status::pending: {
        if (p.extra_run) return false;  // one is queued already
        task_owner* const o = owner();
        if (o == nullptr) return false;  // handed back by shutdown_now(): no schedule left
        if (o->withdraw(*this)) {
          p.extra_run = true;
          set_deadline(std::min(deadline(), now()));
          if (requeue(o)) return true;
          break;
        }
        [[fallthrough]];  // taken by a worker: counts as running
      }
      case task_status::running:
        if (p.pause_requested || p.trigger_requested) return false;
        p.trigger_requested = true;
        return true;
      default: return false;  // paused, or done
    }
  }
  cancel(false);  // the owner no longer runs it (shut down)
  return true;
}

bool task_base::cancel(bool may_interrupt) noexcept {
  auto s = status_.load();
  for (;;) {
    if (s >= task_status::succeeded) return false;
    if (s == task_status::running && internal_) return false;  // a firing wait: too late
    if (status_.compare_exchange_weak(s, task_status::cancelled)) break;
  }
  if (s == task_status::pending || s == task_status::paused) {
    // Never ran and never will (again): free what the callable holds at once (or,
    // for a timer wait, hand its handler operation_aborted).
    on_cancel_before_run();
    if (task_owner* o = owner()) {
      if (s == task_status::paused) {
        o->unpark(*this);  // in no queue
      } else {
        o->on_cancelled(*this);
      }
    }
  } else if (may_interrupt) {
    request_stop();
  }
  notify_waiters();
  return true;
}

void task_base::destroy_async_waiters() noexcept {
  for (async_wait_op* op = std::exchange(async_waiters_, nullptr); op != nullptr;) {
    async_wait_op* next = op->next_;
    op->func_(nullptr, op, false);
    op = next;
  }
}

void task_base::notify_waiters() noexcept {
  if (!has_waiters_.load()) return;
  auto& s = stripe_for(this);
  async_wait_op* ops = nullptr;
  {
    // A blocking waiter is either before its check or inside wait(); an
    // async one is either linked or has seen the task done.
    std::lock_guard lock(s.mutex);
    ops = std::exchange(async_waiters_, nullptr);
  }
  s.cv.notify_all();
  // Lock, collect, unlock, complete: oldest first (the list is newest first).
  complete_oldest_first<member_link<async_wait_op, &async_wait_op::next_>>(
      ops, [this](async_wait_op* op) { op->func_(this, op, false); });
}

void task_base::start_async_wait(async_wait_op* op) noexcept {
  {
    auto& s = stripe_for(this);
    std::lock_guard lock(s.mutex);
    // The same store-then-check as wait_until(): complete() changes the
    // status before it reads has_waiters_, so either it sees this waiter
    // and takes the list under the lock, or this check sees the task done.
    has_waiters_.store(true);
    if (!done()) {
      op->next_ = async_waiters_;
      async_waiters_ = op;
      return;
    }
  }
  op->func_(this, op, false);
}

void task_base::cancel_async_wait(const void* key) noexcept {
  async_wait_op* found = nullptr;
  {
    auto& s = stripe_for(this);
    std::lock_guard lock(s.mutex);
    for (async_wait_op** link = &async_waiters_; *link != nullptr; link = &(*link)->next_) {
      if ((*link)->cancel_key == key) {
        found = *link;
        *link = found->next_;
        found->next_ = nullptr;
        break;
      }
    }
  }
  if (found != nullptr) found->func_(this, found, true);
}

bool task_base::wait_until(time_point limit) const {
  if (done()) return true;
  auto& s = stripe_for(this);
  std::unique_lock lock(s.mutex);
  has_waiters_.store(true);
  while (!done()) {
    if (is_never(limit)) {
      s.cv.wait(lock);
    } else if (s.cv.wait_until(lock, limit) == std::cv_status::timeout) {
      return done();
    }
  }
  return true;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pool's construction and its worker loop: what a pool thread does from
// its start hook to its exit, taking work and running it with the hooks and
// the task decorator. The other parts of pool_core are in pool_submission,
// pool_shutdown, pool_sizing, pool_threads, pool_waits, pool_rejection,
// pool_errors and pool_stats.
#include <chronopool/detail/pool/pool_core.hpp>

#include <chronopool/detail/platform/timer_slack.hpp>
#include <chronopool/detail/pool/pool_limits.hpp>
#include <chronopool/detail/wakeup/wakeup_setting.hpp>
#include <chronopool/pool_manual_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <utility>

namespace chronopool::detail {
namespace {

// The pool whose worker is running on this thread, if any.
thread_local const pool_core* this_thread_pool = nullptr;

// Every unit of a worker's timer slack is lateness of its tasks: see
// detail/platform/timer_slack.hpp.
using platform::minimise_timer_slack;

scheduled_thread_pool_options validated(scheduled_thread_pool_options o) {
  check_core_pool_size(o.core_pool_size);
  if (o.keep_alive <= std::chrono::nanoseconds::zero())
    throw std::invalid_argument("chronopool: keep_alive must be positive");
  if (o.precision_spin_limit < std::chrono::nanoseconds::zero())
    throw std::invalid_argument("chronopool: precision_spin_limit must not be negative");
  check_wakeup_setting("chronopool: wakeup_slack", o.wakeup_slack);
  // Spinning waits for real time to pass, which a manual clock's never does.
  if (o.manual_clock_auto_advance && !o.use_manual_clock)
    throw std::invalid_argument("chronopool: manual_clock_auto_advance is true but use_manual_clock is false "
                                "(auto-advance moves a manual clock; set use_manual_clock too)");
  if (o.use_manual_clock && o.precision_spin_limit != std::chrono::nanoseconds::zero())
    throw std::invalid_argument(fmt::format("chronopool: precision_spin_limit must be zero with use_manual_clock (was {})",
                                            o.precision_spin_limit));
  return o;
}

// A decorator's view of one run: calling the body runs the task at most once
// and keeps the task's own exception even if the decorator swallows it.
struct decorated_run {
  task_base* task;
  bool ran = false;
  std::exception_ptr error;

  static void body(void* self) {
    auto& r = *static_cast<decorated_run*>(self);
    if (r.ran) return;
    r.ran = true;
    try {
      r.task->invoke();
    } catch (...) {
      r.error = std::current_exception();
      throw;
    }
  }
};

}  // namespace

pool_core::pool_core(scheduled_thread_pool_options options)
    : continue_periodic_after_shutdown(options.continue_existing_periodic_tasks_after_shutdown),
      execute_delayed_after_shutdown(options.execute_existing_delayed_tasks_after_shutdown),
      remove_on_cancel(options.remove_on_cancel),
      rejection(options.rejection),
      options_(validated(std::move(options))),
      core_size_(options_.core_pool_size),
      allow_core_timeout_(options_.allow_core_thread_timeout) {
  queue_.set_precision_spin_limit(options_.precision_spin_limit);
  queue_.set_wake_slack(wake_slack());
  if (options_.use_manual_clock) {
    // Before anything is queued: every reading of the pool's time (its
    // own, its queue's, its tasks' through their owner) is virtual.
    manual_clock_.reset(new pool_manual_clock(*this));
    set_manual_time(&manual_clock_->time_);
    wall_.use_manual_time(&manual_clock_->time_);
    queue_.use_manual_time(&manual_clock_->time_);
    queue_.watch_takers(&live_);
    if (options_.manual_clock_auto_advance) manual_clock_->auto_advance(true);
    manual_clocks_attached.fetch_add(1, std::memory_order_relaxed);
  }
  if (options_.rejection_handler)
    rejection_handler_ = std::make_shared<const std::function<void(rejected_task&)>>(options_.rejection_handler);
}

pool_core::~pool_core() {
  if (manual_clock_) manual_clocks_attached.fetch_sub(1, std::memory_order_relaxed);
  // close() has joined or detached every thread; the list holds no joinable
  // one. Termination completed every termination wait; any left (a core
  // never closed) is destroyed without a call.
  pool_wait_completion destroy;
  destroy.destroy = true;
  for (pool_wait_op* list : {termination_waiters_, quiet_waiters_}) {
    while (pool_wait_op* op = list) {
      list = op->next_;
      op->func_(op, destroy);
    }
  }
}

// ---- the worker loop -----------------------------------------------------------

void pool_core::run_worker(worker& w) {
  this_thread_pool = this;
  minimise_timer_slack();
  if (options_.on_thread_start) {
    try {
      options_.on_thread_start(w.index);
    } catch (...) {
      report_untied_error(std::current_exception(), "the on_thread_start hook", "hook_failed");
    }
  }
  bool after_task = false;
  for (;;) {
    auto work = get_work(after_task);
    after_task = static_cast<bool>(work.task);
    if (work.function) {
      run_function(*work.function, &w);
    } else if (work.task) {
      run_task(w, work.task);
    } else {
      break;
    }
    // After the item's last effect (a periodic task's re-queueing
    // included): a quiet check that sees the count sees those effects.
    w.finished.store(w.finished.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  if (options_.on_thread_stop) {
    try {
      options_.on_thread_stop(w.index);
    } catch (...) {
      report_untied_error(std::current_exception(), "the on_thread_stop hook", "hook_failed");
    }
  }
  {
    // get_work() took this thread out of live_ and counted it in exiting_;
    // from here on the worker record belongs to whoever reaps it.
    std::lock_guard lock(mutex_);
    --exiting_;
    w.exited = true;
  }
  try_terminate();
  this_thread_pool = nullptr;
}

delayed_work_queue::wait_result pool_core::get_work(bool after_task) {
  // Fast path for a busy pool: work already due needs none of the retire
  // bookkeeping below (a running pool retires nobody who has work), so take
  // it with the queue's lock alone, not the pool's as well.
  if (state_.load() == run_state::running) {
    // Due tasks another thread set out need not even the queue's lock.
    if (task_base* t = queue_.claim_due()) return {task_ptr(t, task_ptr::adopt), delayed_work_queue::wait_status::task};
    // Delayed tasks come due one by one and both takers go for each: a
    // taker that lost the lock to the other's short take spins for it
    // rather than sleeping (a futex sleep and wake per task, which at a
    // million a second leaves the tasks late). Posted functions are taken
    // while their posters need the CPU: there the loser sleeps.
    if (auto r = queue_.try_take(after_task); r.status != delayed_work_queue::wait_status::timeout) return r;
  }
  bool timed_out = false;
  for (;;) {
    time_point limit = time_point::max();
    pool_wait_op* quiet_now = nullptr;
    bool retire = false;
    {
      std::lock_guard lock(mutex_);
      // Nothing due for this thread: if it was the last one busy, the pool
      // may just have become quiet. Only here, off the busy path.
      if (quiet_watched_.load(std::memory_order_relaxed)) collect_quiet_locked(quiet_now);
      const run_state s = state_.load();
      const std::size_t live = live_.load();
      const bool timed = allow_core_timeout_.load() || live > core_size_.load();
      retire = s >= run_state::stop || (s == run_state::shutdown && queue_.empty()) ||
               (timed && timed_out && (live > 1 || queue_.empty()));
      if (retire) {
        live_.store(live - 1);
        ++exiting_;  // termination waits until this thread's exit hooks are done
      } else if (timed && !(live == 1 && !queue_.empty())) {
        // A timed thread waits keep_alive for work, except the last one while
        // work is queued: it must stay for that work, and polling every
        // keep_alive until a far deadline would be a slow spin.
        limit = deadline_after(now(), options_.keep_alive);
      }
    }
    if (quiet_now != nullptr) {
      pool_wait_completion how;
      how.pool_runs_posted_work = state_.load() < run_state::stop;
      complete_pool_waits(quiet_now, how);
    }
    if (retire) {
      // A manual clock's driver waiting for every thread to be idle no
      // longer waits for this one.
      if (manual_clock_) queue_.taker_left();
      return {};
    }
    auto r = queue_.wait_for_task(limit);
    switch (r.status) {
      case delayed_work_queue::wait_status::task:
      case delayed_work_queue::wait_status::function: return r;
      case delayed_work_queue::wait_status::timeout: timed_out = true; break;
      case delayed_work_queue::wait_status::interrupted: timed_out = false; break;
      case delayed_work_queue::wait_status::closed: timed_out = true; break;  // re-check the state
    }
  }
}

void pool_core::run_function(queued_function& f, worker* w) noexcept {
  try {
    f.run();
  } catch (...) {
    report_untied_error(std::current_exception(), "a function posted to the pool", "function_failed");
  }
  if (w != nullptr) {
    w->completed.store(w->completed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    completed_elsewhere_.fetch_add(1, std::memory_order_relaxed);
  }
}

void pool_core::run_task(worker& w, const task_ptr& t) {
  if (!can_run_in_current_state(*t)) {
    t->cancel(false);  // popped just before a shutdown policy or shutdown_now() reached it
    return;
  }
  // A wall-clock task (owned by the registry, not by this pool) taken while
  // the system clock is still before its instant goes back to the queue.
  const bool wall = t->owner() != this;
  if (wall && wall_.hold_back(t)) [[unlikely]]
    return;
  if (!t->try_start()) return;  // cancelled while queued (remove_on_cancel off) or just now
  const time_point started = now();
  w.lateness.record_exclusive(saturating_difference(started, t->deadline()));
  {
    std::lock_guard lock(w.current_mutex);
    w.current = t.get();
  }
  // shutdown_now() may have swept the running tasks just before we registered.
  if (state_.load() >= run_state::stop) t->request_stop();
  w.active.store(true, std::memory_order_relaxed);

  const task_view view(*t);
  std::exception_ptr error;
  try {
    if (options_.before_execute) options_.before_execute(view);
    if (options_.task_decorator) {
      decorated_run run{t.get(), false, nullptr};
      try {
        options_.task_decorator(view, task_body(&decorated_run::body, &run));
      } catch (...) {
        if (!run.error) throw;  // the decorator's own failure
      }
      if (run.error) std::rethrow_exception(run.error);  // even if the decorator swallowed it
      if (!run.ran) throw std::logic_error("chronopool: task_decorator did not run the task");
    } else {
      t->invoke();
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (options_.after_execute) {
    try {
      options_.after_execute(view, error);
    } catch (...) {
      report_error(std::current_exception(), *t);
    }
  }
  {
    std::lock_guard lock(w.current_mutex);
    w.current = nullptr;
  }
  const duration ran = saturating_difference(now(), started);
  w.run_time.record_exclusive(ran);
  queue_.observe_run(ran);
  w.completed.store(w.completed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  w.active.store(false, std::memory_order_relaxed);
  if (error) [[unlikely]]
    failed_.fetch_add(1, std::memory_order_relaxed);
  t->finish_run(std::move(error), started);
  if (wall) [[unlikely]]
    wall_.after_run(*t);
}

bool pool_core::running_in_this_thread() const noexcept { return this_thread_pool == this; }

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The thread pool machinery: run states, the worker loop, rejection and
// termination. Java's ScheduledThreadPoolExecutor/ThreadPoolExecutor logic,
// with the decisions documented in scheduled_thread_pool.hpp.
#include <chronopool/detail/pool/pool_core.hpp>

#include <chronopool/detail/platform/timer_slack.hpp>
#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace chronopool::detail {
namespace {

// The pool whose worker is running on this thread, if any.
thread_local const pool_core* this_thread_pool = nullptr;

// The stopped pool whose timer waits this thread is completing with
// operation_aborted inside shutdown_now(): handlers bound to that pool's own
// executor run here, since none of its threads will run anything again.
thread_local const pool_core* aborting_waits_of = nullptr;

// Every unit of a worker's timer slack is lateness of its tasks: see
// detail/platform/timer_slack.hpp.
using platform::minimise_timer_slack;

scheduled_thread_pool_options validated(scheduled_thread_pool_options o) {
  if (o.core_pool_size > 4096)
    throw std::invalid_argument(
        fmt::format("chronopool: core_pool_size {} exceeds the maximum of 4096", o.core_pool_size));
  if (o.keep_alive <= std::chrono::nanoseconds::zero())
    throw std::invalid_argument("chronopool: keep_alive must be positive");
  if (o.precision_spin_limit < std::chrono::nanoseconds::zero())
    throw std::invalid_argument("chronopool: precision_spin_limit must not be negative");
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
  if (options_.rejection_handler)
    rejection_handler_ = std::make_shared<const std::function<void(rejected_task&)>>(options_.rejection_handler);
}

pool_core::~pool_core() {
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

// ---- submission -------------------------------------------------------------

void pool_core::enqueue(const task_ptr& t, const char* where) {
  t->set_sequence(sequence_.fetch_add(1, std::memory_order_relaxed));
  t->set_owner(this);
  if (state_.load() != run_state::running) return reject(t, where, true);
  switch (queue_.offer_within(t, options_.max_queued)) {
    case delayed_work_queue::offer_status::full: return reject(t, where, false);
    case delayed_work_queue::offer_status::cancelled: return;  // cannot happen: nobody else holds it yet
    case delayed_work_queue::offer_status::queued: break;
  }
  // A submission that lost the race with shutdown() was never accepted: the
  // caller hears it through the rejection policy (abort throws), as if it had
  // come a moment later, instead of getting a future that is already
  // cancelled. Java cancels it silently here; an exception the caller can see
  // is what "rejected after shutdown" promises.
  offer_outcome outcome{};
  try {
    outcome = settle_after_offer(t);
  } catch (...) {
    t->cancel(false);  // withdrawn: no thread could be started to run it
    throw;
  }
  if (outcome == offer_outcome::kept) return;
  try {
    reject(t, where, true);
  } catch (...) {
    try_terminate();  // the withdrawn task may have been what held it off
    throw;
  }
  try_terminate();
}

pool_core::offer_outcome pool_core::settle_after_offer(const task_ptr& t) {
  // Java's recheck: a shutdown may have swept the queue between our state
  // check and the offer; take the task back out if it may no longer run.
  if (!can_run_in_current_state(*t) && queue_.remove(*t)) return offer_outcome::withdrawn;
  // Throws when no thread runs and none could be started, with the task taken
  // back out (the caller settles it: a timer wait must not complete for a
  // failed call).
  ensure_thread_for(*t);
  // Accepted just as the last thread left after shutdown(): nobody will run
  // it, so it must not sit in the queue.
  if (live_.load() == 0 && state_.load() >= run_state::tidying && queue_.remove(*t)) return offer_outcome::withdrawn;
  return offer_outcome::kept;
}

void pool_core::submit_from_executor(const task_ptr& t) {
  t->set_deadline(clock::now());
  submit_internal(t, true);
}

void pool_core::submit_function(queued_function* f) {
  // Accepted until STOP, like other executor work (see submit_internal).
  // From STOP on it is destroyed unrun, except while shutdown_now() is
  // completing this pool's timer waits on the calling thread.
  auto refused = [&] {
    if (aborting_waits_of == this) {
      run_function(*f);
    } else {
      f->destroy();
    }
  };
  if (state_.load() >= run_state::stop || !queue_.offer_function(f)) return refused();
  try {
    ensure_prestart();
  } catch (...) {
    // No thread could be started: if none runs at all, it would wait
    // forever. Take it back and let the caller see the error. Otherwise the
    // running threads will take it; the failure is reported.
    if (live_.load() == 0 && queue_.withdraw_function(f)) {
      f->destroy();
      throw;
    }
    report_untied_error(std::current_exception(), "starting a pool thread");
  }
  // Accepted just as the last thread left after shutdown(): nobody will run it.
  if (live_.load() == 0 && state_.load() >= run_state::tidying && queue_.withdraw_function(f)) {
    f->destroy();
    try_terminate();
  }
}

void pool_core::submit_internal(const task_ptr& t, bool due_now) {
  t->set_sequence(sequence_.fetch_add(1, std::memory_order_relaxed));
  t->set_owner(this);
  // Executor work is how in-flight operations continue (a coroutine's next
  // step, a timer's completion), so it is accepted until STOP, not only while
  // RUNNING: shutdown() lets existing work finish, as an io_context runs
  // until it is out of work.
  if (state_.load() >= run_state::stop) {
    if (aborting_waits_of == this) {
      t->run_here();
    } else {
      t->cancel(false);
    }
    return;
  }
  // Executor work and timer waits are not bounded by max_queued, as Asio's
  // queues are not; an offer refused because a cancel() won is settled.
  // Executor work withdrawn by a racing shutdown is dropped as Asio drops
  // handlers of a stopped context: its destructor runs, its work is released.
  if (!(due_now ? queue_.offer_now(t) : queue_.offer(t))) return;
  offer_outcome outcome{};
  try {
    outcome = settle_after_offer(t);
  } catch (...) {
    t->discard();  // dropped uncalled, as the failed post or wait reports
    throw;
  }
  if (outcome == offer_outcome::withdrawn) {
    t->cancel(false);
    try_terminate();
  }
}

void pool_core::work_finished() noexcept {
  // The last tracked work of a shut-down pool may be what held off termination.
  if (outstanding_work_.fetch_sub(1) == 1 && state_.load() != run_state::running) try_terminate();
}

bool pool_core::can_run_in_current_state(const task_base& t) const noexcept {
  switch (state_.load()) {
    case run_state::running: return true;
    case run_state::shutdown:
      if (t.is_periodic()) return continue_periodic_after_shutdown.load();
      // Tasks already due run even when delayed ones are dropped (as Java).
      return execute_delayed_after_shutdown.load() || t.deadline() <= clock::now();
    default: return false;
  }
}

// ---- threads ------------------------------------------------------------------

// Starting threads (ensure_prestart, add_worker, the thread factory) is in
// pool_threads.cpp.

void pool_core::run_worker(worker& w) {
  this_thread_pool = this;
  minimise_timer_slack();
  if (options_.on_thread_start) {
    try {
      options_.on_thread_start(w.index);
    } catch (...) {
      report_untied_error(std::current_exception(), "the on_thread_start hook");
    }
  }
  for (;;) {
    auto work = get_work();
    if (work.function) {
      run_function(*work.function);
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
      report_untied_error(std::current_exception(), "the on_thread_stop hook");
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

delayed_work_queue::wait_result pool_core::get_work() {
  // Fast path for a busy pool: work already due needs none of the retire
  // bookkeeping below (a running pool retires nobody who has work), so take
  // it with the queue's lock alone, not the pool's as well.
  if (state_.load() == run_state::running)
    if (auto r = queue_.try_take(); r.status != delayed_work_queue::wait_status::timeout) return r;
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
        limit = deadline_after(clock::now(), options_.keep_alive);
      }
    }
    if (quiet_now != nullptr) {
      pool_wait_completion how;
      how.pool_runs_posted_work = state_.load() < run_state::stop;
      complete_pool_waits(quiet_now, how);
    }
    if (retire) return {};
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

void pool_core::run_function(queued_function& f) noexcept {
  try {
    f.run();
  } catch (...) {
    report_untied_error(std::current_exception(), "a function posted to the pool");
  }
  completed_.fetch_add(1, std::memory_order_relaxed);
}

void pool_core::run_task(worker& w, const task_ptr& t) {
  if (!can_run_in_current_state(*t)) {
    t->cancel(false);  // popped just before a shutdown policy or shutdown_now() reached it
    return;
  }
  if (!t->try_start()) return;  // cancelled while queued (remove_on_cancel off) or just now
  const time_point started = clock::now();
  lateness_.record(saturating_difference(started, t->deadline()));
  {
    std::lock_guard lock(w.current_mutex);
    w.current = t.get();
  }
  // shutdown_now() may have swept the running tasks just before we registered.
  if (state_.load() >= run_state::stop) t->request_stop();
  active_.fetch_add(1);

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
  active_.fetch_sub(1);
  completed_.fetch_add(1);
  t->finish_run(std::move(error), started);
}

// ---- life cycle ---------------------------------------------------------------

void pool_core::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (state_.load() == run_state::running) state_.store(run_state::shutdown);
  }
  // Apply the shutdown policies to what is queued (Java's onShutdown).
  const bool keep_periodic = continue_periodic_after_shutdown.load();
  const bool keep_delayed = execute_delayed_after_shutdown.load();
  const time_point now = clock::now();
  auto dropped = queue_.remove_if([&](const task_base& t) {
    if (t.cancelled()) return true;
    return t.is_periodic() ? !keep_periodic : (!keep_delayed && t.deadline() > now);
  });
  for (auto& t : dropped) t->cancel(false);
  queue_.set_mode(delayed_work_queue::mode::draining);
  poke_quiet_waiters();
  try_terminate();
}

std::vector<task_ptr> pool_core::shutdown_now() { return stop_all(true); }

std::vector<task_ptr> pool_core::stop_all(bool complete_waits) {
  {
    std::lock_guard lock(mutex_);
    if (state_.load() < run_state::stop) state_.store(run_state::stop);
  }
  queue_.set_mode(delayed_work_queue::mode::closed);
  std::vector<task_ptr> drained = queue_.drain();
  // Posted functions are not tasks: destroyed unrun (Asio's rule for a
  // stopped context), not handed back.
  for (function_list fs = queue_.drain_functions(); !fs.empty();) fs.pop_front()->destroy();
  // Ask running tasks to stop (Java interrupts the workers). The requests run
  // user stop_callbacks, so they are made after our locks are released.
  std::vector<task_ptr> running;
  {
    std::lock_guard lock(mutex_);
    for (worker& w : workers_) {
      std::lock_guard current(w.current_mutex);
      if (w.current) running.emplace_back(w.current);  // the worker holds a reference while current is set
    }
  }
  for (task_ptr& t : running) t->request_stop();
  std::vector<task_ptr> never_started;
  never_started.reserve(drained.size());
  for (task_ptr& t : drained) {
    t->set_owner(nullptr);  // from now on the caller owns it; the pool may be gone when it runs
    if (t->is_internal()) {
      if (complete_waits) {
        // A timer service's wake-up: its waits get operation_aborted.
        const pool_core* outer = std::exchange(aborting_waits_of, this);
        t->cancel(false);
        aborting_waits_of = outer;
      } else {
        t->discard();  // the pool is being destroyed: Asio's rule, no call
      }
    } else if (t->status() == task_status::pending) {
      never_started.push_back(std::move(t));
    }
  }
  poke_quiet_waiters();
  try_terminate();
  return never_started;
}

void pool_core::try_terminate() {
  {
    std::lock_guard lock(mutex_);
    const run_state s = state_.load();
    if (s == run_state::running || s >= run_state::tidying) return;
    // After shutdown(), queued work and outstanding tracked work (a pending
    // timer wait, a work guard: completions still to be delivered here) keep
    // the pool alive, as they keep io_context::run() from returning.
    if (s == run_state::shutdown && (!queue_.empty() || outstanding_work_.load() != 0)) return;
    if (live_.load() != 0 || exiting_ != 0) return;
    state_.store(run_state::tidying);
  }
  if (options_.terminated) {
    try {
      options_.terminated();
    } catch (...) {
      report_untied_error(std::current_exception(), "the terminated hook");
    }
  }
  pool_wait_op* terminated_waits = nullptr;
  pool_wait_op* quiet_waits = nullptr;
  {
    std::lock_guard lock(mutex_);
    state_.store(run_state::terminated);
    terminated_waits = std::exchange(termination_waiters_, nullptr);
    quiet_waits = std::exchange(quiet_waiters_, nullptr);  // a terminated pool is quiet
    update_quiet_watched_locked();
    quiet_cv_.notify_all();
  }
  termination_cv_.notify_all();
  // Lock, collect, unlock, complete. This thread terminated the pool, which
  // runs nothing posted from now on: a handler of its own runs here.
  pool_wait_completion how;
  how.pool_runs_posted_work = false;
  how.may_run_here = true;
  complete_pool_waits(terminated_waits, how);
  complete_pool_waits(quiet_waits, how);
}

bool pool_core::wait_for_termination_until(time_point limit) {
  if (state_.load() == run_state::terminated) return true;
  if (limit <= clock::now()) return false;
  if (running_in_this_thread())
    throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                            "chronopool: waiting for termination from one of the pool's own threads");
  std::unique_lock lock(mutex_);
  auto terminated = [&] { return state_.load() == run_state::terminated; };
  if (is_never(limit)) {
    termination_cv_.wait(lock, terminated);
    return true;
  }
  return termination_cv_.wait_until(lock, limit, terminated);
}

void pool_core::join() {
  if (running_in_this_thread())
    throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                            "chronopool: join called from one of the pool's own threads");
  shutdown();
  wait_for_termination_until(time_point::max());
  reap_threads(true);
}

void pool_core::close() {
  // Nobody will run what never started: cancel it, so no future waits forever.
  for (task_ptr& t : stop_all(false)) t->cancel(false);
  if (running_in_this_thread()) {
    // Destroyed from inside one of our own tasks: this thread cannot join
    // itself. Every thread keeps the core alive through its own reference,
    // so detach them all; the core goes away with the last of them.
    std::lock_guard lock(mutex_);
    for (worker& w : workers_)
      if (w.thread.joinable()) w.thread.detach();
    return;
  }
  wait_for_termination_until(time_point::max());
  reap_threads(true);
}

// ---- queue control --------------------------------------------------------------

bool pool_core::remove(task_base& t) {
  if (!queue_.remove(t)) return false;
  t.cancel(false);
  poke_quiet_waiters();
  try_terminate();
  return true;
}

std::size_t pool_core::purge() {
  const auto dropped = queue_.remove_if([](const task_base& t) { return t.cancelled(); });
  poke_quiet_waiters();
  try_terminate();
  return dropped.size();
}

void pool_core::on_cancelled(task_base& t) noexcept {
  if (!remove_on_cancel.load() || !queue_.remove(t)) return;
  poke_quiet_waiters();
  if (state_.load() != run_state::running) {
    try_terminate();
  } else if (queue_.empty() && (allow_core_timeout_.load() || live_.load() > core_size_.load())) {
    // A surplus thread that waits untimed for queued work may now retire.
    queue_.interrupt_waiters();
  }
}

bool pool_core::reschedule(task_base& t) {
  if (!can_run_in_current_state(t)) return false;
  queue_.offer(task_ptr(&t));  // re-arming is never refused for the max_queued bound
  // Same recheck as enqueue(): a shutdown may have swept the queue meanwhile.
  if (!can_run_in_current_state(t) && queue_.remove(t)) return false;
  try {
    ensure_thread_for(t);
  } catch (...) {
    return false;  // taken back out: no thread runs (the caller cancels it)
  }
  return true;
}

void pool_core::report_error(std::exception_ptr error, const task_base& t) noexcept {
  try {
    if (options_.error_handler) {
      const task_view view(t);
      options_.error_handler(error, &view);
    } else {
      fmt::print(stderr, "chronopool: task #{} failed: {}\n", t.sequence(), exception_text(error));
    }
  } catch (...) {
    // An error handler that throws has nowhere left to report to.
  }
}

void pool_core::report_untied_error(std::exception_ptr error, const char* source) noexcept {
  try {
    if (options_.error_handler) {
      options_.error_handler(error, nullptr);
    } else {
      fmt::print(stderr, "chronopool: {} threw: {}\n", source, exception_text(error));
    }
  } catch (...) {
  }
}

// ---- sizing -----------------------------------------------------------------------

void pool_core::set_core_pool_size(std::size_t n) {
  if (n > 4096)
    throw std::invalid_argument(fmt::format("chronopool: core pool size {} exceeds the maximum of 4096", n));
  const std::size_t old = core_size_.exchange(n);
  if (live_.load() > n) {
    queue_.interrupt_waiters();  // idle threads re-check and retire after keep_alive
  } else if (n > old) {
    // Start threads for work already queued, as Java does.
    std::size_t k = std::min(n - old, queue_.size());
    while (k-- > 0 && add_worker(n)) {
    }
  }
}

bool pool_core::prestart_core_thread() { return add_worker(core_size_.load()); }

std::size_t pool_core::prestart_core_threads() {
  std::size_t started = 0;
  while (add_worker(core_size_.load())) ++started;
  return started;
}

void pool_core::allow_core_thread_timeout(bool allow) {
  if (allow_core_timeout_.exchange(allow) != allow && allow) queue_.interrupt_waiters();
}

// ---- introspection ------------------------------------------------------------------

pool_stats pool_core::stats() const {
  pool_stats s;
  s.state = state_.load();
  s.core_pool_size = core_size_.load();
  {
    std::lock_guard lock(mutex_);
    s.pool_size = live_.load();
    s.largest_pool_size = largest_;
  }
  s.active_count = active_.load();
  s.queued_count = queue_.size();
  s.completed_task_count = completed_.load();
  s.task_count = s.completed_task_count + s.active_count + s.queued_count;
  s.lateness = lateness_.summary();
  return s;
}

std::size_t pool_core::pool_size() const { return live_.load(); }

std::size_t pool_core::largest_pool_size() const {
  std::lock_guard lock(mutex_);
  return largest_;
}

bool pool_core::running_in_this_thread() const noexcept { return this_thread_pool == this; }

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// How a pool stops: shutdown() and its policies, shutdown_now(), the
// transition to TERMINATED with its hook and waits, and waiting for it
// (wait_for_termination_until, join, close).
#include <chronopool/detail/pool/pool_core.hpp>

#include "pool_thread_state.hpp"

#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace chronopool::detail {

void pool_core::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (state_.load() == run_state::running) state_.store(run_state::shutdown);
  }
  // Apply the shutdown policies to what is queued (Java's onShutdown).
  const bool keep_periodic = continue_periodic_after_shutdown.load();
  const bool keep_delayed = execute_delayed_after_shutdown.load();
  const time_point now = this->now();
  auto dropped = queue_.remove_if([&](const task_base& t) {
    if (t.cancelled()) return true;
    return t.is_periodic() ? !keep_periodic : (!keep_delayed && t.deadline() > now);
  });
  for (auto& t : dropped) t->cancel(false);
  if (!keep_periodic) cancel_parked();  // paused periodic tasks end as queued ones do
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
  cancel_parked();  // paused tasks are not handed back: they are cancelled
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
  // Nothing queued follows the wall clock any more: what never started is
  // the caller's now (or is cancelled, by close()).
  wall_.clear();
  wall_.stop();
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
    // A paused periodic task kept after shutdown() (continue_existing_periodic_
    // tasks_after_shutdown) is live work too: it may be resumed.
    if (s == run_state::shutdown) {
      const std::lock_guard parked_lock(parked_mutex_);
      if (!parked_.empty()) return;
    }
    if (live_.load() != 0 || exiting_ != 0) return;
    state_.store(run_state::tidying);
  }
  if (options_.terminated) {
    try {
      options_.terminated();
    } catch (...) {
      report_untied_error(std::current_exception(), "the terminated hook", "hook_failed");
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
  wall_.stop();  // nothing is left to follow the wall clock
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

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What enters the pool's queue and what leaves it before it runs: tasks
// scheduled by the public calls, executor work and posted functions, timer
// wake-ups, re-armed periodic tasks, and removal and purging of queued tasks.
#include <chronopool/detail/pool/pool_core.hpp>

#include "pool_thread_state.hpp"

#include <algorithm>
#include <utility>

namespace chronopool::detail {

// The stopped pool whose timer waits this thread is completing with
// operation_aborted inside shutdown_now(): handlers bound to that pool's own
// executor run here, since none of its threads will run anything again.
constinit thread_local const pool_core* aborting_waits_of = nullptr;

void pool_core::enqueue(const task_ptr& t, const char* where, task_owner* owner) {
  t->set_sequence(sequence_.fetch_add(1, std::memory_order_relaxed));
  t->set_owner(owner != nullptr ? owner : this);
  if (state_.load() != run_state::running) return reject(t, where, true);
  switch (queue_.offer_submitted(t, options_.max_queued)) {
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

void pool_core::enqueue_wall(const task_ptr& t, sys_time instant, const char* where) {
  // Registered before it is queued, so that no pool thread takes it
  // unregistered; its owner is the registry, which is how run_task() knows it.
  const std::uint64_t stamp = wall_.add(t, instant);
  try {
    enqueue(t, where, &wall_);
  } catch (...) {
    wall_.forget(*t);
    throw;
  }
  wall_.settle(t, stamp);
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
  t->set_deadline(now());
  submit_internal(t, true);
}

void pool_core::submit_function(queued_function* f) {
  // Accepted until STOP, like other executor work (see submit_internal).
  // From STOP on it is destroyed unrun, except while shutdown_now() is
  // completing this pool's timer waits on the calling thread.
  auto refused = [&] {
    if (aborting_waits_of == this) {
      run_function(*f, nullptr);
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
    report_untied_error(std::current_exception(), "starting a pool thread", "thread_start_failed");
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
  count_cancelled();
  if (!remove_on_cancel.load() || !queue_.remove(t)) return;
  poke_quiet_waiters();
  if (state_.load() != run_state::running) {
    try_terminate();
  } else if (queue_.empty() && (allow_core_timeout_.load() || live_.load() > core_size_.load())) {
    // A surplus thread that waits untimed for queued work may now retire.
    queue_.interrupt_waiters();
  }
}

bool pool_core::withdraw(task_base& t) noexcept {
  // Under the queue's lock: a worker either took the task before (false:
  // the caller treats it as running) or cannot take it any more.
  try {
    return queue_.remove(t);
  } catch (...) {
    return false;
  }
}

bool pool_core::park(task_base& t, bool from_queue) noexcept {
  // Lock order: a task's control lock, then parked_mutex_, then the queue's.
  std::lock_guard lock(parked_mutex_);
  // A shutdown sets the state before it sweeps parked_ under this lock, so
  // a task parked here is either swept or refused.
  if (!can_run_in_current_state(t)) return false;
  try {
    parked_.emplace_back(&t);
  } catch (...) {
    return false;  // no memory: the pause is refused, the task runs on
  }
  if (from_queue && !withdraw(t)) {
    parked_.pop_back();
    return false;
  }
  return true;
}

void pool_core::unpark(task_base& t) noexcept {
  task_ptr found;  // released after the lock: it may be the last reference
  {
    std::lock_guard lock(parked_mutex_);
    const auto it = std::find_if(parked_.begin(), parked_.end(), [&](const task_ptr& p) { return p.get() == &t; });
    if (it == parked_.end()) return;  // swept by a shutdown
    found = std::move(*it);
    *it = std::move(parked_.back());
    parked_.pop_back();
  }
  // After shutdown() a paused periodic task kept the pool alive (see
  // try_terminate); cancelled, it may have been the last thing to.
  if (state_.load() != run_state::running) try_terminate();
}

void pool_core::cancel_parked() noexcept {
  std::vector<task_ptr> parked;
  {
    std::lock_guard lock(parked_mutex_);
    parked.swap(parked_);
  }
  for (task_ptr& t : parked) t->cancel(false);
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

}  // namespace chronopool::detail

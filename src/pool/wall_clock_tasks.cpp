// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The registry of a pool's wall-clock tasks; see
// detail/pool/wall_clock_tasks.hpp.
#include <chronopool/detail/pool/wall_clock_tasks.hpp>

#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <utility>

namespace chronopool::detail {

wall_clock_tasks::wall_clock_tasks(task_owner& pool, delayed_work_queue& queue) noexcept
    : pool_(pool), queue_(queue) {}

wall_clock_tasks::~wall_clock_tasks() {
  stop();
  // The pool drains its functions before it is destroyed; should a pass be
  // left (a pool never closed), the queue must not call it after us.
  if (pass_queued_.load()) queue_.withdraw_function(&pass_);
}

// ---- registration ----------------------------------------------------------------

std::uint64_t wall_clock_tasks::add(const task_ptr& t, sys_time instant) {
  {
    const std::lock_guard lock(subscription_mutex_);
    // On a manual clock the real system clock's steps do not concern us.
    if (!subscribed_ && !stopped_ && manual_time_of() == nullptr) {
      subscribe_clock_steps(*this);
      subscribed_ = true;
    }
  }
  // The step count before the deadline is measured: a step noticed after
  // this read makes settle() queue a pass (see the file comment of the
  // header); one noticed before it is in system_now() already.
  const std::uint64_t stamp = steps_.load();
  t->set_deadline(deadline_for(instant));
  const std::lock_guard lock(mutex_);
  entries_.insert_or_assign(t.get(), entry{t, instant});
  count_.store(entries_.size());
  return stamp;
}

void wall_clock_tasks::settle(const task_ptr& t, std::uint64_t stamp) noexcept {
  if (t->done()) {
    forget(*t);  // rejected (cancelled or run by the caller), or run already
  } else {
    recheck(stamp);
  }
}

task_ptr wall_clock_tasks::take_entry(const task_base& t) noexcept {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(&t);
  if (it == entries_.end()) return {};
  task_ptr out = std::move(it->second.task);
  entries_.erase(it);
  count_.store(entries_.size());
  return out;
}

void wall_clock_tasks::forget(const task_base& t) noexcept {
  // Released here, unlocked: the last reference runs the callable's destructor.
  task_ptr released = take_entry(t);
}

void wall_clock_tasks::set_instant(const task_base& t, sys_time instant) noexcept {
  const std::lock_guard lock(mutex_);
  if (const auto it = entries_.find(&t); it != entries_.end()) it->second.instant = instant;
}

void wall_clock_tasks::clear() noexcept {
  std::map<const task_base*, entry> dropped;
  {
    const std::lock_guard lock(mutex_);
    dropped.swap(entries_);
    count_.store(0);
  }
}

void wall_clock_tasks::stop() noexcept {
  const std::lock_guard lock(subscription_mutex_);
  stopped_ = true;
  if (!subscribed_) return;
  // Under subscription_mutex_, which on_clock_step() never takes: once this
  // returns, no notification is running or will run.
  unsubscribe_clock_steps(*this);
  subscribed_ = false;
}

// ---- the pool's threads ------------------------------------------------------------

bool wall_clock_tasks::hold_back(const task_ptr& t) noexcept {
  sys_time instant;
  {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(t.get());
    if (it == entries_.end()) return false;
    instant = it->second.instant;
  }
  if (wall_now() >= instant) return false;
  // Taken at a deadline that a step (backward) made stale, before the pass
  // for that step re-timed it: back in the queue at the right deadline.
  const std::uint64_t stamp = steps_.load();
  t->set_deadline(deadline_for(instant));
  requeue(*t, stamp);
  return true;
}

void wall_clock_tasks::after_run(task_base& t) noexcept {
  if (t.done()) forget(t);
}

void wall_clock_tasks::requeue(task_base& t, std::uint64_t stamp) noexcept {
  bool kept = false;
  try {
    kept = pool_.reschedule(t);
  } catch (...) {
    kept = false;
  }
  if (!kept) {
    t.cancel(false);  // the pool no longer runs it (shut down meanwhile)
    return;
  }
  recheck(stamp);
}

// ---- steps -------------------------------------------------------------------------

void wall_clock_tasks::on_clock_step() noexcept {
  // The watcher's thread, the registry's lock held: count, and hand the
  // work to a pool thread. With nothing registered there is nothing to
  // move, and a pass queued in a pool without threads would hold off its
  // termination.
  steps_.fetch_add(1);
  if (count_.load() != 0) request_pass();
}

void wall_clock_tasks::recheck(std::uint64_t stamp) noexcept {
  if (steps_.load() != stamp) request_pass();
}

void wall_clock_tasks::request_pass() noexcept {
  if (pass_queued_.exchange(true)) return;  // the queued pass will see this step too
  if (!queue_.offer_function(&pass_)) pass_queued_.store(false);  // closed: the pool runs nothing more
}

void wall_clock_tasks::pass_node::call(queued_function* f, bool run) {
  wall_clock_tasks& r = static_cast<pass_node*>(f)->registry_;
  // Cleared before the pass reads anything: a step from here on queues
  // another one.
  r.pass_queued_.store(false);
  if (run) r.retime_all();
}

void wall_clock_tasks::retime_all() noexcept {
  // One entry at a time, the lock released while it is re-queued (the pool
  // may start a thread there, whose factory may submit): the walk resumes
  // after the last key seen, which entries added or removed meanwhile do
  // not disturb.
  const task_base* last = nullptr;
  for (bool first = true;; first = false) {
    task_ptr t;
    sys_time instant;
    {
      const std::lock_guard lock(mutex_);
      const auto it = first ? entries_.begin() : entries_.upper_bound(last);
      if (it == entries_.end()) return;
      last = it->first;
      t = it->second.task;
      instant = it->second.instant;
    }
    const std::uint64_t stamp = steps_.load();
    // Not in the queue: a pool thread holds it (running it, or re-queueing
    // it after hold_back or a periodic run, which re-time it themselves).
    if (!queue_.remove(*t)) continue;
    t->set_deadline(deadline_for(instant));
    requeue(*t, stamp);
  }
}

// ---- task_owner ------------------------------------------------------------------

void wall_clock_tasks::on_cancelled(task_base& t) noexcept {
  task_ptr released = take_entry(t);
  pool_.on_cancelled(t);
}

bool wall_clock_tasks::reschedule(task_base& t) {
  sys_time instant;
  bool registered = false;
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(&t); it != entries_.end()) {
      instant = it->second.instant;
      registered = true;
    }
  }
  if (!registered) return pool_.reschedule(t);
  // The deadline the run armed was measured before the run ended; a step
  // during the run would not have reached it (it was out of the queue).
  const std::uint64_t stamp = steps_.load();
  t.set_deadline(deadline_for(instant));
  const bool kept = pool_.reschedule(t);
  if (kept) recheck(stamp);
  return kept;
}

void wall_clock_tasks::report_error(std::exception_ptr error, const task_base& t) noexcept {
  pool_.report_error(std::move(error), t);
}

void note_wall_instant(const task_base& t, sys_time instant) noexcept {
  if (auto* r = dynamic_cast<wall_clock_tasks*>(t.owner())) r->set_instant(t, instant);
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The pool's own asynchronous and quiescence waits: termination waits
// (async_join, async_wait_for_termination) and quiet waits (wait_until_quiet,
// async_wait_quiet). See detail/pool/pool_wait_op.hpp and docs/design.md.
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/support/intrusive_list.hpp>

#include <mutex>
#include <system_error>

namespace chronopool::detail {

void pool_core::complete_pool_waits(pool_wait_op* list, const pool_wait_completion& how) noexcept {
  complete_oldest_first<member_link<pool_wait_op, &pool_wait_op::next_>>(
      list, [&](pool_wait_op* op) { op->func_(op, how); });
}

void pool_core::start_pool_wait(pool_wait_kind kind, pool_wait_op* op) noexcept {
  pool_wait_completion how;
  {
    std::lock_guard lock(mutex_);
    const run_state s = state_.load();
    if (kind == pool_wait_kind::termination) {
      if (s != run_state::terminated) {
        op->next_ = termination_waiters_;
        termination_waiters_ = op;
        return;
      }
    } else if (s != run_state::terminated && !snapshot_locked().quiet_before(op->horizon)) {
      op->next_ = quiet_waiters_;
      quiet_waiters_ = op;
      update_quiet_watched_locked();
      return;
    }
    how.pool_runs_posted_work = s < run_state::stop;
  }
  op->func_(op, how);  // posted by the operation, never called here
}

void pool_core::cancel_pool_wait(const void* key) noexcept {
  pool_wait_op* found = nullptr;
  pool_wait_completion how;
  how.aborted = true;
  {
    std::lock_guard lock(mutex_);
    for (pool_wait_op** list : {&termination_waiters_, &quiet_waiters_}) {
      for (pool_wait_op** link = list; *link != nullptr; link = &(*link)->next_) {
        if ((*link)->cancel_key == key) {
          found = *link;
          *link = found->next_;
          break;
        }
      }
      if (found != nullptr) break;
    }
    update_quiet_watched_locked();
    how.pool_runs_posted_work = state_.load() < run_state::stop;
  }
  if (found != nullptr) found->func_(found, how);
}

pool_core::quiet_snapshot pool_core::snapshot_locked() const {
  // Finished counts first, then the queue's taken count and earliest
  // deadline under its lock. finished <= taken always, and both only grow:
  // equal counts mean that when the finished counts were read nothing taken
  // was still running and nothing was taken since, so at the queue's
  // reading the pool ran nothing and held exactly what it reports.
  std::uint64_t finished = retired_finished_;
  for (const worker& w : workers_) finished += w.finished.load(std::memory_order_acquire);
  const auto a = queue_.current_activity();
  return {finished == a.taken, a.earliest};
}

void pool_core::collect_quiet_locked(pool_wait_op*& ready) {
  const quiet_snapshot snap = snapshot_locked();
  if (!snap.idle) return;
  if (quiet_sync_waiters_ != 0) quiet_cv_.notify_all();  // each checks its own horizon
  for (pool_wait_op** link = &quiet_waiters_; *link != nullptr;) {
    pool_wait_op* op = *link;
    if (snap.quiet_before(op->horizon)) {
      *link = op->next_;
      op->next_ = ready;
      ready = op;
    } else {
      link = &op->next_;
    }
  }
  update_quiet_watched_locked();
}

void pool_core::poke_quiet_waiters() noexcept {
  if (!quiet_watched_.load(std::memory_order_relaxed)) return;
  pool_wait_op* ready = nullptr;
  {
    std::lock_guard lock(mutex_);
    try {
      collect_quiet_locked(ready);
    } catch (...) {
      // Only the worker loop's check remains; it runs whenever a thread goes idle.
    }
  }
  pool_wait_completion how;
  how.pool_runs_posted_work = state_.load() < run_state::stop;
  complete_pool_waits(ready, how);
}

bool pool_core::wait_until_quiet(time_point horizon, time_point limit) {
  if (running_in_this_thread())
    throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                            "chronopool: wait_until_quiet called from one of the pool's own threads");
  std::unique_lock lock(mutex_);
  ++quiet_sync_waiters_;
  update_quiet_watched_locked();
  struct unregister {
    pool_core& core;
    ~unregister() {
      --core.quiet_sync_waiters_;
      core.update_quiet_watched_locked();
    }
  } guard{*this};
  for (;;) {
    if (snapshot_locked().quiet_before(horizon)) return true;
    if (is_never(limit)) {
      quiet_cv_.wait(lock);
    } else if (quiet_cv_.wait_until(lock, limit) == std::cv_status::timeout) {
      return snapshot_locked().quiet_before(horizon);
    }
  }
}

void start_pool_wait(pool_core& core, pool_wait_kind kind, pool_wait_op* op) noexcept {
  core.start_pool_wait(kind, op);
}

void cancel_pool_wait(const std::weak_ptr<pool_core>& core, const void* key) noexcept {
  if (auto c = core.lock()) c->cancel_pool_wait(key);
}

void shutdown_core(pool_core& core) { core.shutdown(); }

}  // namespace chronopool::detail

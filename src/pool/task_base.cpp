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

}  // namespace

void task_base::set_periodic(duration period, time_point first, const periodic_options& opts) noexcept {
  period_ = period;
  ideal_ = first;
  continue_after_error_ = opts.continue_after_error;
  missed_ticks_ = opts.missed_ticks;
  jitter_ = opts.jitter;
  leeway_ = opts.leeway;
  set_deadline(run_deadline(first, period, jitter_, leeway_));
}

bool task_base::try_start() noexcept {
  auto expected = task_status::pending;
  return status_.compare_exchange_strong(expected, task_status::running);
}

std::exception_ptr task_base::run_here() noexcept {
  if (!try_start()) return {};
  const time_point started = clock::now();
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

time_point task_base::next_deadline(time_point started, time_point finished) noexcept {
  ideal_ = kind_ == task_kind::fixed_delay
               ? saturating_add(finished, period_)
               : next_fixed_rate_instant(ideal_, period_, started, missed_ticks_);
  return run_deadline(ideal_, period_, jitter_, leeway_);
}

void task_base::finish_run(std::exception_ptr error, time_point started) noexcept {
  task_owner* const o = owner();
  if (!is_periodic() || (error && !continue_after_error_) || o == nullptr || ends_schedule_) {
    // One-shot work, a periodic task stopped by its error or ended by its
    // run, or a periodic task run once by hand after shutdown_now(): the run
    // is the last one.
    if (error && reports_errors_ && o != nullptr) o->report_error(error, *this);
    // Decide the status before handing the error over: in one argument list
    // the move could happen first (evaluation order is unspecified).
    const task_status final_status = error ? task_status::failed : task_status::succeeded;
    complete(final_status, std::move(error));
    return;
  }
  if (error) o->report_error(error, *this);  // continue_after_error: keep going
  set_deadline(next_deadline(started, clock::now()));
  auto expected = task_status::running;
  if (!status_.compare_exchange_strong(expected, task_status::pending)) {
    release_callable();  // cancelled during the run; the canceller notified
    return;
  }
  bool requeued = false;
  try {
    requeued = o->reschedule(*this);
  } catch (...) {
    requeued = false;
  }
  if (!requeued) cancel(false);
}

bool task_base::cancel(bool may_interrupt) noexcept {
  auto s = status_.load();
  for (;;) {
    if (s >= task_status::succeeded) return false;
    if (s == task_status::running && internal_) return false;  // a firing wait: too late
    if (status_.compare_exchange_weak(s, task_status::cancelled)) break;
  }
  if (s == task_status::pending) {
    // Never ran and never will: free what the callable holds at once (or,
    // for a timer wait, hand its handler operation_aborted).
    on_cancel_before_run();
    if (task_owner* o = owner()) o->on_cancelled(*this);
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

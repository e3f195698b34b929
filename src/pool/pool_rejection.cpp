// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the pool does with a task it cannot accept: the rejection policies,
// a user's rejection handler, and the rejected_task it is given.
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/errors.hpp>
#include <chronopool/rejected_task.hpp>

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace chronopool {
namespace {

rejected_execution rejection_error(const char* where, rejection_reason reason, std::size_t max_queued) {
  return rejected_execution(
      reason, reason == rejection_reason::shutdown
                  ? fmt::format("chronopool: {} rejected: the pool is shut down", where)
                  : fmt::format("chronopool: {} rejected: {} tasks already queued (max_queued)", where, max_queued));
}

}  // namespace

void rejected_task::run() {
  if (task_->is_periodic())
    throw std::logic_error(fmt::format(
        "chronopool: rejected_task::run: a periodic task rejected by {} cannot run on the submitting thread", call_));
  task_->run_here();  // errors: to the future, or (execute) to the error handler
}

void rejected_task::discard() noexcept { task_->cancel(false); }

bool rejected_task::done() const noexcept { return task_->done(); }

rejected_execution rejected_task::exception() const { return rejection_error(call_, reason_, max_queued_); }

namespace detail {

namespace {
// The pool whose rejected task this thread is dropping: its cancellation is
// counted as a rejection, not as a cancellation.
constinit thread_local const pool_core* dropping_rejected = nullptr;
}  // namespace

void pool_core::drop_rejected(const task_ptr& t) noexcept {
  const pool_core* outer = std::exchange(dropping_rejected, this);
  t->cancel(false);
  dropping_rejected = outer;
}

void pool_core::count_cancelled() noexcept {
  if (dropping_rejected != this) cancelled_.fetch_add(1, std::memory_order_relaxed);
}

void pool_core::reject(const task_ptr& t, const char* where, bool after_shutdown) {
  const rejection_reason reason = after_shutdown ? rejection_reason::shutdown : rejection_reason::queue_full;
  rejected_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const std::function<void(rejected_task&)>> handler;
  {
    std::lock_guard lock(handler_mutex_);
    handler = rejection_handler_;
  }
  if (handler) return reject_to_handler(*handler, t, where, reason);

  auto refuse = [&] {
    drop_rejected(t);
    throw rejection_error(where, reason, options_.max_queued);
  };
  switch (rejection.load()) {
    case rejection_policy::abort: refuse(); break;
    case rejection_policy::discard: drop_rejected(t); break;
    case rejection_policy::caller_runs:
      if (after_shutdown) {
        drop_rejected(t);
      } else if (t->is_periodic()) {
        refuse();
      } else {
        t->run_here();
      }
      break;
    case rejection_policy::discard_oldest:
      if (after_shutdown) {
        drop_rejected(t);
        break;
      }
      // Make room by dropping whatever would run next, until ours fits.
      for (;;) {
        const auto r = queue_.offer_within(t, options_.max_queued);
        if (r != delayed_work_queue::offer_status::full) break;
        task_ptr oldest = queue_.pop_head();
        if (!oldest) {  // max_queued == 0: there is nothing to drop
          drop_rejected(t);
          return;
        }
        oldest->cancel(false);
      }
      try {
        ensure_thread_for(*t);
      } catch (...) {
        drop_rejected(t);  // taken back out: no thread runs and none could start
        throw;
      }
      break;
  }
}

void pool_core::reject_to_handler(const std::function<void(rejected_task&)>& handler, const task_ptr& t,
                                  const char* where, rejection_reason reason) {
  rejected_task r(*t, reason, where, options_.max_queued);
  // The handler's discard() is a rejection too, not a cancellation.
  const pool_core* outer = std::exchange(dropping_rejected, this);
  try {
    handler(r);
  } catch (...) {
    dropping_rejected = outer;
    drop_rejected(t);  // a no-op if the handler ran it first
    throw;
  }
  dropping_rejected = outer;
  drop_rejected(t);  // left by the handler: dropped, its future cancelled
}

void pool_core::set_rejection_handler(std::function<void(rejected_task&)> handler) {
  auto h = handler ? std::make_shared<const std::function<void(rejected_task&)>>(std::move(handler)) : nullptr;
  std::lock_guard lock(handler_mutex_);
  rejection_handler_ = std::move(h);
}

bool pool_core::has_rejection_handler() const {
  std::lock_guard lock(handler_mutex_);
  return rejection_handler_ != nullptr;
}

}  // namespace detail
}  // namespace chronopool

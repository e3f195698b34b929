// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the parts of a timer shard's implementation share: the work a locked section
// leaves for after the unlock, the wake-ups it arms, joining the abort batch, the burst grain.
#pragma once

#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>

#include <chronopool/detail/config/asio.hpp>
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/steady_timer.hpp>
#else
#include <boost/asio/steady_timer.hpp>
#endif

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

namespace chronopool::detail {

// Fired waits per function when a burst is shared with the context's other
// threads (Asio's reactor shares expired timers through its scheduler queue
// the same way): the thread that found them runs the first chunk, the rest
// are posted in order.
constexpr std::size_t share_grain = 16;

/// The native wake-up of a shard whose context is not driven by a pool.
struct native_wakeup {
  explicit native_wakeup(const asio_ns::any_io_executor& ex) : timer(ex) {}
  asio_ns::steady_timer timer;
};

/// The pool wake-up: an internal one-shot task due at the shard's wake time.
class shard_wakeup final : public task_base {
 public:
  explicit shard_wakeup(std::shared_ptr<timer_shard> shard) noexcept
      : task_base(task_kind::one_shot), shard_(std::move(shard)) {
    set_internal(true);
    // A handler it completes inline that throws goes to the pool's error
    // handler, as the exception of any function the pool runs does.
    set_reports_errors(true);
  }
  /// Set by the shard before it cancels a wake-up it no longer needs.
  std::atomic<bool> superseded{false};

  void discard() noexcept override {
    discarding_ = true;
    cancel(false);
  }

 private:
  void do_invoke() override { shard_->on_wakeup(*this); }
  void release_callable() noexcept override {}
  void destroy() noexcept override { delete this; }
  void on_cancel_before_run() noexcept override {
    if (!superseded.load()) shard_->on_wakeup_cancelled(*this, discarding_);
  }

  std::shared_ptr<timer_shard> shard_;
  bool discarding_ = false;
};

/// What a locked section decides and the caller does once the lock is
/// released: posting, cancelling and submitting run other code (Asio's and
/// the pool's), and releasing work may run a pool's terminated hook.
struct after_unlock {
  explicit after_unlock(timer_shard& s) noexcept : shard(s) {}
  after_unlock(const after_unlock&) = delete;
  after_unlock& operator=(const after_unlock&) = delete;

  // Declared first, so released last: after the posts and submissions that
  // take over the context's work.
  std::optional<asio_ns::any_io_executor> released_work;
  timer_shard& shard;
  bool post_drain = false;
  bool shrink_buffers = false;  // an abort left an index buffer sparse
  task_ptr superseded;  // a wake-up no longer needed
  task_ptr submit;      // a wake-up to queue in the pool
  wait_list dropped;    // waits drained from the inbox in a shutdown: destroyed uncalled
  // A timer's inline wait that a call on the timer took out of the shard
  // when no memory could be had for it: completed with operation_aborted
  // here (or, complete_here_drops, destroyed uncalled) as a last resort.
  timer_impl* complete_here = nullptr;
  bool complete_here_drops = false;
  bool drop_parked = false;  // inline waits dropped in a shutdown wait in the parked list

  /// The noexcept part, then the submission, which may throw.
  void run() {
    finish();
    if (submit) {
      const task_ptr w = std::move(submit);
      shard.pool_->submit_internal(w);
    }
  }
  /// run(), and when the wake-up cannot be queued, forget it so that the next
  /// wait arms another (the waits stay queued meanwhile).
  void run_best_effort() noexcept {
    const task_ptr w = submit;
    try {
      run();
    } catch (...) {
      shard.forget_wakeup(w);
    }
  }
  void finish() noexcept {
    if (!dropped.empty()) timer_shard::discard(dropped);
    if (complete_here != nullptr) finish_here();
    if (drop_parked) {
      drop_parked = false;
      shard.drop_parked();
    }
    if (post_drain) {
      post_drain = false;
      shard.post_abort_drain();
    }
    if (superseded) {
      static_cast<shard_wakeup&>(*superseded).superseded.store(true);
      superseded->cancel(false);  // the pool takes it out of its queue
      superseded.reset();
    }
    if (shrink_buffers) {
      shrink_buffers = false;
      shard.shrink_index_buffers();
    }
  }
  void finish_here() noexcept {
    timer_impl& t = *std::exchange(complete_here, nullptr);
    alignas(void*) unsigned char handler[sizeof(void*)];
    const inline_wait_ops* ops = t.inline_ops();
    // Out of the timer first: the handler may end the timer's life.
    ops->relocate(handler, t.inline_storage());
    t.free_inline();
    if (std::exchange(complete_here_drops, false)) return ops->destroy(handler);
    try {
      ops->complete(handler, asio_ns::error::operation_aborted);
    } catch (...) {
      // Completed in a call that cannot report it: the handler's exception is lost.
    }
  }
  // Every path that rewakes leaves a pool wake-up to submit here, unless it
  // ran run() itself to see the error: a wake-up armed but never queued
  // would leave its waits with nobody to fire them.
  ~after_unlock() { run_best_effort(); }
};

void timer_shard::batch_locked(wait_op_base& op, after_unlock& later) noexcept {
  batch_.push_back(&op);
  joined_batch_locked(later);
}

void timer_shard::joined_batch_locked(after_unlock& later) noexcept {
  ++batch_waits_;
  if (!drain_posted_) {
    drain_posted_ = true;
    later.post_drain = true;
  }
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Inline waits parked on the shard's list when no memory could be had to move
// them out of their timers: retried, settled by a call on the timer, dropped.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <mutex>

namespace chronopool::detail {

void timer_shard::park_locked(timer_impl& t, timer_impl::parked_as as, after_unlock& later) noexcept {
  t.set_parked(as);
  t.set_next_parked(parked_);
  parked_ = &t;
  if (as == timer_impl::parked_as::dropped) {
    later.drop_parked = true;
  } else if (!drain_posted_) {
    // The abort drain tries again (and every collect); until memory is
    // back, it waits in the list, never lost, never run twice.
    drain_posted_ = true;
    later.post_drain = true;
  }
}

void timer_shard::unlink_parked_locked(timer_impl* prev, timer_impl& t) noexcept {
  if (prev != nullptr) {
    prev->set_next_parked(t.next_parked());
  } else {
    parked_ = t.next_parked();
  }
  t.set_next_parked(nullptr);
}

bool timer_shard::unpark_locked(timer_impl& t) noexcept {
  timer_impl* prev = nullptr;
  for (timer_impl* p = parked_; p != nullptr; prev = p, p = p->next_parked()) {
    if (p != &t) continue;
    unlink_parked_locked(prev, t);
    return true;
  }
  return false;
}

void timer_shard::retry_parked_locked(after_unlock& later) noexcept {
  timer_impl* prev = nullptr;
  for (timer_impl* t = parked_; t != nullptr;) {
    timer_impl* const after = t->next_parked();
    const auto as = t->parked();
    // A dropped one waits for the shutdown's drop_parked().
    if (as != timer_impl::parked_as::dropped) {
      t->set_parked(timer_impl::parked_as::none);
      unlink_parked_locked(prev, *t);
      if (batch_inline_locked(*t, as == timer_impl::parked_as::aborted, later)) {
        t = after;
        continue;
      }
      // Still out of memory: back in its place.
      t->set_parked(as);
      t->set_next_parked(after);
      if (prev != nullptr) {
        prev->set_next_parked(t);
      } else {
        parked_ = t;
      }
    }
    prev = t;
    t = after;
  }
}

void timer_shard::drop_parked() noexcept {
  // One at a time, each handler moved out of its timer under the lock and
  // destroyed outside it: destroying one may destroy other timers (a
  // coroutine's frame), whose own parked waits their destructors then
  // take out of the list.
  for (;;) {
    alignas(void*) unsigned char handler[sizeof(void*)];
    const inline_wait_ops* ops = nullptr;
    {
      std::lock_guard lock(mutex_);
      timer_impl* prev = nullptr;
      timer_impl* t = parked_;
      while (t != nullptr && t->parked() != timer_impl::parked_as::dropped) {
        prev = t;
        t = t->next_parked();
      }
      if (t == nullptr) return;
      unlink_parked_locked(prev, *t);
      ops = t->inline_ops();
      ops->relocate(handler, t->inline_storage());
      t->free_inline();
    }
    ops->destroy(handler);
  }
}

std::size_t timer_shard::settle_parked_of_locked(timer_impl& t, after_unlock& later) noexcept {
  // A call on the timer found its inline wait parked: it leaves the timer
  // now (the call keeps the timer alive until it returns). A fired one is
  // still cancellable, as a fired block not claimed yet is: it counts.
  const auto as = t.parked();
  if (as == timer_impl::parked_as::none || !unpark_locked(t)) return 0;
  t.set_parked(timer_impl::parked_as::none);
  if (as == timer_impl::parked_as::dropped) {
    later.complete_here = &t;  // destroyed uncalled there: the context is going
    later.complete_here_drops = true;
    return 0;
  }
  if (as == timer_impl::parked_as::fired) {  // an abort parked was counted when it aborted
    ++cancelled_;
    ++cancelled_fired_;
  }
  // Out of the shard's hands either way: in the batch, or completed here.
  if (!batch_inline_locked(t, true, later)) {
    release_locked(1, later);
    later.complete_here = &t;
  }
  return as == timer_impl::parked_as::fired ? 1 : 0;
}

}  // namespace chronopool::detail

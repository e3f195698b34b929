// Inline waits parked in the shard's stranded list when no memory could be had
// to move them out of their timers: retried, settled by a call on the timer, dropped.
#include <chronopool/detail/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <mutex>

namespace chronopool::detail {

void timer_shard::strand_locked(timer_impl& t, timer_impl::stranded_as as, after_unlock& later) noexcept {
  t.set_stranded(as);
  t.set_next_stranded(stranded_);
  stranded_ = &t;
  if (as == timer_impl::stranded_as::dropped) {
    later.drop_stranded = true;
  } else if (!drain_posted_) {
    // The abort drain tries again (and every collect); until memory is
    // back, it waits in the list, never lost, never run twice.
    drain_posted_ = true;
    later.post_drain = true;
  }
}

void timer_shard::unlink_stranded_locked(timer_impl* prev, timer_impl& t) noexcept {
  if (prev != nullptr) {
    prev->set_next_stranded(t.next_stranded());
  } else {
    stranded_ = t.next_stranded();
  }
  t.set_next_stranded(nullptr);
}

bool timer_shard::unstrand_locked(timer_impl& t) noexcept {
  timer_impl* prev = nullptr;
  for (timer_impl* p = stranded_; p != nullptr; prev = p, p = p->next_stranded()) {
    if (p != &t) continue;
    unlink_stranded_locked(prev, t);
    return true;
  }
  return false;
}

void timer_shard::retry_stranded_locked(after_unlock& later) noexcept {
  timer_impl* prev = nullptr;
  for (timer_impl* t = stranded_; t != nullptr;) {
    timer_impl* const after = t->next_stranded();
    const auto as = t->stranded();
    // A dropped one waits for the shutdown's drop_stranded().
    if (as != timer_impl::stranded_as::dropped) {
      t->set_stranded(timer_impl::stranded_as::none);
      unlink_stranded_locked(prev, *t);
      if (batch_inline_locked(*t, as == timer_impl::stranded_as::aborted, later)) {
        t = after;
        continue;
      }
      // Still out of memory: back in its place.
      t->set_stranded(as);
      t->set_next_stranded(after);
      if (prev != nullptr) {
        prev->set_next_stranded(t);
      } else {
        stranded_ = t;
      }
    }
    prev = t;
    t = after;
  }
}

void timer_shard::drop_stranded() noexcept {
  // One at a time, each handler moved out of its timer under the lock and
  // destroyed outside it: destroying one may destroy other timers (a
  // coroutine's frame), whose own stranded waits their destructors then
  // take out of the list.
  for (;;) {
    alignas(void*) unsigned char handler[sizeof(void*)];
    const inline_wait_ops* ops = nullptr;
    {
      std::lock_guard lock(mutex_);
      timer_impl* prev = nullptr;
      timer_impl* t = stranded_;
      while (t != nullptr && t->stranded() != timer_impl::stranded_as::dropped) {
        prev = t;
        t = t->next_stranded();
      }
      if (t == nullptr) return;
      unlink_stranded_locked(prev, *t);
      ops = t->inline_ops();
      ops->relocate(handler, t->inline_storage());
      t->free_inline();
    }
    ops->destroy(handler);
  }
}

std::size_t timer_shard::settle_stranded_of_locked(timer_impl& t, after_unlock& later) noexcept {
  // A call on the timer found its inline wait stranded: it leaves the timer
  // now (the call keeps the timer alive until it returns). A fired one is
  // still cancellable, as a fired block not claimed yet is: it counts.
  const auto as = t.stranded();
  if (as == timer_impl::stranded_as::none || !unstrand_locked(t)) return 0;
  t.set_stranded(timer_impl::stranded_as::none);
  if (as == timer_impl::stranded_as::dropped) {
    later.complete_here = &t;  // destroyed uncalled there: the context is going
    later.complete_here_drops = true;
    return 0;
  }
  // Out of the shard's hands either way: in the batch, or completed here.
  if (!batch_inline_locked(t, true, later)) {
    release_locked(1, later);
    later.complete_here = &t;
  }
  return as == timer_impl::stranded_as::fired ? 1 : 0;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A timer's inline wait leaving the timer: moved into a block, or aborted as a
// record of an abort chunk in the batch; the chunks kept for reuse.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <chronopool/detail/timer/inline_abort_chunk.hpp>

namespace chronopool::detail {

namespace {

void prefetch_for_write(const inline_abort_chunk* c) noexcept {
  const auto* p = reinterpret_cast<const char*>(c);
  for (std::size_t at = 0; at < sizeof(inline_abort_chunk); at += 64) __builtin_prefetch(p + at, 1);
}

}  // namespace

inline_abort_chunk* timer_shard::chunk_at_end_locked(wait_list& list, const inline_wait_ops* ops) noexcept {
  if (!list.empty() && list.back()->is_chunk()) {
    auto* last = static_cast<inline_abort_chunk*>(list.back());
    if (last->takes(ops)) return last;
  }
  inline_abort_chunk* next = nullptr;
  if (spare_chunks_ == nullptr) {
    spare_chunks_ = returned_chunks_.exchange(nullptr, std::memory_order_acquire);
    returned_count_.store(0, std::memory_order_relaxed);
  }
  if (spare_chunks_ != nullptr) {
    inline_abort_chunk* const spare = spare_chunks_;
    spare_chunks_ = static_cast<inline_abort_chunk*>(spare->link());
    // A spare was last written by the thread that delivered it: each of its
    // lines is a miss to the other core's cache when written. Asked for all
    // at once, for this chunk's records and the next spare, they come in
    // while the aborts go on, not one by one on the way.
    prefetch_for_write(spare);
    if (spare_chunks_ != nullptr) prefetch_for_write(spare_chunks_);
    next = inline_abort_chunk::reuse(spare);
  } else {
    try {
      next = inline_abort_chunk::make();
    } catch (...) {
      return nullptr;
    }
  }
  list.push_back(next);
  return next;
}

void timer_shard::give_chunk(inline_abort_chunk* c) noexcept {
  // A few kept for the next aborts (a mass cancel delivered as it goes
  // cycles through a handful, and fresh memory costs page faults, a large
  // share of a cancel); the rest freed.
  if (returned_count_.fetch_add(1, std::memory_order_relaxed) >= spare_chunk_limit) {
    returned_count_.fetch_sub(1, std::memory_order_relaxed);
    delete c;
    return;
  }
  inline_abort_chunk* head = returned_chunks_.load(std::memory_order_relaxed);
  do {
    c->set_link(head);
  } while (!returned_chunks_.compare_exchange_weak(head, c, std::memory_order_release, std::memory_order_relaxed));
}

wait_op_base* timer_shard::evacuate_inline_locked(timer_impl& t, bool linked) noexcept {
  wait_op_base* const b = t.inline_ops()->evacuate(t);
  if (b == nullptr) return nullptr;  // out of memory: the caller parks it
  if (linked) {
    // In the inline wait's place: the oldest of the timer's waits.
    if (wait_op_base* const first = t.first.load(std::memory_order_relaxed)) {
      b->set_next_wait(first);
    } else {
      b->set_last_of(&t);
      t.last = b;
    }
    t.first.store(b, std::memory_order_relaxed);
  }
  t.free_inline();  // release, after the block is linked: see idle()
  return b;
}

bool timer_shard::batch_inline_locked(timer_impl& t, bool aborted, after_unlock& later) noexcept {
  if (aborted) {
    if (inline_abort_chunk* chunk = chunk_at_end_locked(batch_, t.inline_ops())) {
      chunk->add(t);
      joined_batch_locked(later);
      return true;
    }
  }
  // A block of its own (a fired one: the abort drain delivers it with
  // success; it is claimed already).
  wait_op_base* const b = evacuate_inline_locked(t, false);
  if (b == nullptr) return false;
  b->aborted = aborted;
  b->state.store(wait_state::aborted, std::memory_order_relaxed);
  batch_locked(*b, later);
  return true;
}

void timer_shard::abort_inline_locked(timer_impl& t, after_unlock& later, bool popped, bool pinned) noexcept {
  ++cancelled_;
  if (!popped) {
    index_.erase(t);
    if (index_.wants_shrink()) [[unlikely]]
      later.shrink_buffers = true;
  }
  if (batch_inline_locked(t, true, later)) return;
  if (pinned) {
    // Out of memory, on the thread of a call on the timer (which keeps it
    // alive until it returns): completed there once the lock is released,
    // as a last resort, like a batch whose post failed.
    release_locked(1, later);
    later.complete_here = &t;
    return;
  }
  park_locked(t, timer_impl::parked_as::aborted, later);
}

void timer_shard::drop_inline_locked(timer_impl& t, wait_list& into, after_unlock& later) noexcept {
  if (inline_abort_chunk* chunk = chunk_at_end_locked(into, t.inline_ops())) {
    chunk->add(t);  // discarded uncalled with the rest of the list
    return;
  }
  if (wait_op_base* const b = evacuate_inline_locked(t, false)) {
    b->state.store(wait_state::finished, std::memory_order_relaxed);
    into.push_back(b);
    return;
  }
  park_locked(t, timer_impl::parked_as::dropped, later);
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A shard's waits in the index: started without the lock (the inbox) or under
// it, drained in, held and released, cancelled (into the abort batch), moved.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <chronopool/detail/sync/cpu_relax.hpp>

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>

namespace chronopool::detail {

namespace {

// Waits the inbox may gather before a starting thread tries the lock to
// drain it: bounds the drain a locked section inherits. Every locked section
// drains before it reads the index, so a poll or wake-up due to fire waits
// first drains whatever a busy submitter has pushed, and a submitter that
// drains holds the lock that long. Each wait drained costs a few hundred ns
// (a cache line written on another core), so a small batch keeps the drain a
// fire may wait behind short while timers are armed at full speed.
constexpr std::uint32_t inbox_drain_batch = 8;

// Waits the inbox may hold while its lock is busy before a starting thread
// stops pushing and yields until it can drain them itself.
constexpr std::uint32_t inbox_high_water = 256;

}  // namespace

// ---- waits ----------------------------------------------------------------------------

timer_shard& timer_shard::lock_home(timer_impl& t, std::unique_lock<adaptive_mutex>& lock) {
  for (;;) {
    timer_shard* s = t.home();
    lock = std::unique_lock(s->mutex_);
    // Acquire: the timer may have come here from another shard, whose lock
    // we do not hold; the move's release store orders what was done there.
    if (t.home() == s) return *s;
    lock.unlock();  // it moved meanwhile (it had no pending wait): follow it
  }
}

timer_shard& timer_shard::home_for_wait(timer_impl& t, timer_shard& preferred) {
  // Already there (the usual case): start() checks again under its lock.
  if (t.home(std::memory_order_acquire) == &preferred) return preferred;
  std::unique_lock<adaptive_mutex> lock;
  timer_shard& home = lock_home(t, lock);
  if (&home == &preferred || t.first.load(std::memory_order_relaxed) != nullptr || t.inline_ops() != nullptr) return home;
  // Nothing pending: nothing in the home shard refers to the timer, so it
  // may move to the calling thread's shard, where its waits will not contend
  // with other threads' timers. Not while a wait started without the lock
  // is on its way to the home's inbox (start_pending): the exchange fails.
  return t.try_move_home(&home, &preferred) ? preferred : home;
}

bool timer_shard::try_start_unlocked(wait_node& node, timer_impl* timer) noexcept {
  // A block wait, or (timer's own node) the timer's inline wait, which has
  // no state of its own and no cancellation slot.
  auto* const block = node.is_inline() ? nullptr : static_cast<wait_op_base*>(&node);
  std::int64_t gate = gate_.load(std::memory_order_seq_cst);
  if (gate == gate_closed) return false;  // nothing armed (or going): the lock arms
  // A timer's wait is linked to the timer when it is drained, under the
  // lock. Until then the timer's start_pending bit stands for it: it keeps
  // the home where it is, sends a second unlocked start of the same timer
  // (from another thread) to the lock, and tells cancel() to look.
  if (timer != nullptr && !timer->try_claim_start(this)) {
    return false;  // its home is elsewhere, or another unlocked start is pending
  }
  // Sequentially consistent, after the claim: a new expiry stored meanwhile
  // (cancel() with an expiry) is either read here or sees the claim and
  // waits for this wait, to cancel it.
  const time_point deadline = timer ? timer->expiry(std::memory_order_seq_cst) : node.deadline();
  const auto due = deadline.time_since_epoch().count();
  // Only at or after the armed wake-up: a wait that moves the wake-up
  // earlier needs the lock anyway.
  if (due < gate) {
    if (timer != nullptr) timer->release_start_claim();
    return false;
  }
  if (block != nullptr) {
    // (An inline wait's deadline is the expiry itself.) Its sequence is
    // given where it is drained, in push order.
    block->set_deadline(deadline);
    if (timer != nullptr) block->set_last_of(timer);  // linked at the drain
    // A cancellation slot emitted while the wait starts: as under the lock,
    // the start sees the request or the slot sees the wait `unlocked` (and
    // then drains it itself, see cancel_wait). Both sequentially consistent
    // for a wait with a slot (see wait_op_base::enter).
    if (block->enter(wait_state::unlocked)) {
      block->state.store(wait_state::starting, std::memory_order_relaxed);
      if (timer != nullptr) timer->release_start_claim();
      return false;  // the locked start aborts it at once
    }
  }
  // From the push on, the wait is the shard's: it may be drained, fired and
  // freed (or, inline, moved out of the timer) on another thread at once,
  // so nothing below touches it.
  wait_node* head = inbox_.load(std::memory_order_relaxed);
  do {
    node.set_inbox_link(head);
  } while (!inbox_.compare_exchange_weak(head, &node, std::memory_order_seq_cst, std::memory_order_relaxed));
  gate = gate_.load(std::memory_order_seq_cst);
  if (gate != gate_closed && due >= gate) {
    // The armed wake-up (or a drain before it) takes it. A long inbox is
    // drained here if the lock is free; else its holder drains it.
    // Counted with a plain load and store, not a locked increment (which
    // would add a locked instruction to every start): it is a heuristic. Two pushes at once may count
    // as one, and a push racing a drain may write back a count from before
    // it; either way a later push tries the lock a little late or early.
    const std::uint32_t count = inbox_count_.load(std::memory_order_relaxed) + 1;
    inbox_count_.store(count, std::memory_order_relaxed);
    if (count >= inbox_drain_batch) {
      if (std::unique_lock lock(mutex_, std::try_to_lock); lock.owns_lock()) {
        drain_and_rewake(std::move(lock));
      } else if (count >= inbox_high_water) {
        yield_until_drained();
      }
    }
    return true;
  }
  // The wake-up moved meanwhile (fired, re-armed later, or the shard is going)
  // and its drain may have come before our push: see to it under the lock.
  drain_and_rewake(std::unique_lock(mutex_));
  return true;
}

void timer_shard::yield_until_drained() noexcept {
  while (inbox_count_.load(std::memory_order_relaxed) >= inbox_high_water) {
    if (std::unique_lock lock(mutex_, std::try_to_lock); lock.owns_lock()) return drain_and_rewake(std::move(lock));
    std::this_thread::yield();
  }
}

void timer_shard::drain_and_rewake(std::unique_lock<adaptive_mutex> lock) noexcept {
  after_unlock later(*this);
  {
    const std::unique_lock held(std::move(lock));
    rewake_locked(later, true);
  }
  later.run_best_effort();
}

timer_shard::start_result timer_shard::start(wait_node& node, timer_impl* timer) {
  if (try_start_unlocked(node, timer)) return start_result::started;
  // A block wait, or (the timer's own node) its inline wait: no state, no
  // cancellation slot, and nothing to link (it is the timer's oldest by place).
  auto* const op = node.is_inline() ? nullptr : static_cast<wait_op_base*>(&node);
  // Takes the wait back out before any other thread could see it, or (after
  // the unlock) when nothing else took it meanwhile.
  const auto take_back_locked = [&](after_unlock& later) noexcept {
    index_.erase(node);
    if (op != nullptr) {
      unlink_locked(*op);
      op->state.store(wait_state::finished, std::memory_order_relaxed);
    }
    release_locked(1, later);
  };
  std::uint64_t sequence = 0;
  after_unlock later(*this);
  {
    std::lock_guard lock(mutex_);
    // Acquire, as in lock_home: the timer may have moved here (even back
    // here) under another shard's lock.
    if (timer && timer->home() != this) return start_result::moved;
    if (shutting_down_) return start_result::refused;
    // An unlocked start of the same timer before this one is indexed first.
    drain_inbox_locked(later);
    if (op != nullptr && timer != nullptr) op->set_deadline(timer->expiry());
    sequence = next_sequence_++;
    node.set_sequence(sequence);
    index_.insert(&node);  // may throw: nothing changed yet
    try {
      hold_work_locked(later);
    } catch (...) {
      index_.erase(node);
      throw;
    }
    ++held_;
    if (op != nullptr) {
      const bool cancel_asked = op->enter(wait_state::queued);
      if (timer) {
        op->set_last_of(timer);
        if (timer->last) {
          timer->last->set_next_wait(op);
        } else {
          timer->first.store(op, std::memory_order_relaxed);
        }
        timer->last = op;
      } else {
        op->clear_timer();
      }
      if (cancel_asked) {
        // Its slot was emitted while it was starting: cancelled before it was queued.
        abort_locked(*op, later);
        return start_result::started;
      }
    }
    try {
      rewake_locked(later, false);
    } catch (...) {
      take_back_locked(later);  // we still hold the lock
      rewake_locked(later, true);
      throw;
    }
  }
  const task_ptr refused = later.submit;  // if the pool refuses it
  try {
    later.run();
  } catch (...) {
    // The pool refused the wake-up (no thread could be started). Take the
    // wait back unless it left the index meanwhile (fired or cancelled, and
    // being delivered; an inline wait's sequence tells it from a wait
    // another thread started on the timer since), and let the next wait arm.
    std::lock_guard lock(mutex_);
    forget_wakeup_locked(refused);
    const bool still_queued = op != nullptr ? op->state.load(std::memory_order_relaxed) == wait_state::queued
                                            : inline_queued(*timer) && timer->sequence() == sequence;
    if (!still_queued) return start_result::started;
    take_back_locked(later);
    throw;
  }
  return start_result::started;
}

void timer_shard::hold_work_locked(after_unlock& later) {
  if (held_ != 0 || work_) return;
  if (later.released_work) {
    // The shard let go of its last wait earlier in this section: that copy again.
    work_ = std::move(later.released_work);
    later.released_work.reset();
  } else {
    work_.emplace(asio_ns::prefer(*context_ex_, asio_ns::execution::outstanding_work.tracked));
  }
}

void timer_shard::forget_wakeup(const task_ptr& w) noexcept {
  std::lock_guard lock(mutex_);
  forget_wakeup_locked(w);
}

void timer_shard::forget_wakeup_locked(const task_ptr& w) noexcept {
  // Only the wake-up that could not be queued: another thread may have
  // armed a newer one meanwhile, which must stay the one that counts.
  if (w && wakeup_ == w) {
    wakeup_.reset();
    publish_gate_locked();  // nothing armed: new waits take the lock and arm again
  }
}

timer_impl* timer_shard::unlink_locked(wait_op_base& op, timer_impl* t) noexcept {
  if (op.state.load(std::memory_order_relaxed) == wait_state::fired) {
    timer_impl* const fired_timer = op.take_fired_timer();
    if (t == nullptr) t = fired_timer;
  }
  if (!op.linked()) return nullptr;
  if (t == nullptr) t = op.timer();
  // From the front: waits leave a timer oldest first (cancel, firing), so
  // this is usually one step; a cancel through one wait's slot, or a chunk
  // of fired waits claimed before the chunk ahead of it, walks further.
  wait_op_base* prev = nullptr;
  bool waits_left = false;
  for (wait_op_base* p = t->first.load(std::memory_order_relaxed); p != nullptr; prev = p, p = p->next_wait()) {
    if (p != &op) continue;
    if (t->last == &op) t->last = prev;
    waits_left = prev != nullptr || op.next_wait() != nullptr;
    if (prev) {
      prev->skip(op);
    } else {
      // Release, and our last use of *t when it empties: the timer's thread
      // may go on without our lock (and destroy the timer) once it reads null.
      t->first.store(op.next_wait(), std::memory_order_release);
    }
    break;
  }
  op.clear_timer();  // unlinked for good: the timer may go away
  return waits_left ? t : nullptr;
}

timer_impl* timer_shard::abort_locked(wait_op_base& op, after_unlock& later, timer_impl* timer) noexcept {
  const wait_state was = op.state.load(std::memory_order_relaxed);
  timer_impl* const left = unlink_locked(op, timer);
  op.aborted = true;
  op.state.store(wait_state::aborted, std::memory_order_relaxed);
  ++cancelled_;
  // A fired wait that its delivery has not claimed yet is delivered by that
  // delivery, now with operation_aborted: it is already in a list.
  if (was == wait_state::fired) ++cancelled_fired_;
  if (was != wait_state::queued) return left;
  index_.erase(op);
  if (index_.wants_shrink()) [[unlikely]]
    later.shrink_buffers = true;
  batch_locked(op, later);
  return left;
}

void timer_shard::shrink_index_buffers() noexcept { detail::shrink_index_buffers(index_, mutex_); }

void timer_shard::release_locked(std::size_t n, after_unlock& later) noexcept {
  held_ -= n;
  if (held_ == 0) {
    // The gate is open only while the shard holds a wait (and so the
    // context's work): closed now, and what was pushed before it closed is
    // taken in and armed for.
    publish_gate_locked();
    if (drain_inbox_locked(later)) rewake_locked(later, true);
  }
  if (held_ == 0 && work_) {
    later.released_work = std::move(work_);
    work_.reset();
  }
}

bool timer_shard::drain_inbox_locked(after_unlock& later) noexcept {
  // Sequentially consistent, after the gate's store (see detail/timer/timer_shard.hpp);
  // the exchange only when there is something to take.
  if (inbox_.load(std::memory_order_seq_cst) == nullptr) return false;
  wait_node* const newest = inbox_.exchange(nullptr, std::memory_order_seq_cst);
  inbox_count_.store(0, std::memory_order_relaxed);
  // Oldest first: the index then grows in start order, as under the lock.
  wait_node* p = reverse_chain<wait_node::inbox_link_of>(newest);
  while (p != nullptr) {
    wait_node& node = *p;
    p = node.inbox_link();
    node.set_inbox_link(nullptr);
    if (node.is_inline()) {
      drain_inline_locked(static_cast<timer_impl&>(node), later);
      continue;
    }
    auto& op = static_cast<wait_op_base&>(node);
    timer_impl* const timer = op.timer();
    if (shutting_down_) {
      op.state.store(wait_state::finished, std::memory_order_relaxed);  // for cancel_wait's loop: gone
      op.clear_timer();
      if (timer) timer->release_start_claim();
      later.dropped.push_back(&op);  // Asio's rule for a context that is going
      continue;
    }
    op.set_sequence(next_sequence_++);  // in push order: oldest first
    try {
      hold_work_locked(later);
      index_.insert(&op);
    } catch (...) {
      // Out of memory: the wait cannot be indexed, and its start has
      // returned already. It completes with operation_aborted.
      ++held_;
      op.clear_timer();
      if (timer) timer->release_start_claim();
      op.aborted = true;
      op.state.store(wait_state::aborted, std::memory_order_relaxed);
      batch_locked(op, later);  // counted in the batch: its drain lets the shard go of it
      continue;
    }
    ++held_;
    if (timer) {
      // Linked last, as start() links (its next is the tagged timer already),
      // then the timer's claim is released: a cancel() that sees it
      // released sees the wait linked.
      if (timer->last) {
        timer->last->set_next_wait(&op);
      } else {
        timer->first.store(&op, std::memory_order_relaxed);
      }
      timer->last = &op;
      timer->release_start_claim();
    }
    ++unlocked_starts_;
    // As in start(): for a wait with a slot, sequentially consistent with
    // cancel_requested, which the slot emitted meanwhile sets.
    if (op.enter(wait_state::queued)) abort_locked(op, later);
  }
  return true;
}

void timer_shard::drain_inline_locked(timer_impl& t, after_unlock& later) noexcept {
  // As drain_inbox_locked() does for a block (nothing to link: the inline
  // wait is its timer's oldest by place); then the timer's claim is released.
  if (shutting_down_) {
    drop_inline_locked(t, later.dropped, later);  // Asio's rule for a context that is going
    t.release_start_claim();
    return;
  }
  t.set_sequence(next_sequence_++);
  try {
    hold_work_locked(later);
    index_.insert(&t);
  } catch (...) {
    // Out of memory: it completes with operation_aborted, as a block would.
    ++held_;
    abort_inline_locked(t, later, true, false);
    t.release_start_claim();
    return;
  }
  ++held_;
  t.release_start_claim();
  ++unlocked_starts_;
}

void timer_shard::publish_gate_locked() noexcept {
  // Until a pending re-arm (see arm_wakeup_locked), the gate stays at the
  // time that was armed and has passed: a wait pushed meanwhile is drained
  // by that re-arm, which publishes and then drains.
  if (rearm_pending_ != 0 && !shutting_down_) return;
  std::int64_t gate = gate_closed;
  if (!shutting_down_ && held_ != 0) {
    if (pool_ && wakeup_) gate = wakeup_at_.time_since_epoch().count();
    if (armed_) gate = std::min(gate, armed_at_.time_since_epoch().count());
  }
  // Only the lock holder writes it; an unchanged gate needs no store (a
  // reader's later load returns the same value either way).
  if (gate_.load(std::memory_order_relaxed) != gate) gate_.store(gate, std::memory_order_seq_cst);
}

bool timer_shard::idle(const timer_impl& t) noexcept {
  // The start claim and the inline wait (one word, acquire) before the
  // list: once a claim is released, the wait it stood for is linked, and
  // a fired inline wait is linked as a block before it is freed; `first`
  // shows either.
  const std::uintptr_t w = t.state(std::memory_order_acquire);
  if ((w & (timer_impl::start_pending | timer_impl::ops_mask)) != 0) return false;
  return t.first.load(std::memory_order_acquire) == nullptr;
}

std::size_t timer_shard::cancel(timer_impl& t, const time_point* expiry) {
  // Idle: nothing to cancel, and the check is the whole operation. A new
  // expiry takes the lock: a wait another thread starts meanwhile must see
  // either the old expiry and be cancelled, or the new one.
  if (expiry == nullptr && idle(t)) return 0;
  std::unique_lock<adaptive_mutex> lock;
  timer_shard& s = lock_home(t, lock);
  after_unlock later(s);
  std::size_t n = 0;
  if (expiry) {
    // The inline wait's deadline is the expiry: out of the index before it changes.
    if (inline_queued(t)) {
      s.abort_inline_locked(t, later, false, true);
      ++n;
    }
    // Stored first, sequentially consistent: an unlocked start that read the
    // old expiry claimed the timer before, and is waited for below.
    t.set_expiry(*expiry, std::memory_order_seq_cst);
    s.drain_inbox_locked(later);
    // It pushes (or gives up) without the lock: a few instructions away.
    while ((t.state(std::memory_order_seq_cst) & timer_impl::start_pending) != 0) {
      cpu_relax();
      s.drain_inbox_locked(later);
    }
  } else {
    // A start still pending after the drain runs on another thread,
    // concurrently with this cancel: it comes after it.
    s.drain_inbox_locked(later);
  }
  // The inline wait is the oldest (one started meanwhile, and drained
  // above, with a new expiry).
  if (inline_queued(t)) {
    s.abort_inline_locked(t, later, false, true);
    ++n;
  }
  n += s.settle_parked_of_locked(t, later);
  while (wait_op_base* op = t.first.load(std::memory_order_relaxed)) {
    s.abort_locked(*op, later, &t);
    ++n;
  }
  if (n != 0) s.rewake_locked(later, true);
  lock.unlock();  // before `later` does its part
  return n;
}

std::size_t timer_shard::cancel_one(timer_impl& t) {
  if (idle(t)) return 0;
  std::unique_lock<adaptive_mutex> lock;
  timer_shard& s = lock_home(t, lock);
  after_unlock later(s);
  s.drain_inbox_locked(later);
  if (inline_queued(t) || s.settle_parked_of_locked(t, later) != 0) {
    // The oldest wait.
    if (inline_queued(t)) s.abort_inline_locked(t, later, false, true);
    s.rewake_locked(later, true);
    lock.unlock();  // before `later` does its part
    return 1;
  }
  wait_op_base* const oldest = t.first.load(std::memory_order_relaxed);
  if (oldest == nullptr) {
    lock.unlock();  // before `later` does its part, as below
    return 0;
  }
  s.abort_locked(*oldest, later, &t);
  s.rewake_locked(later, true);
  lock.unlock();  // before `later` does its part
  return 1;
}

void timer_shard::cancel_wait(wait_op_base& op) noexcept {
  after_unlock later(*this);
  std::lock_guard lock(mutex_);
  drain_inbox_locked(later);  // @p op may be in the inbox (and queued only now)
  // Started without the lock and not pushed yet: the push is a few
  // instructions away and needs no lock (or the start turns back to the lock
  // on seeing the request, and aborts it there).
  while (op.state.load() == wait_state::unlocked) {
    cpu_relax();
    drain_inbox_locked(later);
  }
  const wait_state s = op.state.load(std::memory_order_relaxed);
  if (s != wait_state::queued && s != wait_state::fired) return;
  abort_locked(op, later);
  rewake_locked(later, true);
}

void timer_shard::move_timer(timer_impl& to, timer_impl& from) noexcept {
  std::unique_lock<adaptive_mutex> lock;
  timer_shard& home = lock_home(from, lock);
  after_unlock later(home);
  // Links from's unlocked wait, if it has one (its own thread started it:
  // a move is not concurrent with other uses of the object).
  home.drain_inbox_locked(later);
  to.set_home(&home);  // `to` is new: nobody else sees it yet
  to.set_expiry(from.expiry());
  if (const inline_wait_ops* ops = from.inline_ops()) {
    // Its inline wait moves with the object: queued (the drain took it in),
    // it keeps its place in the index; parked, its place in that list.
    ops->relocate(to.inline_storage(), from.inline_storage());
    if (from.parked() != timer_impl::parked_as::none) {
      timer_impl* prev = nullptr;
      for (timer_impl* p = home.parked_; p != &from; p = p->next_parked()) prev = p;
      to.set_next_parked(from.next_parked());
      if (prev != nullptr) {
        prev->set_next_parked(&to);
      } else {
        home.parked_ = &to;
      }
    } else {
      to.set_sequence(from.sequence());
      home.index_.relocate(from, to);
    }
    to.take_inline_word(from);
  }
  to.first.store(from.first.exchange(nullptr, std::memory_order_relaxed), std::memory_order_relaxed);
  to.last = std::exchange(from.last, nullptr);
  if (to.last) to.last->set_last_of(&to);  // where its waits find their timer
  // Fired waits not yet claimed recorded the timer they fired from.
  for (wait_op_base* w = to.first.load(std::memory_order_relaxed); w != nullptr; w = w->next_wait()) {
    if (w->state.load(std::memory_order_relaxed) == wait_state::fired) w->set_fired_timer(&to);
  }
  from.set_expiry(time_point());  // as if newly constructed
  lock.unlock();  // before `later` does its part
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The delayed work queue's task inbox: tasks submitted without the lock
// while the leader sleeps for an earlier time (the gate), and their drain
// into the index by the next locked section. See "The task inbox" in
// docs/design.md.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <chronopool/detail/support/intrusive_list.hpp>
#include <chronopool/detail/sync/lock_spinning.hpp>

#include <limits>
#include <mutex>

namespace chronopool::detail {

namespace {

// A task's link in the inbox (reverse_chain's Link).
struct task_inbox_link {
  static task_base* get(const task_base& t) noexcept { return t.inbox_next(); }
  static void set(task_base& t, task_base* to) noexcept { t.set_inbox_next(to); }
};

}  // namespace

delayed_work_queue::offer_status delayed_work_queue::offer_submitted(task_ptr t, std::size_t max_size) {
  // A bound is checked under the lock.
  if (max_size != std::numeric_limits<std::size_t>::max()) return offer_within(std::move(t), max_size);
  const std::int64_t due = t->deadline().time_since_epoch().count();
  if (due < gate_.load(std::memory_order_seq_cst)) return offer_within(std::move(t), max_size);
  task_base* const raw = t.get();
  task_base* head = inbox_.load(std::memory_order_relaxed);
  do {
    raw->set_inbox_next(head);
  } while (!inbox_.compare_exchange_weak(head, raw, std::memory_order_seq_cst, std::memory_order_relaxed));
  // From the push on the task is the queue's: a drain may index it, a taker
  // run it and release it at once, so nothing below touches it.
  t.detach();
  if (due >= gate_.load(std::memory_order_seq_cst)) {
    // The leader wakes no later than the gate and drains first. A long
    // inbox is drained here when the lock is free, so that the waking
    // leader does not index many tasks while due ones wait.
    const std::uint32_t pushed = inbox_count_.load(std::memory_order_relaxed) + 1;
    inbox_count_.store(pushed, std::memory_order_relaxed);
    if (pushed >= inbox_drain_batch) {
      if (std::unique_lock lock(mutex_, std::try_to_lock); lock.owns_lock()) drain_inbox_locked();
    }
    return offer_status::queued;
  }
  // The gate closed or moved meanwhile, and its drain may have come before
  // the push: drain under the lock, with the locked offer's new-head rule.
  std::unique_lock lock(mutex_, std::defer_lock);
  lock_spinning(lock);
  drain_inbox_locked();
  return offer_status::queued;
}

void delayed_work_queue::drain_inbox_locked() const noexcept {
  const_cast<delayed_work_queue*>(this)->drain_inbox_locked();
}

void delayed_work_queue::drain_inbox_locked() noexcept {
  // Sequentially consistent, after the gate's store (see gate_); the
  // exchange only when there is something to take.
  if (inbox_.load(std::memory_order_seq_cst) == nullptr) return;
  task_base* oldest = reverse_chain<task_inbox_link>(inbox_.exchange(nullptr, std::memory_order_seq_cst));
  inbox_count_.store(0, std::memory_order_relaxed);
  const time_point wake_before = wake_or_never();
  while (oldest != nullptr) {
    task_base* const t = oldest;
    oldest = t->inbox_next();
    t->heap_index = task_base::not_queued;  // the link's word: the index sets it
    try {
      index_locked(t);
    } catch (...) {
      // Out of memory: this task and the rest go back onto the inbox, still
      // the queue's; the gate stays closed, and the leader looks again
      // within inbox_retry (see wait_for_task).
      t->set_inbox_next(oldest);
      oldest = t;  // not drained: the stuck flag stays
      return_to_inbox(t);
      inbox_stuck_ = true;
      gate_.store(gate_closed, std::memory_order_seq_cst);
      break;
    }
    ++inbox_drained_;
  }
  if (oldest == nullptr) inbox_stuck_ = false;
  if (new_head_locked(wake_before, wake_or_never())) wake_one();
}

void delayed_work_queue::return_to_inbox(task_base* first) noexcept {
  task_base* last = first;
  while (last->inbox_next() != nullptr) last = last->inbox_next();
  task_base* head = inbox_.load(std::memory_order_relaxed);
  do {
    last->set_inbox_next(head);
  } while (!inbox_.compare_exchange_weak(head, first, std::memory_order_seq_cst, std::memory_order_relaxed));
}

bool delayed_work_queue::open_gate_locked(time_point until, const void* me) noexcept {
  if (inbox_stuck_) return true;
  gate_.store(until.time_since_epoch().count(), std::memory_order_seq_cst);
  drain_inbox_locked();
  if (leader_ == me) return true;
  close_gate_locked();
  return false;
}

void delayed_work_queue::close_gate_locked() noexcept {
  if (gate_.load(std::memory_order_relaxed) != gate_closed) gate_.store(gate_closed, std::memory_order_seq_cst);
  drain_inbox_locked();
}

}  // namespace chronopool::detail

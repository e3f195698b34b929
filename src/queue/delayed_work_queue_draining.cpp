// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Taking work out of the delayed work queue other than by a taker: removing
// by a predicate, draining everything, popping the head for a rejection
// policy, withdrawing a posted function, and the mode changes (draining,
// closed) and interrupts that send takers back to their owner.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <algorithm>
#include <deque>

namespace chronopool::detail {

namespace {

// Tasks leave the queue as raw pointers while the lock is held; their
// references are dropped only after it is released, because dropping the
// last one runs the callable's destructor, which is user code.
std::vector<task_ptr> adopt_sorted(std::vector<index_node*> raw) {
  std::sort(raw.begin(), raw.end(), [](const index_node* a, const index_node* b) { return runs_before(*a, *b); });
  std::vector<task_ptr> out;
  out.reserve(raw.size());
  for (index_node* t : raw) out.emplace_back(static_cast<task_base*>(t), task_ptr::adopt);
  return out;
}
}  // namespace

bool delayed_work_queue::withdraw_function(queued_function* f) noexcept {
  std::lock_guard lock(mutex_);
  absorb_posted_locked();
  if (!functions_.remove(f)) return false;
  if (count() == 0) wake_all();
  return true;
}

function_list delayed_work_queue::drain_functions() noexcept {
  std::lock_guard lock(mutex_);
  absorb_posted_locked();
  function_list all;
  all.swap(functions_);
  wake_all();
  return all;
}
void delayed_work_queue::shrink_index_buffers() noexcept { detail::shrink_index_buffers(index_, mutex_); }

std::vector<task_ptr> delayed_work_queue::remove_if(const std::function<bool(const task_base&)>& pred) {
  std::vector<index_node*> taken;
  taken.reserve(due_segment::capacity);
  {
    std::lock_guard lock(mutex_);
    drain_inbox_locked();
    // The segment's tasks are taken back to be looked at; the ones kept
    // are set out again, in their order.
    task_base* kept_set_out[due_segment::capacity];
    std::size_t kept_n = 0;
    std::size_t set_out = 0;
    segment_.take_all([&](task_base* t) {
      ++set_out;
      if (pred(*t)) {
        taken.push_back(t);  // reserved above: cannot throw
      } else {
        kept_set_out[kept_n++] = t;
      }
    });
    segment_.fill(kept_set_out, kept_n, segment_tag);
    taken_ -= set_out - kept_n;
    index_.extract_if([&](const index_node& n) { return pred(*task_of(const_cast<index_node*>(&n))); }, taken);
    std::deque<entry> kept_ready;
    for (const entry& e : ready_) {
      if (e.node == nullptr) continue;
      if (pred(*task_of(e.node))) {
        e.node->heap_index = task_base::not_queued;
        taken.push_back(e.node);
      } else {
        e.node->heap_index = ready_tag | (ready_popped_ + kept_ready.size());
        kept_ready.push_back(e);
      }
    }
    ready_ = std::move(kept_ready);  // renumbered above, from ready_popped_
    ready_count_ = ready_.size();
    if (taken.empty()) return {};
    // The head may have changed to a later deadline: the leader re-checks.
    leader_ = nullptr;
    wake_all();
  }
  return adopt_sorted(std::move(taken));
}

std::vector<task_ptr> delayed_work_queue::drain() {
  std::vector<index_node*> taken;
  {
    std::lock_guard lock(mutex_);
    // The inbox's tasks are taken as they are, not indexed first: nothing
    // to allocate but the vector, reserved before anything moves.
    task_base* inbox = inbox_.exchange(nullptr, std::memory_order_seq_cst);
    inbox_count_.store(0, std::memory_order_relaxed);
    std::size_t pushed = 0;
    for (const task_base* t = inbox; t != nullptr; t = t->inbox_next()) ++pushed;
    try {
      taken.reserve(count() + pushed);
    } catch (...) {
      if (inbox != nullptr) return_to_inbox(inbox);  // still queued; a later look drains them
      throw;
    }
    inbox_stuck_ = false;  // nothing is left in it
    while (inbox != nullptr) {
      task_base* const t = inbox;
      inbox = t->inbox_next();
      t->heap_index = task_base::not_queued;
      taken.push_back(t);
    }
    taken_ -= segment_.take_all([&](task_base* t) { taken.push_back(t); });
    index_.extract_all(taken);
    for (const entry& e : ready_) {
      if (e.node == nullptr) continue;
      e.node->heap_index = task_base::not_queued;
      taken.push_back(e.node);
    }
    ready_popped_ += ready_.size();
    ready_.clear();
    ready_count_ = 0;
    wake_all();
  }
  return adopt_sorted(std::move(taken));
}

task_ptr delayed_work_queue::pop_head() {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  if (count() == 0) return {};
  if (task_base* t = segment_.claim()) {  // the earliest tasks queued
    --taken_;
    task_ptr head(t, task_ptr::adopt);
    t->heap_index = task_base::not_queued;
    if (count() == 0) wake_all();
    return head;
  }
  index_.pull_earliest();  // the true head, due or not, may wait in the tier
  task_base* const t = ready_first() ? pop_ready() : task_of(index_.pop_first());
  if (t == nullptr) return {};  // out of memory moving the tier: nothing taken
  task_ptr head(t, task_ptr::adopt);
  if (count() == 0) wake_all();
  return head;
}

void delayed_work_queue::set_mode(mode m) {
  std::lock_guard lock(mutex_);
  mode_ = std::max(mode_, m);  // modes only advance: a closed queue never reopens
  // From now on posters take the lock; what they pushed before is taken in
  // by whoever looks at the lane next (a draining taker, drain_functions()).
  if (mode_ != mode::open) open_.store(false, std::memory_order_seq_cst);
  wake_all();
}

delayed_work_queue::mode delayed_work_queue::current_mode() const {
  std::lock_guard lock(mutex_);
  return mode_;
}

void delayed_work_queue::interrupt_waiters() {
  std::lock_guard lock(mutex_);
  ++interrupt_epoch_;
  wake_all();
}

}  // namespace chronopool::detail

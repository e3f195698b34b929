// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The delayed work queue's offers and takes: queueing a task (in the
// deadline index or the ready lane) or a posted function, taking whatever
// comes first, the leader/follower decision of a taker that waits, waking
// takers, and removing one task. See detail/queue/delayed_work_queue.hpp.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/sync/lock_spinning.hpp>

#include <algorithm>
#include <limits>

namespace chronopool::detail {

namespace {

// Asks for the cache lines of a task's header and of a callable of up to
// five words, which follows it, for writing: the taker's first act is to
// mark the task started.
void prefetch_task(const index_node* n) noexcept {
  constexpr std::size_t span = sizeof(task_base) + 5 * sizeof(void*);
  const char* const p = reinterpret_cast<const char*>(n);
  for (std::size_t offset = 0; offset < span; offset += 64) __builtin_prefetch(p + offset, 1);
  __builtin_prefetch(p + span - 1, 1);  // the last line when the task does not start one
}

}  // namespace

delayed_work_queue::delayed_work_queue(unsigned near_window_log2)
    : index_(near_window_log2), near_spin_(near_kernel_timer_cost()) {}

delayed_work_queue::~delayed_work_queue() {
  for (task_base* t = inbox_.exchange(nullptr, std::memory_order_acquire); t != nullptr;) {
    task_base* const next = t->inbox_next();
    t->heap_index = task_base::not_queued;
    intrusive_release(t);
    t = next;
  }
  segment_.take_all([](task_base* t) { intrusive_release(t); });
  index_.for_each([](index_node& n) {
    n.heap_index = task_base::not_queued;
    intrusive_release(task_of(&n));
  });
  for (const entry& e : ready_) {
    if (e.node == nullptr) continue;
    e.node->heap_index = task_base::not_queued;
    intrusive_release(task_of(e.node));
  }
  absorb_posted_locked();
  while (!functions_.empty()) functions_.pop_front()->destroy();
}

void delayed_work_queue::absorb_posted_locked() const noexcept {
  // Sequentially consistent (a plain load on x86): a push that came before a
  // mode change (see offer_function) is seen by whoever saw the change.
  if (posted_.load(std::memory_order_seq_cst) == nullptr) return;
  // Acquire (in seq_cst): the posters' writes into the functions.
  queued_function* oldest = reverse_chain<function_link>(posted_.exchange(nullptr, std::memory_order_seq_cst));
  while (oldest != nullptr) {
    queued_function* const f = oldest;
    oldest = f->next;
    f->next = nullptr;
    functions_.push_back(f);
  }
}

void delayed_work_queue::drop_empty_front() noexcept {
  while (!ready_.empty() && ready_.front().node == nullptr) {
    ready_.pop_front();
    ++ready_popped_;
  }
}

task_base* delayed_work_queue::pop_ready() noexcept {
  task_base* const t = task_of(ready_.front().node);
  ready_.pop_front();
  ++ready_popped_;
  --ready_count_;
  t->heap_index = task_base::not_queued;
  drop_empty_front();
  return t;
}

task_base* delayed_work_queue::take_due(time_point now) noexcept {
  index_.advance(now);
  // A ready-lane task is due by definition: its deadline is the clock reading
  // of a submit that happened before this take.
  if (ready_first()) return pop_ready();
  const entry* head = index_.heap_front();
  if (head != nullptr && head->deadline <= now.time_since_epoch().count()) {
    task_base* const t = task_of(index_.pop_heap_front());
    // The next task in line was last touched when it was submitted, maybe
    // long ago: whoever takes it next finds it in cache instead of waiting
    // for memory while it holds the lock or starts it.
    if (const entry* next = index_.heap_front()) prefetch_task(next->node);
    return t;
  }
  // The heap's head comes first in order but is not due, so its deadline is
  // after @p now and after every ready task's: ready work goes first.
  if (!ready_.empty()) return pop_ready();
  return nullptr;
}

void delayed_work_queue::fill_segment_locked(time_point now) noexcept {
  // A taker that waits would take the next due task itself, at once and in
  // parallel; with every taker busy, the due tasks wait for one of them
  // anyway, and set out they cost each taker no lock. A waiting function
  // keeps its turn.
  if (manual_ != nullptr || segment_.left() != 0 || !functions_.empty() ||
      idle_.load(std::memory_order_seq_cst) != 0)
    return;
  task_base* due[due_segment::capacity];
  std::size_t n = 0;
  while (n < due_segment::capacity) {
    task_base* const t = take_due(now);
    if (t == nullptr) break;
    due[n++] = t;
  }
  if (n == 0) return;
  taken_ += n;  // taken now, as far as quiet checks go: they are on their way to a taker
  segment_.fill(due, n, segment_tag);
}

void delayed_work_queue::return_segment_locked() {
  task_base* back[due_segment::capacity];
  std::size_t n = 0;
  segment_.take_all([&](task_base* t) { back[n++] = t; });
  taken_ -= n;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      index_.insert(back[i]);
    } catch (...) {
      taken_ += n - i;
      segment_.fill(back + i, n - i, segment_tag);
      throw;
    }
  }
}

// g++ 12 at -O2 warns here that the atomic load of the task's deadline
// (entry::of) "writes 8 bytes into a region of size 0" (-Wstringop-overflow):
// a false positive (a load writes nothing, and the task is a live one the
// caller holds). Silenced for this function only, so that a release build of
// the library is quiet.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
bool delayed_work_queue::offer_now(task_ptr t) {
  std::lock_guard lock(mutex_);
  if (t->cancelled()) return false;
  ready_.push_back(entry::of(t.get()));  // may throw (allocation): nothing changed yet
  t->heap_index = ready_tag | (ready_popped_ + ready_.size() - 1);
  ++ready_count_;
  t.detach();  // the lane owns the reference now
  // One taker per new task; a leader sleeping for a later heap head may be
  // the one woken, and takes this instead (the role passes on as usual).
  wake_one();
  return true;
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic pop
#endif

bool delayed_work_queue::offer_function(queued_function* f) noexcept {
  if (open_.load(std::memory_order_seq_cst)) {
    queued_function* head = posted_.load(std::memory_order_relaxed);
    do {
      f->next = head;
    } while (!posted_.compare_exchange_weak(head, f, std::memory_order_seq_cst, std::memory_order_relaxed));
    // Still open after the push: the push came before any mode change, so
    // whoever acts on that change (a draining taker, drain_functions) takes
    // it in first.
    if (open_.load(std::memory_order_seq_cst)) {
      // Only a sleeping or spinning taker needs the signal; a busy one finds
      // the function on its way (see idle_).
      if (idle_.load(std::memory_order_seq_cst) != 0) {
        std::lock_guard lock(mutex_);
        if (sleeping_ != 0 || anyone_spinning()) wake_one();
      }
      return true;
    }
    return settle_posted_function(f);
  }
  std::lock_guard lock(mutex_);
  if (mode_ == mode::closed) return false;
  absorb_posted_locked();  // pushed before the mode changed: they go first
  functions_.push_back(f);
  // Only a sleeping taker needs the signal; a busy one finds it on its way.
  if (sleeping_ != 0 || anyone_spinning()) wake_one();
  return true;
}

bool delayed_work_queue::settle_posted_function(queued_function* f) noexcept {
  // The mode changed around the push: from here on as the locked offer. The
  // function is in the lane now, or whoever took the stack has it (a taker,
  // or drain_functions(), whose caller destroys it).
  std::lock_guard lock(mutex_);
  absorb_posted_locked();
  if (mode_ == mode::closed && functions_.remove(f)) return false;
  if (sleeping_ != 0 || anyone_spinning()) wake_one();
  return true;
}


bool delayed_work_queue::offer(task_ptr t) {
  return offer_within(std::move(t), std::numeric_limits<std::size_t>::max()) == offer_status::queued;
}

bool delayed_work_queue::offer(task_ptr t, bool& new_head) {
  return offer_and_wake(t, std::numeric_limits<std::size_t>::max(), new_head) == offer_status::queued;
}

delayed_work_queue::offer_status delayed_work_queue::offer_within(task_ptr t, std::size_t max_size) {
  bool new_head = false;
  return offer_and_wake(t, max_size, new_head);
}

void delayed_work_queue::index_locked(task_base* t) {
  // Due tasks set out before this one was queued go first, unless it comes
  // before them: then they go back into the index, to keep the order exact.
  if (segment_.left() != 0 && segment_.precedes_last(t->deadline().time_since_epoch().count(), t->sequence()))
    return_segment_locked();  // may throw (allocation): the task is not indexed yet
  index_.insert(t);           // may throw (allocation): nothing changed yet
}

bool delayed_work_queue::new_head_locked(time_point wake_before, time_point wake_after) noexcept {
  if (!(wake_after < wake_before)) return false;
  // A leader that kept its role across a task comes back for the new head
  // too, while that is still in time and the backup covers it (a pool task
  // re-arming a timer's wake-up, say).
  if (leader_ == &kept_role_ && role_may_be_kept_locked(wake_after) && backup_covers_locked(wake_after)) return false;
  // A new head: the leader sleeps for a later deadline. Void its role; one
  // taker is woken, which becomes leader for the new head.
  leader_ = nullptr;
  return true;
}

delayed_work_queue::offer_status delayed_work_queue::offer_and_wake(task_ptr& t, std::size_t max_size, bool& new_head) {
  std::unique_lock lock(mutex_, std::defer_lock);
  lock_spinning(lock);
  if (t->cancelled()) return offer_status::cancelled;
  drain_inbox_locked();
  absorb_posted_locked();  // queued functions count towards the bound, as they always have
  if (count() >= max_size) return offer_status::full;
  const time_point wake_before = wake_or_never();
  index_locked(t.get());  // may throw (allocation): nothing changed yet
  t.detach();             // the queue owns the reference now
  const time_point wake_after = wake_or_never();
  new_head = wake_after < wake_before;
  if (new_head_locked(wake_before, wake_after)) wake_one_and_unlock(lock);
  return offer_status::queued;
}

task_ptr delayed_work_queue::poll() {
  std::lock_guard lock(mutex_);
  drain_inbox_locked();
  if (task_base* t = segment_.claim()) {  // the earliest, and due
    // Out of the queue by this call, not by a taker: no longer counted as
    // taken, and not queued anywhere (as pop_head() leaves it).
    --taken_;
    t->heap_index = task_base::not_queued;
    return task_ptr(t, task_ptr::adopt);
  }
  return task_ptr(take_due(now()), task_ptr::adopt);
}

delayed_work_queue::wait_result delayed_work_queue::take_locked() {
  drain_inbox_locked();
  absorb_posted_locked();
  // A posted function on its turn (or with no task queued at all) needs no
  // clock reading.
  if (function_first()) {
    ++taken_;
    return {{}, wait_status::function, functions_.pop_front()};
  }
  // The segment's tasks come first in order, and were counted as taken.
  if (task_base* t = segment_.claim()) return {task_ptr(t, task_ptr::adopt), wait_status::task};
  if (count() == 0) return {{}, wait_status::timeout};
  const time_point now = this->now();
  if (task_base* t = take_due(now)) {
    ++taken_;
    fill_segment_locked(now);
    return {task_ptr(t, task_ptr::adopt), wait_status::task};
  }
  // No task is due: a posted function goes now, whoever's turn it was.
  if (!functions_.empty()) {
    ++taken_;
    return {{}, wait_status::function, functions_.pop_front()};
  }
  return {{}, wait_status::timeout};
}

delayed_work_queue::wait_result delayed_work_queue::try_take(bool spin_for_lock) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (spin_for_lock) {
    lock_spinning(lock);
  } else {
    lock.lock();
  }
  return take_locked();
}

delayed_work_queue::wait_result delayed_work_queue::wait_for_task(time_point limit) {
  std::unique_lock lock(mutex_, std::defer_lock);
  lock_spinning(lock);
  const std::uint64_t epoch = interrupt_epoch_;
  const char me = 0;  // this wait's identity for the leader role
  bool led = false;    // this wait last slept as the leader (for the head)
  wait_result result{{}, wait_status::timeout};
  // Precision mode: the first untimed sleep of this wait is a spin of one
  // window; a spin that ends without a signal is not repeated.
  bool spun_out = !precision_mode();
  const auto untimed_wait = [&](time_point until) {
    if (!spun_out) {
      // Saturating: the window may be as long as the limit a caller set.
      const time_point spin_to = std::min(until, saturating_add(clock::now(), spin_window_));
      if (!spin_until(lock, spin_to, false)) spun_out = true;
    } else {
      sleep_until(lock, until);
    }
  };

  for (;;) {
    if (mode_ == mode::closed) {
      result.status = wait_status::closed;
      break;
    }
    if (interrupt_epoch_ != epoch) {
      result.status = wait_status::interrupted;
      break;
    }
    if (wait_result r = take_locked(); r.status != wait_status::timeout) {
      result = std::move(r);
      // Draining takers return once the queue is empty; wake them to see it.
      if (count() == 0 && mode_ == mode::draining) wake_all();
      break;
    }
    const time_point now = this->now();
    if (count() == 0) {
      if (mode_ == mode::draining) {
        result.status = wait_status::closed;
        break;
      }
      if (limit <= now) break;  // timeout
      untimed_wait(limit);
      continue;
    }
    // Not due, and the ready lane is empty: wake for the heap's head or, with
    // none, for the earliest tier bucket to come near; never for "never".
    const time_point head = wake_or_never();
    if (limit <= now) break;  // timeout
    if (leader_waits()) {
      led = false;
      if (precision_mode()) {
        // A head the leader waited for is gone (a follower took it, or it was
        // removed): stand in for the one now at the front instead.
        if (!is_never(head) && leader_head_.load(std::memory_order_relaxed) < head.time_since_epoch().count()) {
          leader_head_.store(head.time_since_epoch().count(), std::memory_order_relaxed);
        }
        untimed_wait(limit);  // follower: untimed unless the caller has a limit
      } else {
        follower_sleep(lock, limit);
      }
    } else {
      // Leader: the only thread sleeping for the head's deadline (a leader
      // that kept its role across a task is not sleeping: take it over). A
      // caller whose own limit comes first sleeps until then and hands the
      // role on when it leaves.
      leader_ = &me;
      led = true;
      if (precision_mode() && !is_never(head)) {
        leader_head_.store(head.time_since_epoch().count(), std::memory_order_relaxed);
      }
      // With a slack, the wait runs on to the last deadline it covers.
      const time_point target =
          wake_slack_ > duration::zero() && !precision_mode() && manual_ == nullptr && !is_never(head)
              ? index_.wake_time(wake_slack_).value_or(head)
              : head;
      // Tasks left in the inbox by a drain out of memory are retried soon.
      const time_point until =
          inbox_stuck_ ? std::min({target, limit, saturating_add(now, inbox_retry)}) : std::min(target, limit);
      leader_until_ = until;
      if (precision_mode() && !is_never(until)) {
        sleep_then_spin(lock, until);
      } else if (manual_ == nullptr && !is_never(until) && spins_for(until - now)) {
        spin_until(lock, until);  // sleeping would cost more, and run it later, than waiting
      } else if (manual_ != nullptr || is_never(until)) {
        if (!sleep_until(lock, until) && !is_never(until))
          wake_latency_.observe(saturating_difference(clock::now(), until));
      } else if (open_gate_locked(until, &me)) {
        // Submitted tasks due at or after `until` are pushed onto the inbox
        // meanwhile; this wait drains them as it wakes.
        const bool woken = sleep_until(lock, until);
        close_gate_locked();
        if (!woken) wake_latency_.observe(saturating_difference(clock::now(), until));
      } else {
        // The inbox held a task due before `until`: the drain voided this
        // wait's role; it looks again.
        leader_until_ = time_point::max();
        continue;
      }
      if (leader_ == &me) {
        leader_ = nullptr;
        leader_until_ = time_point::max();
        leader_head_.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
      }
    }
  }

  if (leader_waits()) return result;
  const time_point next = wake_or_never();
  // The leader that woke for the head and took it keeps its role while it
  // runs a task expected to end before the next head (or before a head
  // queued meanwhile, as a pool's timers re-arm): a follower is woken only
  // when needed.
  if (led && result.status == wait_status::task) {
    // Whether it could have is what makes the followers sleep as a backup.
    keep_wanted_ = role_may_be_kept_locked(next);
    if (keep_wanted_ && backup_covers_locked(next)) {
      leader_ = &kept_role_;
      ++roles_kept_;
      return result;
    }
  }
  if (is_never(next)) {
    leader_ = nullptr;  // nothing to wait for
    return result;
  }
  // Pass the leader role on: someone must sleep for the (new) head. A role
  // kept by another taker stays kept while the backup covers it (or no one
  // idle could).
  if (leader_ == &kept_role_ && (backup_sleeping_ || sleeping_ == 0)) return result;
  leader_ = nullptr;
  hand_off_and_unlock(lock);
  return result;
}

void delayed_work_queue::use_manual_time(const manual_time* m) noexcept {
  std::lock_guard lock(mutex_);
  manual_ = m;
  spin_limit_ = duration::zero();
  spin_window_ = duration::zero();
}

void delayed_work_queue::time_moved() noexcept {
  std::lock_guard lock(mutex_);
  wake_all();
}

void delayed_work_queue::wake_one() noexcept {
  signal_spinners();
  available_.notify_one();
}

void delayed_work_queue::wake_one_and_unlock(std::unique_lock<std::mutex>& lock) noexcept {
  signal_spinners();
  lock.unlock();  // as in hand_off_and_unlock
  available_.notify_one();
}

void delayed_work_queue::wake_all() noexcept {
  signal_spinners();
  available_.notify_all();
}

bool delayed_work_queue::remove(task_base& t) {
  std::size_t left = 0;
  return remove(t, left);
}

bool delayed_work_queue::remove(task_base& t, std::size_t& left) {
  bool shrink = false;
  {
    std::lock_guard lock(mutex_);
    drain_inbox_locked();
    left = count();
    const std::size_t i = t.heap_index;
    if (i == task_base::not_queued) return false;
    if (in_segment(i)) {
      if (!segment_.remove(t, i & ~segment_tag)) return false;  // claimed: on its way to a taker
      --taken_;
    } else if ((i & ready_tag) != 0) {
      const std::size_t abs = i & ~ready_tag;
      if (abs < ready_popped_ || abs - ready_popped_ >= ready_.size()) return false;
      entry& slot = ready_[abs - ready_popped_];
      if (slot.node != &t) return false;
      slot.node = nullptr;  // an empty slot, skipped when it reaches the front
      --ready_count_;
      t.heap_index = task_base::not_queued;
      drop_empty_front();
    } else if (!index_.erase(t)) {
      return false;
    } else {
      shrink = index_.wants_shrink();
    }
    // A removal that empties the queue changes what idle takers should do
    // (a draining one returns, a surplus pool thread may retire): wake them.
    left = count();
    if (left == 0) wake_all();
  }
  intrusive_release(&t);  // outside the lock: may run the callable's destructor
  if (shrink) [[unlikely]]
    shrink_index_buffers();
  return true;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Java's DelayedWorkQueue in C++: a deadline index (a heap for work due soon,
// a far tier for the rest), a FIFO lane for work due at once, and the
// leader/follower wait. See detail/queue/delayed_work_queue.hpp.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <chronopool/detail/sync/cpu_relax.hpp>
#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/sync/lock_spinning.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <thread>


namespace chronopool::detail {

namespace {

// How far past the head's deadline a spinning follower lets the leader be
// before it takes the head itself (precision mode): a leader that is on its
// CPU takes it within a microsecond.
constexpr std::chrono::nanoseconds follower_grace{std::chrono::microseconds(2)};

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

delayed_work_queue::delayed_work_queue(unsigned near_window_log2)
    : index_(near_window_log2), near_spin_(near_kernel_timer_cost()) {}

delayed_work_queue::~delayed_work_queue() {
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
  if (head != nullptr && head->deadline <= now.time_since_epoch().count()) return task_of(index_.pop_heap_front());
  // The heap's head comes first in order but is not due, so its deadline is
  // after @p now and after every ready task's: ready work goes first.
  if (!ready_.empty()) return pop_ready();
  return nullptr;
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

delayed_work_queue::offer_status delayed_work_queue::offer_and_wake(task_ptr& t, std::size_t max_size, bool& new_head) {
  std::unique_lock lock(mutex_, std::defer_lock);
  lock_spinning(lock);
  if (t->cancelled()) return offer_status::cancelled;
  absorb_posted_locked();  // queued functions count towards the bound, as they always have
  if (count() >= max_size) return offer_status::full;
  const time_point wake_before = wake_or_never();
  index_.insert(t.get());  // may throw (allocation): nothing changed yet
  t.detach();              // the queue owns the reference now
  new_head = wake_or_never() < wake_before;
  if (new_head) {
    // A new head: the leader sleeps for a later deadline. Void its role and
    // wake one taker, which becomes leader for the new head.
    leader_ = nullptr;
    wake_one_and_unlock(lock);
  }
  return offer_status::queued;
}

task_ptr delayed_work_queue::poll() {
  std::lock_guard lock(mutex_);
  return task_ptr(take_due(clock::now()), task_ptr::adopt);
}

delayed_work_queue::wait_result delayed_work_queue::take_locked() {
  absorb_posted_locked();
  // A posted function on its turn (or with no task queued at all) needs no
  // clock reading.
  if (function_first()) {
    ++taken_;
    return {{}, wait_status::function, functions_.pop_front()};
  }
  if (count() == 0) return {{}, wait_status::timeout};
  if (task_base* t = take_due(clock::now())) {
    ++taken_;
    return {task_ptr(t, task_ptr::adopt), wait_status::task};
  }
  // No task is due: a posted function goes now, whoever's turn it was.
  if (!functions_.empty()) {
    ++taken_;
    return {{}, wait_status::function, functions_.pop_front()};
  }
  return {{}, wait_status::timeout};
}

delayed_work_queue::wait_result delayed_work_queue::try_take() {
  std::lock_guard lock(mutex_);
  return take_locked();
}

delayed_work_queue::wait_result delayed_work_queue::wait_for_task(time_point limit) {
  std::unique_lock lock(mutex_, std::defer_lock);
  lock_spinning(lock);
  const std::uint64_t epoch = interrupt_epoch_;
  const char me = 0;  // this wait's identity for the leader role
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
    const time_point now = clock::now();
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
    if (leader_ != nullptr) {
      // A head the leader waited for is gone (a follower took it, or it was
      // removed): stand in for the one now at the front instead.
      if (precision_mode() && !is_never(head) &&
          leader_head_.load(std::memory_order_relaxed) < head.time_since_epoch().count()) {
        leader_head_.store(head.time_since_epoch().count(), std::memory_order_relaxed);
      }
      untimed_wait(limit);  // follower: untimed unless the caller has a limit
    } else {
      // Leader: the only thread sleeping for the head's deadline. A caller
      // whose own limit comes first sleeps until then and hands the role on
      // when it leaves.
      leader_ = &me;
      if (precision_mode() && !is_never(head)) {
        leader_head_.store(head.time_since_epoch().count(), std::memory_order_relaxed);
      }
      const time_point until = std::min(head, limit);
      if (precision_mode() && !is_never(until)) {
        sleep_then_spin(lock, until);
      } else if (!is_never(until) && spins_for(until - now)) {
        spin_until(lock, until);  // sleeping would cost more, and run it later, than waiting
      } else if (!sleep_until(lock, until) && !is_never(until)) {
        wake_latency_.observe(saturating_difference(clock::now(), until));
      }
      if (leader_ == &me) {
        leader_ = nullptr;
        leader_head_.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
      }
    }
  }

  // Pass the leader role on: someone must sleep for the (new) head.
  if (leader_ == nullptr && index_.wake_time()) hand_off_and_unlock(lock);
  return result;
}

bool delayed_work_queue::sleep_until(std::unique_lock<std::mutex>& lock, time_point until) {
  // Counted idle, then a last look for a function pushed without the lock
  // (see idle_): one pushed after this look finds us counted.
  idle_.fetch_add(1, std::memory_order_seq_cst);
  if (posted_.load(std::memory_order_seq_cst) != nullptr) {
    idle_.fetch_sub(1, std::memory_order_relaxed);
    return true;  // as if woken: the caller looks again
  }
  ++sleeping_;
  bool woken = true;
  if (is_never(until)) {
    available_.wait(lock);
  } else {
    woken = available_.wait_until(lock, until) == std::cv_status::no_timeout;
  }
  --sleeping_;
  idle_.fetch_sub(1, std::memory_order_relaxed);
  return woken;
}

void delayed_work_queue::set_precision_spin_limit(std::chrono::nanoseconds limit) noexcept {
  std::lock_guard lock(mutex_);
  spin_limit_ = std::max(limit, std::chrono::nanoseconds::zero());
  // Until a wake-up has been measured, the whole limit: the first sleeps
  // end early rather than late, and the window shrinks from there.
  spin_window_ = spin_limit_;
}

void delayed_work_queue::sleep_then_spin(std::unique_lock<std::mutex>& lock, time_point until) {
  // Saturating: a limit may be as long as the caller likes.
  const time_point sleep_to =
      spin_window_ >= until.time_since_epoch() ? time_point{} : until - spin_window_;
  if (clock::now() < sleep_to) {
    if (sleep_until(lock, sleep_to)) return;  // woken: something changed, look again
    // How late the kernel woke us: the window becomes twice the worst recent
    // lateness (decaying by 1/16 per sleep), so the next sleep ends before
    // the deadline even when wake-ups are slow.
    const duration late = clock::now() - sleep_to;
    const duration floor = std::min(spin_limit_, duration(std::chrono::microseconds(1)));
    spin_window_ = std::clamp(std::max(2 * late, spin_window_ - spin_window_ / 16), floor, spin_limit_);
  }
  spin_until(lock, until);
}

bool delayed_work_queue::spins_for(duration ahead) const noexcept {
  // Subtracted from `ahead` (a time still to come, and the latency at most
  // 100 us): the near spin may be as long as a test likes.
  return ahead - wake_latency_.get() <= near_spin_;
}

void delayed_work_queue::set_near_spin(std::chrono::nanoseconds d) noexcept {
  std::lock_guard lock(mutex_);
  near_spin_ = std::max(d, std::chrono::nanoseconds::zero());
}

bool delayed_work_queue::spin_until(std::unique_lock<std::mutex>& lock, time_point until, bool leader) {
  // Spin without the lock, so that submitters are not held up; wake_one(),
  // wake_all() and the hand-offs bump signals_ for whatever would have woken
  // a sleeper (read under the lock, so no bump after it is missed). Every
  // spin_yield_interval the CPU is offered to whoever else can run on it.
  // As sleep_until(): counted idle, then a last look for a pushed function.
  idle_.fetch_add(1, std::memory_order_seq_cst);
  if (posted_.load(std::memory_order_seq_cst) != nullptr) {
    idle_.fetch_sub(1, std::memory_order_relaxed);
    return true;  // as if signalled
  }
  if (leader) {
    spinning_ = true;
  } else {
    ++spinning_followers_;
  }
  const std::uint64_t seen = signals_.load(std::memory_order_relaxed);
  lock.unlock();
  bool signalled = false;
  time_point next_yield = clock::now() + spin_yield_interval;
  for (time_point now = clock::now(); now < until; now = clock::now()) {
    if (signals_.load(std::memory_order_relaxed) != seen) {
      signalled = true;
      break;
    }
    // A follower in precision mode stands in for a leader held up past the
    // head's deadline (preempted, or its sleep woken late): it looks again,
    // and takes the head itself.
    if (!leader && now.time_since_epoch().count() - follower_grace.count() >=
                       leader_head_.load(std::memory_order_relaxed)) {
      signalled = true;
      break;
    }
    if (now >= next_yield) {
      std::this_thread::yield();
      next_yield = clock::now() + spin_yield_interval;
    } else {
      cpu_relax();
    }
  }
  lock_spinning(lock);
  if (leader) {
    spinning_ = false;
  } else {
    --spinning_followers_;
  }
  idle_.fetch_sub(1, std::memory_order_relaxed);
  return signalled;
}

void delayed_work_queue::hand_off_and_unlock(std::unique_lock<std::mutex>& lock) noexcept {
  // A spinning follower sees the signal within nanoseconds; notifying a
  // sleeper as well would wake a second thread for one role.
  if (spinning_followers_ != 0) {
    signals_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Unlocked first: a taker woken while we hold the lock would find it held
  // and block again at once (two more switches, on the CPU we need to run
  // the task we took). Nothing is lost: the role is void under the lock, so
  // a thread that starts to wait after the unlock takes it itself.
  lock.unlock();
  available_.notify_one();
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
    left = count();
    const std::size_t i = t.heap_index;
    if (i == task_base::not_queued) return false;
    if ((i & ready_tag) != 0) {
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

void delayed_work_queue::shrink_index_buffers() noexcept { detail::shrink_index_buffers(index_, mutex_); }

std::vector<task_ptr> delayed_work_queue::remove_if(const std::function<bool(const task_base&)>& pred) {
  std::vector<index_node*> taken;
  {
    std::lock_guard lock(mutex_);
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
    taken.reserve(count());
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
  if (count() == 0) return {};
  index_.pull_earliest();  // the true head, due or not, may wait in the tier
  task_base* const t = ready_first() ? pop_ready() : task_of(index_.pop_first());
  if (t == nullptr) return {};  // out of memory moving the tier: nothing taken
  task_ptr head(t, task_ptr::adopt);
  if (count() == 0) wake_all();
  return head;
}

std::size_t delayed_work_queue::size() const {
  std::lock_guard lock(mutex_);
  absorb_posted_locked();
  return count();
}

std::size_t delayed_work_queue::index_bytes() const {
  std::lock_guard lock(mutex_);
  return index_.reserved_bytes();
}

std::optional<time_point> delayed_work_queue::head_deadline() const {
  std::lock_guard lock(mutex_);
  std::optional<time_point> head = index_.first_deadline();
  if (!ready_.empty()) {
    const time_point ready_head(duration(ready_.front().deadline));
    if (!head || ready_head < *head) head = ready_head;
  }
  return head;
}

delayed_work_queue::activity delayed_work_queue::current_activity() const {
  std::lock_guard lock(mutex_);
  absorb_posted_locked();
  activity a;
  a.taken = taken_;
  if (!functions_.empty()) {
    a.earliest = time_point::min();
    return a;
  }
  a.earliest = index_.first_deadline();
  if (!ready_.empty()) {
    const time_point ready_head(duration(ready_.front().deadline));
    if (!a.earliest || ready_head < *a.earliest) a.earliest = ready_head;
  }
  return a;
}

std::optional<time_point> delayed_work_queue::wake_deadline() const {
  std::lock_guard lock(mutex_);
  return index_.wake_time();
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

bool delayed_work_queue::check_invariants() const {
  std::lock_guard lock(mutex_);
  if (!index_.check_invariants()) return false;
  std::size_t live = 0;
  for (std::size_t k = 0; k < ready_.size(); ++k) {
    const entry& e = ready_[k];
    if (e.node == nullptr) {
      if (k == 0) return false;  // the front is never an empty slot
      continue;
    }
    ++live;
    if (e.node->heap_index != (ready_tag | (ready_popped_ + k))) return false;
    if (e.deadline != e.node->deadline().time_since_epoch().count() || e.sequence != e.node->sequence()) return false;
  }
  return live == ready_count_;
}

bool delayed_work_queue::is_spinning() const {
  std::lock_guard lock(mutex_);
  return spinning_;
}

std::size_t delayed_work_queue::spinning_followers() const {
  std::lock_guard lock(mutex_);
  return spinning_followers_;
}

bool delayed_work_queue::has_leader() const {
  std::lock_guard lock(mutex_);
  return leader_ != nullptr;
}

}  // namespace chronopool::detail

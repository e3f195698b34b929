// Java's DelayedWorkQueue in C++: an indexed binary heap plus the
// leader/follower wait. See detail/delayed_work_queue.hpp.
#include <chronopool/detail/delayed_work_queue.hpp>

#include <algorithm>

namespace chronopool::detail {
namespace {

// Tasks leave the queue as raw pointers while the lock is held; their
// references are dropped only after it is released, because dropping the
// last one runs the callable's destructor, which is user code.
std::vector<task_ptr> adopt_sorted(std::vector<task_base*> raw) {
  std::sort(raw.begin(), raw.end(), [](const task_base* a, const task_base* b) { return runs_before(*a, *b); });
  std::vector<task_ptr> out;
  out.reserve(raw.size());
  for (task_base* t : raw) out.emplace_back(t, task_ptr::adopt);
  return out;
}

}  // namespace

delayed_work_queue::~delayed_work_queue() {
  for (const entry& e : heap_) {
    e.task->heap_index = task_base::not_queued;
    intrusive_release(e.task);
  }
  for (const entry& e : ready_) {
    if (e.task == nullptr) continue;
    e.task->heap_index = task_base::not_queued;
    intrusive_release(e.task);
  }
}

void delayed_work_queue::sift_up(std::size_t i) noexcept {
  const entry e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / arity;
    if (!(e < heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void delayed_work_queue::sift_down(std::size_t i) noexcept {
  const entry e = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = arity * i + 1;
    if (first >= n) break;
    const std::size_t last = std::min(first + arity, n);
    std::size_t best = first;
    for (std::size_t c = first + 1; c < last; ++c)
      if (heap_[c] < heap_[best]) best = c;
    if (!(heap_[best] < e)) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, e);
}

void delayed_work_queue::push_entry(task_base* t) {
  heap_.push_back(entry::of(t));  // may throw (allocation): nothing changed yet
  t->heap_index = heap_.size() - 1;
  sift_up(t->heap_index);
}

task_base* delayed_work_queue::remove_at(std::size_t i) noexcept {
  task_base* const t = heap_[i].task;
  const entry last = heap_.back();
  heap_.pop_back();
  t->heap_index = task_base::not_queued;
  if (i < heap_.size()) {
    // The moved-in last entry may belong above or below slot i.
    place(i, last);
    sift_down(i);
    if (heap_[i].task == last.task) sift_up(i);
  }
  return t;
}

void delayed_work_queue::drop_empty_front() noexcept {
  while (!ready_.empty() && ready_.front().task == nullptr) {
    ready_.pop_front();
    ++ready_popped_;
  }
}

task_base* delayed_work_queue::pop_ready() noexcept {
  task_base* const t = ready_.front().task;
  ready_.pop_front();
  ++ready_popped_;
  --ready_count_;
  t->heap_index = task_base::not_queued;
  drop_empty_front();
  return t;
}

task_base* delayed_work_queue::take_due(time_point now) noexcept {
  // A ready-lane task is due by definition: its deadline is the clock reading
  // of a submit that happened before this take.
  if (ready_first()) return pop_ready();
  if (!heap_.empty() && head_time() <= now) return remove_at(0);
  // The heap's head comes first in order but is not due, so its deadline is
  // after @p now and after every ready task's: ready work goes first.
  if (!ready_.empty()) return pop_ready();
  return nullptr;
}

bool delayed_work_queue::offer_now(task_ptr t) {
  std::lock_guard lock(mutex_);
  if (t->cancelled()) return false;
  ready_.push_back(entry::of(t.get()));  // may throw (allocation): nothing changed yet
  t->heap_index = ready_tag | (ready_popped_ + ready_.size() - 1);
  ++ready_count_;
  t.detach();  // the lane owns the reference now
  // One taker per new task; a leader sleeping for a later heap head may be
  // the one woken, and takes this instead (the role passes on as usual).
  available_.notify_one();
  return true;
}

bool delayed_work_queue::offer(task_ptr t) {
  return offer_within(std::move(t), heap_.max_size()) == offer_status::queued;
}

bool delayed_work_queue::offer(task_ptr t, bool& new_head) {
  std::lock_guard lock(mutex_);
  return offer_locked(t, heap_.max_size(), new_head) == offer_status::queued;
}

delayed_work_queue::offer_status delayed_work_queue::offer_within(task_ptr t, std::size_t max_size) {
  std::lock_guard lock(mutex_);
  bool new_head = false;
  return offer_locked(t, max_size, new_head);
}

delayed_work_queue::offer_status delayed_work_queue::offer_locked(task_ptr& t, std::size_t max_size, bool& new_head) {
  if (t->cancelled()) return offer_status::cancelled;
  if (count() >= max_size) return offer_status::full;
  push_entry(t.get());
  task_base* const raw = t.detach();  // the heap owns the reference now
  new_head = heap_.front().task == raw;
  if (new_head) {
    // A new head: the leader sleeps for a later deadline. Void its role and
    // wake one taker, which becomes leader for the new head.
    leader_ = nullptr;
    available_.notify_one();
  }
  return offer_status::queued;
}

task_ptr delayed_work_queue::poll() {
  std::lock_guard lock(mutex_);
  return task_ptr(take_due(clock::now()), task_ptr::adopt);
}

delayed_work_queue::wait_result delayed_work_queue::wait_for_task(time_point limit) {
  std::unique_lock lock(mutex_);
  const std::uint64_t epoch = interrupt_epoch_;
  const char me = 0;  // this wait's identity for the leader role
  wait_result result{{}, wait_status::timeout};

  // Waits until @p until (forever for the "never" sentinel); false on timeout.
  auto sleep_until = [&](time_point until) {
    if (is_never(until)) {
      available_.wait(lock);
      return true;
    }
    return available_.wait_until(lock, until) == std::cv_status::no_timeout;
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
    const time_point now = clock::now();
    if (count() == 0) {
      if (mode_ == mode::draining) {
        result.status = wait_status::closed;
        break;
      }
      if (limit <= now) break;  // timeout
      sleep_until(limit);
      continue;
    }
    if (task_base* t = take_due(now)) {
      result = {task_ptr(t, task_ptr::adopt), wait_status::task};
      // Draining takers return once the queue is empty; wake them to see it.
      if (count() == 0 && mode_ == mode::draining) available_.notify_all();
      break;
    }
    const time_point head = head_time();  // not due; the ready lane is empty
    if (limit <= now) break;  // timeout
    if (leader_ != nullptr) {
      sleep_until(limit);  // follower: untimed unless the caller has a limit
    } else {
      // Leader: the only thread sleeping for the head's deadline. A caller
      // whose own limit comes first sleeps until then and hands the role on
      // when it leaves.
      leader_ = &me;
      sleep_until(std::min(head, limit));
      if (leader_ == &me) leader_ = nullptr;
    }
  }

  // Pass the leader role on: someone must sleep for the (new) head.
  if (leader_ == nullptr && !heap_.empty()) available_.notify_one();
  return result;
}

bool delayed_work_queue::remove(task_base& t) {
  std::size_t left = 0;
  return remove(t, left);
}

bool delayed_work_queue::remove(task_base& t, std::size_t& left) {
  task_base* removed = nullptr;
  {
    std::lock_guard lock(mutex_);
    left = count();
    const std::size_t i = t.heap_index;
    if (i != task_base::not_queued && (i & ready_tag) != 0) {
      const std::size_t abs = i & ~ready_tag;
      if (abs < ready_popped_ || abs - ready_popped_ >= ready_.size()) return false;
      entry& slot = ready_[abs - ready_popped_];
      if (slot.task != &t) return false;
      removed = slot.task;
      slot.task = nullptr;  // an empty slot, skipped when it reaches the front
      --ready_count_;
      removed->heap_index = task_base::not_queued;
      drop_empty_front();
    } else {
      if (i >= heap_.size() || heap_[i].task != &t) return false;
      removed = remove_at(i);
    }
    // A removal that empties the queue changes what idle takers should do
    // (a draining one returns, a surplus pool thread may retire): wake them.
    left = count();
    if (left == 0) available_.notify_all();
  }
  intrusive_release(removed);  // outside the lock: may run the callable's destructor
  return true;
}

std::vector<task_ptr> delayed_work_queue::remove_if(const std::function<bool(const task_base&)>& pred) {
  std::vector<task_base*> taken;
  {
    std::lock_guard lock(mutex_);
    std::vector<entry> kept;
    kept.reserve(heap_.size());
    for (const entry& e : heap_) {
      if (pred(*e.task)) {
        e.task->heap_index = task_base::not_queued;
        taken.push_back(e.task);
      } else {
        kept.push_back(e);
      }
    }
    std::deque<entry> kept_ready;
    for (const entry& e : ready_) {
      if (e.task == nullptr) continue;
      if (pred(*e.task)) {
        e.task->heap_index = task_base::not_queued;
        taken.push_back(e.task);
      } else {
        e.task->heap_index = ready_tag | (ready_popped_ + kept_ready.size());
        kept_ready.push_back(e);
      }
    }
    ready_ = std::move(kept_ready);  // renumbered above, from ready_popped_
    ready_count_ = ready_.size();
    if (taken.empty()) return {};
    heap_ = std::move(kept);
    for (std::size_t i = 0; i < heap_.size(); ++i) place(i, heap_[i]);
    // Floyd's construction: sift down every parent, the last one first.
    const std::size_t parents = heap_.size() < 2 ? 0 : (heap_.size() - 2) / arity + 1;
    for (std::size_t i = parents; i-- > 0;) sift_down(i);
    // The head may have changed to a later deadline: the leader re-checks.
    leader_ = nullptr;
    available_.notify_all();
  }
  return adopt_sorted(std::move(taken));
}

std::vector<task_ptr> delayed_work_queue::drain() {
  std::vector<task_base*> taken;
  {
    std::lock_guard lock(mutex_);
    taken.reserve(heap_.size());
    for (const entry& e : heap_) {
      e.task->heap_index = task_base::not_queued;
      taken.push_back(e.task);
    }
    heap_.clear();
    for (const entry& e : ready_) {
      if (e.task == nullptr) continue;
      e.task->heap_index = task_base::not_queued;
      taken.push_back(e.task);
    }
    ready_popped_ += ready_.size();
    ready_.clear();
    ready_count_ = 0;
    available_.notify_all();
  }
  return adopt_sorted(std::move(taken));
}

task_ptr delayed_work_queue::pop_head() {
  std::lock_guard lock(mutex_);
  if (count() == 0) return {};
  task_ptr head(ready_first() ? pop_ready() : remove_at(0), task_ptr::adopt);
  if (count() == 0) available_.notify_all();
  return head;
}

std::size_t delayed_work_queue::size() const {
  std::lock_guard lock(mutex_);
  return count();
}

std::optional<time_point> delayed_work_queue::head_deadline() const {
  std::lock_guard lock(mutex_);
  if (ready_first()) return time_point(duration(ready_.front().deadline));
  if (heap_.empty()) return std::nullopt;
  return head_time();
}

void delayed_work_queue::set_mode(mode m) {
  std::lock_guard lock(mutex_);
  mode_ = std::max(mode_, m);  // modes only advance: a closed queue never reopens
  available_.notify_all();
}

delayed_work_queue::mode delayed_work_queue::current_mode() const {
  std::lock_guard lock(mutex_);
  return mode_;
}

void delayed_work_queue::interrupt_waiters() {
  std::lock_guard lock(mutex_);
  ++interrupt_epoch_;
  available_.notify_all();
}

bool delayed_work_queue::check_invariants() const {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    const entry& e = heap_[i];
    if (e.task->heap_index != i) return false;
    // The inline key must still be the task's key.
    if (e.deadline != e.task->deadline().time_since_epoch().count() || e.sequence != e.task->sequence()) return false;
    if (i > 0 && e < heap_[(i - 1) / arity]) return false;
  }
  std::size_t live = 0;
  for (std::size_t k = 0; k < ready_.size(); ++k) {
    const entry& e = ready_[k];
    if (e.task == nullptr) {
      if (k == 0) return false;  // the front is never an empty slot
      continue;
    }
    ++live;
    if (e.task->heap_index != (ready_tag | (ready_popped_ + k))) return false;
    if (e.deadline != e.task->deadline().time_since_epoch().count() || e.sequence != e.task->sequence()) return false;
  }
  if (live != ready_count_) return false;
  return true;
}

bool delayed_work_queue::has_leader() const {
  std::lock_guard lock(mutex_);
  return leader_ != nullptr;
}

}  // namespace chronopool::detail

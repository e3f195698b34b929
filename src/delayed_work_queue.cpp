// Java's DelayedWorkQueue in C++: an indexed 4-ary heap for work due soon, a
// far tier of buckets for the rest, and the leader/follower wait. See detail/delayed_work_queue.hpp.
#include <chronopool/detail/delayed_work_queue.hpp>

#include <algorithm>
#include <bit>
#include <stdexcept>

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

delayed_work_queue::delayed_work_queue(unsigned near_window_log2) : near_bits_(near_window_log2) {
  if (near_window_log2 < 1 || near_window_log2 > 62)
    throw std::invalid_argument("delayed_work_queue: the near window must be 2^1 to 2^62 ns");
  set_base(key_of(clock::now().time_since_epoch().count()));
}

delayed_work_queue::~delayed_work_queue() {
  for (const entry& e : heap_) {
    e.task->heap_index = task_base::not_queued;
    intrusive_release(e.task);
  }
  for (auto& bucket : tier_)
    for (task_base* t : bucket) {
      t->heap_index = task_base::not_queued;
      intrusive_release(t);
    }
  for (task_base* t : never_) {
    t->heap_index = task_base::not_queued;
    intrusive_release(t);
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

// ---- the far tier ---------------------------------------------------------------

void delayed_work_queue::set_base(key b) noexcept {
  base_ = b;
  const key window_start = b >> near_bits_ << near_bits_;
  const key width = key{1} << near_bits_;
  // The last window of the key range has no end: everything there is near.
  near_limit_ = window_start > ~key{0} - width ? ~key{0} : window_start + width;
}

delayed_work_queue::key delayed_work_queue::lead(key now) const noexcept {
  const key width = key{1} << near_bits_;
  return now > ~key{0} - width ? ~key{0} : now + width;
}

delayed_work_queue::key delayed_work_queue::bucket_floor(unsigned j) const noexcept {
  // Keys in bucket j share the bits above j with base_ and have bit j set.
  const key above = j == 63 ? 0 : base_ >> (j + 1) << (j + 1);
  return above | (key{1} << j);
}

delayed_work_queue::key delayed_work_queue::bucket_min(unsigned j) const noexcept {
  key m = ~key{0};
  for (const task_base* t : tier_[j]) m = std::min(m, key_of(t->deadline().time_since_epoch().count()));
  return m;
}

void delayed_work_queue::tier_push(task_base* t, key k) {
  // k >= near_limit_ > base_, so they differ, in a bit at or above near_bits_.
  const auto j = static_cast<unsigned>(std::bit_width(k ^ base_) - 1);
  auto& bucket = tier_[j];
  bucket.push_back(t);  // may throw (allocation): nothing changed yet
  t->heap_index = tier_tag | (std::size_t{j} << bucket_shift) | (bucket.size() - 1);
  tier_mask_ |= std::uint64_t{1} << j;
  ++tier_count_;
}

task_base* delayed_work_queue::tier_erase(std::size_t j, std::size_t pos) noexcept {
  auto& bucket = tier_[j];
  task_base* const t = bucket[pos];
  // Buckets are unordered: the last task fills the hole.
  bucket[pos] = bucket.back();
  bucket[pos]->heap_index = tier_tag | (j << bucket_shift) | pos;
  bucket.pop_back();
  if (bucket.empty()) tier_mask_ &= ~(std::uint64_t{1} << j);
  --tier_count_;
  t->heap_index = task_base::not_queued;
  return t;
}

task_base* delayed_work_queue::never_erase(std::size_t pos) noexcept {
  task_base* const t = never_[pos];
  never_[pos] = never_.back();
  never_[pos]->heap_index = never_tag | pos;
  never_.pop_back();
  t->heap_index = task_base::not_queued;
  return t;
}

void delayed_work_queue::place_new(task_base* t) {
  const time_point d = t->deadline();
  if (is_never(d)) {
    never_.push_back(t);  // may throw: nothing changed yet
    t->heap_index = never_tag | (never_.size() - 1);
    return;
  }
  // An empty queue may have an old reference time; start from now, so the
  // near window is the one that holds now rather than one long past.
  if (heap_.empty() && tier_count_ == 0) set_base(lead(key_of(clock::now().time_since_epoch().count())));
  const key k = key_of(d.time_since_epoch().count());
  if (k < near_limit_) {
    push_entry(t);
  } else {
    tier_push(t, k);
  }
}

void delayed_work_queue::rebase(key to) noexcept {
  // Buckets at or below the highest bit in which the reference time changes
  // are redistributed; those above keep their meaning (their tasks share the
  // same higher bits with the new reference time as with the old one).
  const auto top = static_cast<unsigned>(std::bit_width(base_ ^ to) - 1);
  const std::uint64_t affected = tier_mask_ & (top == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << top) - 1);
  const key old_base = base_;
  const key old_limit = near_limit_;
  set_base(to);
  if (affected == 0) return;
  // Reserve every destination first, so that moving cannot fail half-way.
  // Tasks below bucket `top` are all due before `to` (they have a 0 where it
  // has its 1 at bit top): they go to the heap. Those of bucket `top` go to
  // the heap or to a lower bucket, all of which are empty by then.
  std::size_t to_heap = 0;
  std::size_t per_bucket[buckets] = {};
  for (std::uint64_t m = affected; m != 0; m &= m - 1) {
    const auto j = static_cast<unsigned>(std::countr_zero(m));
    for (const task_base* t : tier_[j]) {
      const key k = key_of(t->deadline().time_since_epoch().count());
      if (k < near_limit_) {
        ++to_heap;
      } else {
        ++per_bucket[std::bit_width(k ^ base_) - 1];
      }
    }
  }
  try {
    heap_.reserve(heap_.size() + to_heap);
    for (std::size_t j = 0; j < buckets; ++j)
      if (per_bucket[j] != 0) tier_[j].reserve(tier_[j].size() + per_bucket[j]);
  } catch (...) {
    base_ = old_base;  // out of memory: the tasks stay, a later take retries
    near_limit_ = old_limit;
    return;
  }
  for (std::uint64_t m = affected; m != 0; m &= m - 1) {
    const auto j = static_cast<unsigned>(std::countr_zero(m));
    std::vector<task_base*> moving;
    moving.swap(tier_[j]);
    tier_mask_ &= ~(std::uint64_t{1} << j);
    tier_count_ -= moving.size();
    for (task_base* t : moving) {
      const key k = key_of(t->deadline().time_since_epoch().count());
      if (k < near_limit_) {
        push_entry(t);  // reserved: does not throw
      } else {
        tier_push(t, k);  // a lower bucket, reserved: does not throw
      }
    }
    // Nothing moved back into bucket j (only lower ones): it keeps its buffer.
    moving.clear();
    tier_[j].swap(moving);
  }
}

void delayed_work_queue::pull_earliest() noexcept {
  if (!heap_.empty() || tier_mask_ == 0) return;
  // A reference time at the earliest tier key puts that task in the heap.
  rebase(bucket_min(static_cast<unsigned>(std::countr_zero(tier_mask_))));
}

delayed_work_queue::key delayed_work_queue::wake_key() const noexcept {
  key k = ~key{0};
  if (!heap_.empty()) {
    k = key_of(heap_.front().deadline);
  } else if (tier_mask_ != 0) {
    // A window before the bucket's lower bound: its tasks move into the heap
    // then, and the leader sleeps on for the exact head.
    const key floor = bucket_floor(static_cast<unsigned>(std::countr_zero(tier_mask_)));
    const key width = key{1} << near_bits_;
    k = floor > width ? floor - width : 0;
  }
  return k;
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
  // Less than a window is left before the near window ends: move what is
  // coming near into the heap one window ahead of time, so that a task is in
  // the heap, and a leader sleeps for its exact deadline, before it is due.
  const key ahead = lead(key_of(now.time_since_epoch().count()));
  if (ahead >= near_limit_) {
    if (tier_mask_ != 0) {
      rebase(ahead);
    } else if (heap_.empty()) {
      set_base(ahead);  // nothing to move: just follow the clock
    }
  }
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
  const key wake_before = wake_key();
  place_new(t.get());
  t.detach();  // the queue owns the reference now
  new_head = wake_key() < wake_before;
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
    // Not due, and the ready lane is empty: wake for the heap's head or, with
    // none, for the earliest tier bucket to come near; never for "never".
    const key wake = wake_key();
    const time_point head = wake == ~key{0} ? time_point::max() : time_of(wake);
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
  if (leader_ == nullptr && (!heap_.empty() || tier_mask_ != 0)) available_.notify_one();
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
    if (i == task_base::not_queued) return false;
    if ((i & ready_tag) != 0) {
      const std::size_t abs = i & ~ready_tag;
      if (abs < ready_popped_ || abs - ready_popped_ >= ready_.size()) return false;
      entry& slot = ready_[abs - ready_popped_];
      if (slot.task != &t) return false;
      removed = slot.task;
      slot.task = nullptr;  // an empty slot, skipped when it reaches the front
      --ready_count_;
      removed->heap_index = task_base::not_queued;
      drop_empty_front();
    } else if ((i & tier_tag) != 0) {
      const std::size_t j = (i & ~tier_tag) >> bucket_shift;
      const std::size_t pos = i & position_mask;
      if (j >= buckets || pos >= tier_[j].size() || tier_[j][pos] != &t) return false;
      removed = tier_erase(j, pos);
    } else if ((i & never_tag) != 0) {
      const std::size_t pos = i & ~never_tag;
      if (pos >= never_.size() || never_[pos] != &t) return false;
      removed = never_erase(pos);
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
    // The tier and the never list: keep the rest in place, renumbered.
    auto filter = [&](std::vector<task_base*>& v, auto index_of) {
      std::size_t out = 0;
      for (task_base* t : v) {
        if (pred(*t)) {
          t->heap_index = task_base::not_queued;
          taken.push_back(t);
        } else {
          t->heap_index = index_of(out);
          v[out++] = t;
        }
      }
      const std::size_t dropped = v.size() - out;
      v.resize(out);
      return dropped;
    };
    for (std::size_t j = 0; j < buckets; ++j) {
      if (tier_[j].empty()) continue;
      tier_count_ -= filter(tier_[j], [j](std::size_t pos) { return tier_tag | (j << bucket_shift) | pos; });
      if (tier_[j].empty()) tier_mask_ &= ~(std::uint64_t{1} << j);
    }
    filter(never_, [](std::size_t pos) { return never_tag | pos; });
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
    for (auto& bucket : tier_) {
      for (task_base* t : bucket) {
        t->heap_index = task_base::not_queued;
        taken.push_back(t);
      }
      bucket.clear();
    }
    tier_mask_ = 0;
    tier_count_ = 0;
    for (task_base* t : never_) {
      t->heap_index = task_base::not_queued;
      taken.push_back(t);
    }
    never_.clear();
    available_.notify_all();
  }
  return adopt_sorted(std::move(taken));
}

task_ptr delayed_work_queue::pop_head() {
  std::lock_guard lock(mutex_);
  if (count() == 0) return {};
  pull_earliest();  // the true head, due or not, may wait in the tier
  task_base* t = nullptr;
  if (ready_first()) {
    t = pop_ready();
  } else if (!heap_.empty()) {
    t = remove_at(0);
  } else if (tier_mask_ == 0) {
    // Only "never" tasks: the first submitted of them.
    const auto first = std::min_element(never_.begin(), never_.end(), [](const task_base* a, const task_base* b) {
      return a->sequence() < b->sequence();
    });
    t = never_erase(static_cast<std::size_t>(first - never_.begin()));
  } else {
    return {};  // out of memory moving the tier: nothing taken
  }
  task_ptr head(t, task_ptr::adopt);
  if (count() == 0) available_.notify_all();
  return head;
}

std::size_t delayed_work_queue::size() const {
  std::lock_guard lock(mutex_);
  return count();
}

std::optional<time_point> delayed_work_queue::head_deadline() const {
  std::lock_guard lock(mutex_);
  std::optional<time_point> head;
  auto consider = [&](time_point t) {
    if (!head || t < *head) head = t;
  };
  if (!ready_.empty()) consider(time_point(duration(ready_.front().deadline)));
  // Every tier task comes after every heap task, but one that no taker has
  // moved in yet may come before a ready task.
  if (!heap_.empty()) {
    consider(head_time());
  } else if (tier_mask_ != 0) {
    consider(time_of(bucket_min(static_cast<unsigned>(std::countr_zero(tier_mask_)))));
  }
  if (!head && !never_.empty()) head = time_point::max();
  return head;
}

std::optional<time_point> delayed_work_queue::wake_deadline() const {
  std::lock_guard lock(mutex_);
  const key k = wake_key();
  if (k == ~key{0}) return std::nullopt;
  return time_of(k);
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
  std::size_t in_tier = 0;
  for (std::size_t j = 0; j < buckets; ++j) {
    const bool marked = (tier_mask_ >> j & 1) != 0;
    if (marked == tier_[j].empty()) return false;
    for (std::size_t pos = 0; pos < tier_[j].size(); ++pos) {
      const task_base* t = tier_[j][pos];
      if (t->heap_index != (tier_tag | (j << bucket_shift) | pos)) return false;
      const key k = key_of(t->deadline().time_since_epoch().count());
      // In the tier only when not near, and in the bucket its key names.
      if (k < near_limit_ || is_never(t->deadline())) return false;
      if (static_cast<std::size_t>(std::bit_width(k ^ base_) - 1) != j) return false;
    }
    in_tier += tier_[j].size();
  }
  if (in_tier != tier_count_) return false;
  for (const entry& e : heap_)
    if (key_of(e.deadline) >= near_limit_ || is_never(time_point(duration(e.deadline)))) return false;
  for (std::size_t pos = 0; pos < never_.size(); ++pos)
    if (never_[pos]->heap_index != (never_tag | pos) || !is_never(never_[pos]->deadline())) return false;
  return true;
}

bool delayed_work_queue::has_leader() const {
  std::lock_guard lock(mutex_);
  return leader_ != nullptr;
}

}  // namespace chronopool::detail

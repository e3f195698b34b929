// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Delivering a shard's waits: the fired ones collected from the index and
// shared out in chunks, the abort batch, each list claimed, then completed.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <chronopool/detail/sync/cpu_relax.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/timer/inline_abort_chunk.hpp>

#include <chrono>
#include <mutex>
#include <utility>
#include <vector>

namespace chronopool::detail {

namespace {

// What a delivery function destroyed unrun hands back to the thread posting
// it, so that a failed post can still deliver its waits (see post_list).
struct handback_slot {
  wait_list list;
  bool batch_dropped = false;
};
thread_local handback_slot* handback = nullptr;

struct posting_scope {
  handback_slot* outer;
  explicit posting_scope(handback_slot* slot) noexcept : outer(std::exchange(handback, slot)) {}
  ~posting_scope() { handback = outer; }
};

/// The function posted to the context to deliver waits there: a list of
/// fired ones, or (batch) whatever the abort batch holds when it runs.
class delivery {
 public:
  /// @p claimed: the fired waits of @p list were claimed already.
  delivery(std::shared_ptr<timer_shard> shard, wait_list list, bool batch, bool claimed = false) noexcept
      : shard_(std::move(shard)), list_(std::move(list)), batch_(batch), claimed_(claimed) {}
  delivery(delivery&& o) noexcept
      : shard_(std::move(o.shard_)),
        list_(std::exchange(o.list_, {})),
        batch_(o.batch_),
        claimed_(o.claimed_),
        started_(o.started_) {}
  delivery& operator=(delivery&&) = delete;

  ~delivery() {
    if (!shard_) return;  // moved from
    if (started_) {
      if (!delivering_) return;  // ran to the end
      // A handler threw out of operator(): the rest go on without it.
      if (!list_.empty()) shard_->post_list(std::exchange(list_, {}));
      if (staying_) shard_->leave_drain();
      return;
    }
    // Destroyed unrun: by our own post that failed or was refused (the
    // poster decides), or by a context that is going (Asio's rule: the
    // handlers are destroyed uncalled).
    if (handback != nullptr) {
      handback->list.swap(list_);
      handback->batch_dropped = handback->batch_dropped || batch_;
      return;
    }
    if (batch_) {
      list_ = shard_->take_batch();
    } else {
      shard_->claim(list_);
    }
    timer_shard::discard(list_);
  }

  void operator()() {
    started_ = true;
    delivering_ = true;
    if (batch_) {
      drain();
      delivering_ = false;
      return;
    }
    if (!claimed_) {
      if (auto* stall = testing::before_claim.load(std::memory_order_relaxed)) stall();
      shard_->claim(list_);  // a cancel that came meanwhile made some of them aborts
    }
    shard_->deliver(list_);
    delivering_ = false;
  }

 private:
  /// Delivers the abort batch. A batch of many waits means aborts are
  /// streaming in from another thread (a mass cancel). Delivering a record
  /// takes a few ns, so a drain that ended at once would leave the next
  /// abort to post (and wake a thread) again for a handful of waits, and in
  /// a mass cancel those wake-ups, not the cancels, would be most of its
  /// cost. So such a drain stays posted a moment and takes
  /// again, while each take brings something, for at most `longest_stay`,
  /// so a one-thread context's other handlers wait no longer than that.
  void drain() {
    using std::chrono::steady_clock;
    constexpr std::size_t stream_from = 16;
    constexpr std::chrono::microseconds linger{16}, longest_stay{256};
    std::size_t stay_from = stream_from;
    steady_clock::time_point since{};  // when it first stayed
    for (;;) {
      list_ = shard_->take_batch(stay_from, staying_);
      shard_->deliver(list_);
      if (!staying_) return;
      auto now = steady_clock::now();
      if (since == steady_clock::time_point{}) since = now;
      const auto until = now + linger;
      do {
        for (int i = 0; i < 8; ++i) cpu_relax();
        now = steady_clock::now();
      } while (now < until);
      stay_from = now - since < longest_stay ? 1 : 0;
    }
  }

  std::shared_ptr<timer_shard> shard_;
  wait_list list_;
  bool batch_;
  bool claimed_;
  bool started_ = false;
  bool delivering_ = false;  // in operator(): the destructor runs only if a handler threw
  bool staying_ = false;     // drain(): the shard counts on this drain to take again
};

void deliver_last_resort(wait_list& list) noexcept {
  while (!list.empty()) {
    wait_op_base* op = list.pop_front();
    try {
      op->complete();
    } catch (...) {
      // Delivered in a call that cannot report it: the handler's exception is lost.
    }
  }
}

// Where the chunks of the burst this thread fired last end (see
// chunk_cutter): the burst's first wait and the last wait of each full
// chunk, in order. Kept per thread, not per shard: the delivery runs after
// the lock is released, while another thread may collect. A note that
// cannot be kept (out of memory) ends the noting, so that the notes kept
// are always those of the first chunks; the rest are walked.
struct chunk_notes {
  const wait_op_base* first = nullptr;
  std::vector<wait_op_base*> ends;
  bool complete = true;

  void start(const wait_op_base* op) noexcept {
    first = op;
    ends.clear();
    complete = true;
  }
  void note_end(wait_op_base* op) noexcept {
    if (!complete) return;
    try {
      ends.push_back(op);
    } catch (...) {
      complete = false;
    }
  }
};
thread_local chunk_notes chunk_ends;

}  // namespace

// ---- delivery ---------------------------------------------------------------------------

wait_list timer_shard::take_batch() noexcept {
  bool stays = false;
  return take_batch(0, stays);
}

wait_list timer_shard::take_batch(std::size_t stay_from, bool& stays) noexcept {
  after_unlock later(*this);
  wait_list list;
  std::lock_guard lock(mutex_);
  if (parked_ != nullptr) [[unlikely]]
    retry_parked_locked(later);
  list.swap(batch_);
  stays = stay_from != 0 && batch_waits_ >= stay_from;
  drain_posted_ = stays;
  release_locked(std::exchange(batch_waits_, 0), later);
  return list;
}

void timer_shard::leave_drain() noexcept {
  after_unlock later(*this);
  std::lock_guard lock(mutex_);
  drain_posted_ = false;
  if (batch_waits_ != 0) {
    drain_posted_ = true;
    later.post_drain = true;
  }
}

namespace {

/// Brings a list's fired waits and their timers into the cache before they
/// are claimed: each is a miss (the timers lie wherever their owners keep
/// them), and the unlinks would otherwise wait for them one after another.
/// Done before the lock where the caller can: the locked section then finds
/// them in the cache instead of holding the lock through the misses. (A
/// timer another thread moves meanwhile is only a wasted prefetch.)
void prefetch_fired_timers(wait_list& list) noexcept {
  list.for_each([](const wait_op_base& op) {
    if (op.state.load(std::memory_order_relaxed) == wait_state::fired) __builtin_prefetch(op.peek_fired_timer(), 1);
  });
}

}  // namespace

void timer_shard::claim(wait_list& list) noexcept {
  prefetch_fired_timers(list);  // a posted chunk's waits are out of the cache by now
  std::lock_guard lock(mutex_);
  claim_locked(list);
  // Every list post_list() posts is claimed here once: run, destroyed unrun,
  // or handed back.
  posted_unclaimed_.fetch_sub(1, std::memory_order_relaxed);
}

void timer_shard::claim_locked(wait_list& list) noexcept {
  list.for_each([this](wait_op_base& op) {
    // Unlinked from its timer here, not when it fired: until now cancel()
    // could still make it an abort.
    unlink_locked(op);
    op.state.store(wait_state::finished, std::memory_order_relaxed);
  });
}

void timer_shard::discard(wait_list& list) noexcept {
  while (!list.empty()) {
    wait_op_base* op = list.pop_front();
    op->state.store(wait_state::finished, std::memory_order_relaxed);
    op->discard();
  }
}

void timer_shard::deliver(wait_list& list) {
  while (!list.empty()) {
    if (list.front()->is_chunk()) {
      // Its records one by one: when a handler throws, the chunk stays
      // first in the list with the rest.
      auto* chunk = static_cast<inline_abort_chunk*>(list.front());
      if (chunk->remaining() > 1) {
        chunk->complete_next();
      } else {
        list.pop_front();
        chunk->complete_last([this](inline_abort_chunk* c) { give_chunk(c); });
      }
      continue;
    }
    wait_op_base* op = list.pop_front();
    op->state.store(wait_state::finished, std::memory_order_relaxed);
    op->complete();
  }
}

void timer_shard::post_list(wait_list list) noexcept {
  handback_slot back;
  bool threw = false;
  posted_unclaimed_.fetch_add(1, std::memory_order_relaxed);  // before anyone can claim it
  posted_total_.fetch_add(1, std::memory_order_relaxed);
  {
    const posting_scope scope(&back);
    try {
      complete_on(*context_ex_, delivery(shared_from_this(), std::move(list), false), false);
    } catch (...) {
      threw = true;
    }
  }
  if (back.list.empty()) return;  // posted
  claim(back.list);
  if (!threw) return discard(back.list);  // refused unrun (a stopped pool): Asio's rule
  // The post failed: deliver here as a last resort rather than lose them.
  deliver_last_resort(back.list);
}

void timer_shard::post_abort_drain() noexcept {
  handback_slot back;
  bool threw = false;
  {
    const posting_scope scope(&back);
    try {
      complete_on(*context_ex_, delivery(shared_from_this(), {}, true), false);
    } catch (...) {
      threw = true;
    }
  }
  if (!back.batch_dropped && !threw) return;  // posted
  wait_list batch = take_batch();
  if (!threw) return discard(batch);  // refused unrun (a stopped pool): Asio's rule
  // Cancel must not complete inside the call, but the post to do it later
  // failed: the handlers run here, on the cancelling thread, as a last
  // resort rather than being lost.
  deliver_last_resort(batch);
}

namespace {

/// Finds the timers of waits firing in one locked section. A wait's timer is
/// at the end of its timer's list: one step for the usual timer with one
/// wait, K steps for the first of K waits on one timer. Those come out of
/// the index in their list's order (equal deadlines, in start order), so a
/// wait that follows one fired just before has that one's timer: remembered
/// for a few timers at once, in case their waits interleave.
class fired_timer_finder {
 public:
  timer_impl* operator()(const wait_op_base& op) noexcept {
    if (op.next_wait() == nullptr) return op.timer();  // one step, or no timer
    for (std::size_t i = 0; i < ways; ++i) {
      if (before_[i] != nullptr && before_[i]->next_wait() == &op) {
        before_[i] = &op;
        return timer_[i];
      }
    }
    timer_impl* const t = op.timer();
    note(op, t);
    return t;
  }
  /// @p op, fired from @p t: a wait after it is found from it.
  void note(const wait_op_base& op, timer_impl* t) noexcept {
    before_[next_] = &op;
    timer_[next_] = t;
    next_ = (next_ + 1) % ways;
  }

 private:
  static constexpr std::size_t ways = 4;
  // Fired this section and still linked: their next_wait() is safe to read.
  const wait_op_base* before_[ways] = {};
  timer_impl* timer_[ways] = {};
  std::size_t next_ = 0;
};

}  // namespace

void timer_shard::collect_due_locked(wait_list& out, after_unlock& later) noexcept {
  drain_inbox_locked(later);
  if (parked_ != nullptr) [[unlikely]]
    retry_parked_locked(later);
  // The time source, read once per collect: null is the real clock.
  const time_point now = manual_ == nullptr ? clock::now() : manual_->now();
  fired_timer_finder find_timer;
  chunk_ends.start(nullptr);
  while (index_node* n = index_.pop_due(now)) {
    // Its lateness, from the clock read above: no read per wait. A wait
    // cancelled from here until its delivery claims it stays counted (see
    // cancelled_fired_). Saturating: a deadline may be time_point::min().
    lateness_.record_exclusive(saturating_difference(now, n->deadline()));
    auto& node = static_cast<wait_node&>(*n);
    wait_op_base* fired;
    if (node.is_inline()) {
      // Out of the timer, into a block at the front of its list, before it
      // is handed to anyone: its timer may be moved or destroyed once the
      // lock is released.
      auto& t = static_cast<timer_impl&>(node);
      fired = evacuate_inline_locked(t, true);
      if (fired == nullptr) {
        park_locked(t, timer_impl::parked_as::fired, later);
        continue;
      }
      find_timer.note(*fired, &t);
      fired->set_fired_timer(&t);
    } else {
      fired = &static_cast<wait_op_base&>(node);
      fired->set_fired_timer(find_timer(*fired));
    }
    wait_op_base& op = *fired;
    op.state.store(wait_state::fired, std::memory_order_relaxed);  // still linked: cancellable
    out.push_back(&op);
    if (out.size() == 1) chunk_ends.start(&op);
    if (out.size() % share_grain == 0) chunk_ends.note_end(&op);
  }
}

namespace {

/// Cuts a burst that collect_due_locked() fired into chunks of share_grain
/// where it noted their ends (on this thread, with no handler run since),
/// not by walking the list again: by now the waits of a large burst are out
/// of the cache, one miss each. A burst the notes are not about (its first
/// wait is not theirs) is walked. The cutter takes the notes over, so that
/// a collect on this thread while it posts (an executor that runs what is
/// posted to it at once) cannot change them under it.
class chunk_cutter {
 public:
  explicit chunk_cutter(wait_list& burst) noexcept : burst_(burst) {
    if (!burst.empty() && chunk_ends.first == burst.front()) ends_.swap(chunk_ends.ends);
    chunk_ends.start(nullptr);
  }
  chunk_cutter(const chunk_cutter&) = delete;
  chunk_cutter& operator=(const chunk_cutter&) = delete;
  ~chunk_cutter() {
    // The buffer goes back for the next burst (the larger one, if a nested
    // collect grew one meanwhile): no allocation per burst.
    ends_.clear();
    if (ends_.capacity() > chunk_ends.ends.capacity()) ends_.swap(chunk_ends.ends);
  }

  wait_list next() noexcept {
    if (used_ < ends_.size()) return burst_.split_through(ends_[used_++], share_grain);
    return burst_.take_front(share_grain);
  }

 private:
  wait_list& burst_;
  std::vector<wait_op_base*> ends_;
  std::size_t used_ = 0;
};

}  // namespace

void timer_shard::deliver_fired(wait_list fired, bool on_context_thread) {
  const std::size_t n = fired.size();
  wait_list here;
  {
    chunk_cutter cut(fired);
    if (on_context_thread) here = cut.next();
    while (!fired.empty()) post_list(cut.next());
  }
  prefetch_fired_timers(here);
  {
    after_unlock later(*this);
    {
      std::lock_guard lock(mutex_);
      claim_locked(here);
      release_locked(n, later);
      // Armed only now, after the chunks above were posted: a wake-up posted
      // for waits due meanwhile queues behind them, so a one-thread context
      // completes every wait in deadline order.
      --rearm_pending_;
      rewake_locked(later, true);
    }
    later.run_best_effort();
  }  // the context's work is released here, while in_flight_ still holds shutdown() off
  {
    std::lock_guard lock(mutex_);
    if (--in_flight_ == 0 && shutting_down_) deliveries_done_.notify_all();
  }
  if (here.empty()) return;
  // A handler that throws propagates out of run() as Asio documents; the
  // delivery object posts the rest of the chunk before it goes. Claimed
  // above: claim() is for posted lists.
  delivery d(shared_from_this(), std::move(here), false, true);
  d();
}

void timer_shard::settle_here_locked(wait_list& fired, after_unlock& later) noexcept {
  // Few enough to deliver them all on this thread: claim them, let them go
  // and re-arm in the caller's one locked section (deliver_fired's order
  // holds: nothing is posted before the re-arm). At a wake-up every few
  // microseconds, the locks per wake-up are what the submitting threads
  // wait for.
  prefetch_fired_timers(fired);
  claim_locked(fired);
  release_locked(fired.size(), later);
  rewake_locked(later, true);
}

void timer_shard::deliver_settled(wait_list fired) {
  delivery d(shared_from_this(), std::move(fired), false, true);
  d();
}

}  // namespace chronopool::detail

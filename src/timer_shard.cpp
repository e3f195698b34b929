// A timer service's waits under one lock; see detail/timer_shard.hpp.
#include <chronopool/detail/timer_shard.hpp>

#include <chronopool/detail/cpu_relax.hpp>
#include <chronopool/detail/inline_abort_chunk.hpp>
#include <chronopool/detail/kernel_timer_cost.hpp>
#include <chronopool/detail/pool_core.hpp>
#include <chronopool/detail/task_base.hpp>
#include <chronopool/run_state.hpp>

#include <boost/asio/defer.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace chronopool::detail {

namespace {

// Fired waits per function when a burst is shared with the context's other
// threads (Asio's reactor shares expired timers through its scheduler queue
// the same way): the thread that found them runs the first chunk, the rest
// are posted in order.
constexpr std::size_t share_grain = 16;

// Waits the inbox may gather before a starting thread tries the lock to
// drain it: bounds the drain a locked section inherits. Every locked section
// drains before it reads the index, so a poll or wake-up due to fire waits
// first drains whatever a busy submitter has pushed, and a submitter that
// drains holds the lock that long: with 64, at a few hundred ns a wait (each
// one a cache line written on another core), a fire waited ~10-20 us behind a
// drain, and a million timers armed at full speed fired with a p99 of 6-10 ms
// on a 2-vCPU VM (1.5-5.5 ms with 8; the fourteenth round of
// docs/performance.md).
constexpr std::uint32_t inbox_drain_batch = 8;

// Waits the inbox may hold while its lock is busy before a starting thread
// stops pushing and yields until it can drain them itself.
constexpr std::uint32_t inbox_high_water = 256;

// How long past the time a shard left to the poll may go before a thread
// that re-arms the shard (a submitter's drain) posts a collect for it. The
// poll serves a passed gate within a turn (microseconds); when it has not
// for this long, the thread running it is not getting to it, and on a
// machine with fewer cores than busy threads the context's other threads
// sleep meanwhile, nothing queued for them: the poll is one function, held
// by the stalled thread. The posted collect wakes one of them.
constexpr std::chrono::microseconds poll_stall{200};

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
  /// abort to post (and wake a thread) again for a handful of waits: 40-100
  /// waits a drain in a 1M-timer cancel, and the wake-ups, not the cancels,
  /// were most of its cost. So such a drain stays posted a moment and takes
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

// ---- the drivers -------------------------------------------------------------------

/// The native wake-up of a shard whose context is not driven by a pool.
struct native_wakeup {
  explicit native_wakeup(const boost::asio::any_io_executor& ex) : timer(ex) {}
  boost::asio::steady_timer timer;
};

/// The service's poll (see native_poller.hpp) as a function on the context:
/// one turn, then back behind the context's other work (as a continuation,
/// so it stays on the thread that runs it and wakes no other) until no
/// deadline is near. A turn takes no shard's lock until a gate has passed.
struct native_poll {
  native_poller* poller;
  timer_shard* via;  // queued on its context executor (every shard's is the same)

  void operator()() const {
    bool more = true;
    try {
      more = poller->turn();
    } catch (...) {
      // A handler completed inline threw: the poll goes on behind it, as
      // the rest of a delivery does.
      requeue();
      throw;
    }
    if (more) requeue();
  }

  void requeue() const noexcept {
    try {
      via->repost_poll(*this);
    } catch (...) {
      // Out of memory: stop, so that the next near deadline starts a poll again.
      poller->unclaim();
    }
  }
};

/// Queues @p f on @p ex behind the context's other work, as a continuation:
/// on an io_context, a thread of it keeps it on its own queue and wakes no
/// other.
template <class F>
void defer_on(const boost::asio::any_io_executor& ex, F f) {
  using io_executor = boost::asio::io_context::executor_type;
  if (const auto* io = ex.target<io_executor>()) {
    boost::asio::defer(*io, std::move(f));
  } else {
    boost::asio::defer(ex, std::move(f));
  }
}

/// After use_pool: the last stretch before a deadline, waited for on the
/// context. Posted a hand-off before the deadline, it goes back behind the
/// context's other work (as a continuation, so it stays on the thread that
/// runs it) until the deadline has come, and while fired waits the shard
/// handed on are still queued ahead of it, then collects as a posted
/// collect does; a re-arm (a new generation) makes it stale. It takes no
/// lock until the deadline.
struct held_collect {
  timer_shard* shard;
  std::uint64_t generation;
  time_point at;
  // When it was posted from outside the context, until its first run: how
  // long that took is what the next hand-off leads by.
  std::optional<time_point> posted;

  void operator()() {
    const time_point now = clock::now();
    if (posted) {
      shard->handoff_latency_.observe(saturating_difference(now, *posted));
      posted.reset();
    }
    if (shard->generation_.load(std::memory_order_relaxed) != generation) return;  // re-armed meanwhile
    if (now >= at && shard->on_native_expiry(generation, false, true)) return;
    try {
      defer_on(*shard->context_ex_, *this);
    } catch (...) {
      // Out of memory: collect now (what is due, if anything); the re-arm
      // that follows tries again, or leaves it to the next wait.
      shard->on_native_expiry(generation, false);
    }
  }
};

/// The pool wake-up: an internal one-shot task due at the shard's wake time.
class shard_wakeup final : public task_base {
 public:
  explicit shard_wakeup(std::shared_ptr<timer_shard> shard) noexcept
      : task_base(task_kind::one_shot), shard_(std::move(shard)) {
    set_internal(true);
    // A handler it completes inline that throws goes to the pool's error
    // handler, as the exception of any function the pool runs does.
    set_reports_errors(true);
  }
  /// Set by the shard before it cancels a wake-up it no longer needs.
  std::atomic<bool> superseded{false};

  void discard() noexcept override {
    discarding_ = true;
    cancel(false);
  }

 private:
  void do_invoke() override { shard_->on_wakeup(*this); }
  void release_callable() noexcept override {}
  void destroy() noexcept override { delete this; }
  void on_cancel_before_run() noexcept override {
    if (!superseded.load()) shard_->on_wakeup_cancelled(*this, discarding_);
  }

  std::shared_ptr<timer_shard> shard_;
  bool discarding_ = false;
};

/// What a locked section decides and the caller does once the lock is
/// released: posting, cancelling and submitting run other code (Asio's and
/// the pool's), and releasing work may run a pool's terminated hook.
struct after_unlock {
  explicit after_unlock(timer_shard& s) noexcept : shard(s) {}
  after_unlock(const after_unlock&) = delete;
  after_unlock& operator=(const after_unlock&) = delete;

  // Declared first, so released last: after the posts and submissions that
  // take over the context's work.
  std::optional<boost::asio::any_io_executor> released_work;
  timer_shard& shard;
  bool post_drain = false;
  bool shrink_buffers = false;  // an abort left an index buffer sparse
  task_ptr superseded;  // a wake-up no longer needed
  task_ptr submit;      // a wake-up to queue in the pool
  wait_list dropped;    // waits drained from the inbox in a shutdown: destroyed uncalled
  // A timer's inline wait that a call on the timer took out of the shard
  // when no memory could be had for it: completed with operation_aborted
  // here (or, complete_here_drops, destroyed uncalled) as a last resort.
  timer_impl* complete_here = nullptr;
  bool complete_here_drops = false;
  bool drop_stranded = false;  // inline waits dropped in a shutdown wait in the stranded list

  /// The noexcept part, then the submission, which may throw.
  void run() {
    finish();
    if (submit) {
      const task_ptr w = std::move(submit);
      shard.pool_->submit_internal(w);
    }
  }
  /// run(), and when the wake-up cannot be queued, forget it so that the next
  /// wait arms another (the waits stay queued meanwhile).
  void run_best_effort() noexcept {
    const task_ptr w = submit;
    try {
      run();
    } catch (...) {
      shard.forget_wakeup(w);
    }
  }
  void finish() noexcept {
    if (!dropped.empty()) timer_shard::discard(dropped);
    if (complete_here != nullptr) finish_here();
    if (drop_stranded) {
      drop_stranded = false;
      shard.drop_stranded();
    }
    if (post_drain) {
      post_drain = false;
      shard.post_abort_drain();
    }
    if (superseded) {
      static_cast<shard_wakeup&>(*superseded).superseded.store(true);
      superseded->cancel(false);  // the pool takes it out of its queue
      superseded.reset();
    }
    if (shrink_buffers) {
      shrink_buffers = false;
      shard.shrink_index_buffers();
    }
  }
  void finish_here() noexcept {
    timer_impl& t = *std::exchange(complete_here, nullptr);
    alignas(void*) unsigned char handler[sizeof(void*)];
    const inline_wait_ops* ops = t.inline_ops();
    // Out of the timer first: the handler may end the timer's life.
    ops->relocate(handler, t.inline_storage());
    t.free_inline();
    if (std::exchange(complete_here_drops, false)) return ops->destroy(handler);
    try {
      ops->complete(handler, boost::asio::error::operation_aborted);
    } catch (...) {
      // Completed in a call that cannot report it: the handler's exception is lost.
    }
  }
  // Every path that rewakes leaves a pool wake-up to submit here, unless it
  // ran run() itself to see the error: a wake-up armed but never queued
  // would leave its waits with nobody to fire them.
  ~after_unlock() { run_best_effort(); }
};

// ---- set-up -------------------------------------------------------------------------

timer_shard::timer_shard(timer_service& service, native_poller& poller) : service_(service), poller_(poller) {
  // A timer keeps its home's address in 42 bits of a word (timer_impl).
  if ((timer_impl::word_of(this) & ~timer_impl::shard_mask) != 0) {
    throw std::runtime_error("chronopool: a timer shard's address does not fit a timer's word (over 2^48)");
  }
}

timer_shard::~timer_shard() {
  for (auto* list : {spare_chunks_, returned_chunks_.load(std::memory_order_acquire)}) {
    while (list != nullptr) {
      auto* const next = static_cast<inline_abort_chunk*>(list->link());
      delete list;
      list = next;
    }
  }
}

void timer_shard::set_context_executor(const boost::asio::any_io_executor& ex) {
  std::lock_guard lock(mutex_);
  if (!context_ex_) context_ex_.emplace(ex);
}

void timer_shard::use_pool(std::shared_ptr<pool_core> pool, bool context_is_pool) {
  std::lock_guard lock(mutex_);
  pool_ = std::move(pool);
  context_is_pool_ = context_is_pool;
}

std::uint64_t timer_shard::unlocked_starts() const {
  std::lock_guard lock(mutex_);
  return unlocked_starts_;
}

bool timer_shard::driven_by_pool() const {
  std::lock_guard lock(mutex_);
  return pool_ != nullptr;
}

std::size_t timer_shard::pending() const {
  std::lock_guard lock(mutex_);
  // Waits in the inbox are started too. Only a lock holder takes them out,
  // so walking it under the lock is safe.
  std::size_t n = held_;
  for (const wait_node* p = inbox_.load(std::memory_order_acquire); p != nullptr; p = p->inbox_link()) ++n;
  return n;
}

std::size_t timer_shard::index_bytes() const {
  std::lock_guard lock(mutex_);
  return index_.reserved_bytes();
}

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
    // Counted with a plain load and store, not a locked increment (~6 ns
    // of a ~120 ns start): it is a heuristic. Two pushes at once may count
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
    work_.emplace(boost::asio::prefer(*context_ex_, boost::asio::execution::outstanding_work.tracked));
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
  // A fired wait that its delivery has not claimed yet is delivered by that
  // delivery, now with operation_aborted: it is already in a list.
  if (was != wait_state::queued) return left;
  index_.erase(op);
  if (index_.wants_shrink()) [[unlikely]]
    later.shrink_buffers = true;
  batch_locked(op, later);
  return left;
}

void timer_shard::batch_locked(wait_op_base& op, after_unlock& later) noexcept {
  batch_.push_back(&op);
  joined_batch_locked(later);
}

void timer_shard::joined_batch_locked(after_unlock& later) noexcept {
  ++batch_waits_;
  if (!drain_posted_) {
    drain_posted_ = true;
    later.post_drain = true;
  }
}

// ---- a timer's inline wait leaving the timer ---------------------------------------------

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
  // cycles through a handful; fresh memory cost page faults, most of a
  // cancel on a VM); the rest freed.
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
  if (b == nullptr) return nullptr;  // out of memory: the caller strands it
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
  strand_locked(t, timer_impl::stranded_as::aborted, later);
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
  strand_locked(t, timer_impl::stranded_as::dropped, later);
}

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
  // Sequentially consistent, after the gate's store (see the file comment);
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
  n += s.settle_stranded_of_locked(t, later);
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
  if (inline_queued(t) || s.settle_stranded_of_locked(t, later) != 0) {
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
    // it keeps its place in the index; stranded, its place in that list.
    ops->relocate(to.inline_storage(), from.inline_storage());
    if (from.stranded() != timer_impl::stranded_as::none) {
      timer_impl* prev = nullptr;
      for (timer_impl* p = home.stranded_; p != &from; p = p->next_stranded()) prev = p;
      to.set_next_stranded(from.next_stranded());
      if (prev != nullptr) {
        prev->set_next_stranded(&to);
      } else {
        home.stranded_ = &to;
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

// ---- delivery ---------------------------------------------------------------------------

wait_list timer_shard::take_batch() noexcept {
  bool stays = false;
  return take_batch(0, stays);
}

wait_list timer_shard::take_batch(std::size_t stay_from, bool& stays) noexcept {
  after_unlock later(*this);
  wait_list list;
  std::lock_guard lock(mutex_);
  if (stranded_ != nullptr) [[unlikely]]
    retry_stranded_locked(later);
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
  if (stranded_ != nullptr) [[unlikely]]
    retry_stranded_locked(later);
  const time_point now = clock::now();
  fired_timer_finder find_timer;
  chunk_ends.start(nullptr);
  while (index_node* n = index_.pop_due(now)) {
    auto& node = static_cast<wait_node&>(*n);
    wait_op_base* fired;
    if (node.is_inline()) {
      // Out of the timer, into a block at the front of its list, before it
      // is handed to anyone: its timer may be moved or destroyed once the
      // lock is released.
      auto& t = static_cast<timer_impl&>(node);
      fired = evacuate_inline_locked(t, true);
      if (fired == nullptr) {
        strand_locked(t, timer_impl::stranded_as::fired, later);
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

// ---- waking up ---------------------------------------------------------------------------

void timer_shard::rewake_locked(after_unlock& later, bool best_effort) {
  // Publish, then drain: a wait pushed after the drain's exchange reads the
  // gate published before it (and takes the lock itself when it is due
  // earlier). What the drain brings in may move the wake-up earlier: arm and
  // publish again, and drain again while that changes the gate. Once the
  // gate stands, the last drain came after its publication and nothing is
  // left that relies on an older one. Draining until the inbox stayed empty
  // instead kept the lock holder draining for milliseconds behind a thread
  // arming timers at full speed, which pushes as fast as a drain takes.
  arm_wakeup_locked(later, best_effort);
  publish_gate_locked();
  while (drain_inbox_locked(later)) {
    const std::int64_t published = gate_.load(std::memory_order_relaxed);
    arm_wakeup_locked(later, best_effort);
    publish_gate_locked();
    if (gate_.load(std::memory_order_relaxed) == published) return;
  }
}

void timer_shard::arm_wakeup_locked(after_unlock& later, bool best_effort) {
  if (shutting_down_) return;
  // A delivery that collected is still posting its chunks, and re-arms
  // after them. Arming here (a submitting thread draining the inbox, a
  // cancel) would post a collect or queue a pool task ahead of its chunks,
  // and from a thread outside the context it meant taking the context's
  // queue lock while holding ours: a submitter that slept on that lock was
  // woken onto the io thread's core and held it off for a scheduler slice
  // (milliseconds, the other core idle).
  if (rearm_pending_ != 0) return;
  try {
    const auto wake = index_.wake_time();
    if (pool_) {
      if (!wake) {
        later.superseded = std::move(wakeup_);  // nothing to wait for: let the pool go idle
        return;
      }
      if (wakeup_ && wakeup_at_ <= *wake) return;
      const time_point now = clock::now();
      // After use_pool (while the pool runs), the io_context collects every
      // due wait itself, a hand-off ahead: a wake time within it (or due
      // already) is waited for there, by a held collect; a later one by a
      // pool task that posts that collect when it runs.
      const duration lead = handoff_lead();
      if (lead != duration::zero()) {
        if (saturating_difference(*wake, now) <= lead) {
          if (!armed_ || armed_at_ > *wake) post_held_collect_locked(*wake);
          return;
        }
      } else if (*wake <= now && pool_->state() == run_state::running) {
        // Due already (a zero sleep): a function posted to the context
        // collects it there, one hand-off; a wake-up task would wake a pool
        // thread only to hand the wait on. Once the pool is shut down, its
        // policies decide: the wake-up task goes through the pool as usual.
        if (!armed_) post_collect_locked(*wake);
        return;
      }
      task_ptr w(new shard_wakeup(shared_from_this()));
      w->set_deadline(*wake - lead);  // *wake > now here: no overflow
      if (later.submit) {
        // Armed earlier in this section and never queued (a drain brought an
        // earlier wait): replaced before anyone saw it.
        later.submit.reset();
      } else {
        later.superseded = std::move(wakeup_);
      }
      wakeup_ = w;
      wakeup_at_ = *wake;
      later.submit = std::move(w);
      return;
    }
    if (!wake) {
      // Nothing left to wait for: disarm, so io_context::run() can return.
      if (native_waiting_) native_->timer.cancel();
      native_waiting_ = false;
      armed_ = false;
      generation_.fetch_add(1, std::memory_order_relaxed);  // a posted wake-up on its way finds nothing to do
      return;
    }
    if (armed_ && armed_at_ <= *wake) {
      if (armed_on_poll_) rescue_stalled_poll_locked();
      return;
    }
    arm_native_locked(*wake);
  } catch (...) {
    // Out of memory: the waits stay queued, and the next wait arms again.
    if (!best_effort) throw;
  }
}

void timer_shard::arm_native_locked(time_point t) {
  const time_point now = clock::now();
  // (t < now - cost, not now - t > cost: t may be time_point::min(), an
  // expiry in the distant past, and the difference would overflow.)
  if (t <= now && (!poller_.running() || t < now - near_kernel_timer_cost())) {
    // Due already (a zero sleep, an expiry in the past): a native timer would
    // cost a round trip through the kernel's timer; a posted function is a
    // push onto the context's queue. A native wait still pending goes stale.
    // While the poll runs, it serves a gate just passed on its next turn
    // instead (as below): a posted collect would wake another thread of the
    // context (tens of microseconds on a VM) only to contend with the poll
    // for this shard's lock. A shard behind by more than a wake-up costs
    // (a burst, more waits due than one thread delivers) still posts, and
    // so gets a second thread.
    post_collect_locked(t);
    return;
  }
  if (poller_.covers(t - now)) {
    // Sleeping would cost more than waiting: the arming thread would spend
    // longer in the kernel than the deadline is away, and the wake-up's own
    // latency would come on top. Polling spends at most what arming would
    // (a poll already running: what arming and the wake-up would).
    poll_native_locked(t);
    return;
  }
  // Disarmed until the new wake-up is in place: if it throws, the previous
  // native wait is already cancelled (by expires_at) or stale (generation).
  armed_ = false;
  const std::uint64_t generation = generation_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!native_) native_ = std::make_unique<native_wakeup>(*context_ex_);
  // With a poll window, wake a window early (the expiry finds nothing due
  // and re-arms, which then polls): the kernel's wake-up latency is spent
  // before the deadline instead of after it.
  const time_point fire_at = t - poller_.window();
  native_->timer.expires_at(fire_at);  // cancels the previous native wait, if any
  native_->timer.async_wait([this, generation](const boost::system::error_code& ec) {
    // An aborted native wait (re-armed, or the shard going) touches nothing.
    if (ec != boost::asio::error::operation_aborted) on_native_expiry(generation, true);
  });
  native_waiting_ = true;
  mark_armed_locked(t, false);
}

void timer_shard::poll_native_locked(time_point t) {
  armed_ = false;  // until the poll is sure to come (queuing it may throw)
  generation_.fetch_add(1, std::memory_order_relaxed);  // a native wait pending goes stale
  // The gate before the claim (publish_gate_locked() stores the same value
  // after us): a poll that is stopping sees it, or we see it stopped.
  gate_.store(t.time_since_epoch().count(), std::memory_order_seq_cst);
  if (poller_.claim()) {
    try {
      repost_poll(native_poll{&poller_, this});  // never runs here: only queued
    } catch (...) {
      poller_.unclaim();
      publish_gate_locked();  // back to what is armed (nothing)
      throw;
    }
  }
  mark_armed_locked(t, true);
}

void timer_shard::rescue_stalled_poll_locked() {
  if (armed_at_ == rescued_at_) return;  // one collect per passed gate
  if (armed_at_ >= clock::now() - poll_stall) return;
  rescued_at_ = armed_at_;
  // The poll, once it runs again, serves the shard too (the gate stays
  // where it is): the collects take the lock in turn.
  post_collect_locked(armed_at_);
}

void timer_shard::repost_poll(const native_poll& p) { defer_on(*context_ex_, p); }

void timer_shard::post_collect_locked(time_point t) {
  armed_ = false;  // until the post is in place (it may throw)
  const std::uint64_t generation = generation_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Posted, never run here: we hold the lock.
  complete_on(*context_ex_, [this, generation] { on_native_expiry(generation, false); }, false);
  mark_armed_locked(t, false);
}

duration timer_shard::handoff_lead() const noexcept {
  // Once the pool is shut down its policies decide: its tasks, as in pool mode.
  if (!pool_ || context_is_pool_ || pool_->state() != run_state::running) return duration::zero();
  return std::max(handoff_latency_.get(), duration(1));
}

void timer_shard::post_held_collect_locked(time_point t) {
  armed_ = false;  // until the post is in place (it may throw)
  const std::uint64_t generation = generation_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Never run here (we hold the lock). From one of the context's own
  // threads (a held collect re-arming for the next deadline), a
  // continuation: it stays on this thread and wakes no other, and there is
  // no hand-off to measure.
  using io_executor = boost::asio::io_context::executor_type;
  held_collect h{this, generation, t, std::nullopt};
  if (const auto* io = context_ex_->target<io_executor>(); io != nullptr && io->running_in_this_thread()) {
    defer_on(*context_ex_, std::move(h));
  } else {
    h.posted = clock::now();
    complete_on(*context_ex_, std::move(h), false);
  }
  mark_armed_locked(t, false);
}

bool timer_shard::on_native_expiry(std::uint64_t generation, bool native, bool after_handed_on) {
  wait_list fired;
  bool here_only = false;
  {
    after_unlock later(*this);
    std::lock_guard lock(mutex_);
    if (generation != generation_.load(std::memory_order_relaxed) || shutting_down_) return true;
    // A collector counts its delivery in in_flight_ in the section that
    // collects, and its posted lists in posted_unclaimed_ before that
    // delivery ends: under the lock, both zero means none is on its way.
    if (after_handed_on && (in_flight_ != 0 || posted_unclaimed_.load(std::memory_order_relaxed) != 0)) return false;
    if (native) {
      native_waiting_ = false;
      // How late the reactor ran us: the poll weighs it before it leaves a
      // deadline to the native timer (native_poller::reach).
      poller_.observe_wakeup(saturating_difference(clock::now(), native_->timer.expiry()));
    }
    armed_ = false;
    collect_due_locked(fired, later);
    if (fired.empty()) {
      rewake_locked(later, true);  // early (a far bucket came near): wait on
    } else if (fired.size() <= share_grain) {
      settle_here_locked(fired, later);
      here_only = true;
    } else {
      ++in_flight_;  // deliver_fired re-arms
      ++rearm_pending_;
    }
  }
  if (here_only) {
    deliver_settled(std::move(fired));
  } else if (!fired.empty()) {
    deliver_fired(std::move(fired), true);
  }
  return true;
}

void timer_shard::serve_due() {
  if (const std::size_t unclaimed = posted_unclaimed_.load(std::memory_order_relaxed); unclaimed != 0) {
    const std::uint64_t posted = posted_total_.load(std::memory_order_relaxed);
    if (posted != held_back_posted_ || unclaimed != held_back_unclaimed_) {
      // Something was posted or claimed since the last turn looked: the
      // lists may be queued ahead of this turn's successor. Hold back.
      held_back_posted_ = posted;
      held_back_unclaimed_ = unclaimed;
      return;
    }
    // A whole turn of the context's queue went by and not one of them was
    // posted or claimed: on a one-thread context they ran before this turn,
    // so another thread has taken them and is not getting to its claim (on
    // a 2-core machine, descheduled while this poll spun for milliseconds).
    // Waits on different threads are not ordered: serve.
  }
  held_back_unclaimed_ = 0;  // so that the next hold-back records afresh
  on_native_expiry(generation_.load(std::memory_order_relaxed), false);
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

void timer_shard::on_wakeup(shard_wakeup& w) {
  wait_list fired;
  bool here_only = false;
  task_ptr self;  // released after the lock: it may be the last reference but ours
  {
    after_unlock later(*this);
    {
      std::lock_guard lock(mutex_);
      if (wakeup_.get() != &w || shutting_down_) return;  // superseded meanwhile
      self = std::move(wakeup_);
      if (handoff_lead() != duration::zero()) {
        // After use_pool, the io_context collects (see arm_wakeup_locked):
        // with two collecting threads, the pool's posted waits and the
        // context's own would race, and a one-thread context would no
        // longer complete in expiry order. The re-arm posts a held collect.
        rewake_locked(later, true);
        return;  // after `later` ran, with the lock released
      }
      collect_due_locked(fired, later);
      if (fired.empty()) {
        rewake_locked(later, true);
      } else if (context_is_pool_ && fired.size() <= share_grain) {
        settle_here_locked(fired, later);  // a worker of the context: all delivered here
        here_only = true;
      } else {
        ++in_flight_;  // deliver_fired re-arms
        ++rearm_pending_;
      }
    }
    later.run_best_effort();
  }
  if (here_only) {
    deliver_settled(std::move(fired));
  } else if (!fired.empty()) {
    deliver_fired(std::move(fired), context_is_pool_);
  }
}

void timer_shard::on_wakeup_cancelled(shard_wakeup& w, bool discard_waits) noexcept {
  wait_list dropped;
  task_ptr self;
  {
    after_unlock later(*this);
    std::lock_guard lock(mutex_);
    if (wakeup_.get() != &w || shutting_down_) return;
    self = std::move(wakeup_);
    publish_gate_locked();  // closed (unless a posted collect is on its way)
    drain_inbox_locked(later);  // what came before the gate closed goes too
    if (discard_waits) {
      // The pool is being destroyed: its waits go with it, uncalled.
      take_all_locked(dropped, later);
    } else {
      // A shutdown policy or shutdown_now(): every wait gets operation_aborted.
      // Waits of one timer come out in their list's order: each is then the
      // first of the timer the one before was aborted from.
      timer_impl* run = nullptr;
      while (index_node* n = index_.pop_first()) {
        auto& node = static_cast<wait_node&>(*n);
        if (node.is_inline()) {
          auto& t = static_cast<timer_impl&>(node);
          abort_inline_locked(t, later, true, false);
          run = t.first.load(std::memory_order_relaxed) != nullptr ? &t : nullptr;
          continue;
        }
        auto& op = static_cast<wait_op_base&>(node);
        const bool same_timer = run != nullptr && run->first.load(std::memory_order_relaxed) == &op;
        run = abort_locked(op, later, same_timer ? run : nullptr);
      }
    }
  }
  discard(dropped);
}

void timer_shard::take_all_locked(wait_list& out, after_unlock& later) noexcept {
  drain_inbox_locked(later);
  std::size_t n = 0;
  index_.clear([&](index_node& in) {
    auto& node = static_cast<wait_node&>(in);
    timer_impl* t = nullptr;
    if (node.is_inline()) {
      t = &static_cast<timer_impl&>(node);
      drop_inline_locked(*t, out, later);  // out of its timer
    } else {
      auto& op = static_cast<wait_op_base&>(node);
      t = op.timer();
      out.push_back(&op);
    }
    ++n;
    // Every queued wait goes, so every timer's list empties. Its fired
    // waits still linked (in delivery lists) are detached too: their
    // deliveries must not look for a timer that may be gone by then.
    if (t != nullptr) {
      for (wait_op_base* w = t->first.load(std::memory_order_relaxed); w != nullptr;) {
        wait_op_base* const after = w->next_wait();
        w->clear_timer();
        w = after;
      }
      t->last = nullptr;
      t->first.store(nullptr, std::memory_order_release);
    }
  });
  while (!batch_.empty()) out.push_back(batch_.pop_front());
  n += std::exchange(batch_waits_, 0);
  // Stranded inline waits go too (fired or aborted ones were still held).
  for (timer_impl* t = stranded_; t != nullptr; t = t->next_stranded()) {
    if (t->stranded() == timer_impl::stranded_as::dropped) continue;
    t->set_stranded(timer_impl::stranded_as::dropped);
    ++n;
    later.drop_stranded = true;
  }
  drain_posted_ = false;
  release_locked(n, later);
}

void timer_shard::shutdown() noexcept {
  wait_list dropped;
  std::unique_ptr<native_wakeup> native;
  {
    after_unlock later(*this);
    std::unique_lock lock(mutex_);
    shutting_down_ = true;  // from here on no wait starts and none is delivered here
    publish_gate_locked();  // closed: a wait pushed before drops with the rest
    // Deliveries under way on other threads (a pool thread handing fired
    // waits to this context) touch the context: it must outlive them.
    deliveries_done_.wait(lock, [&] { return in_flight_ == 0; });
    take_all_locked(dropped, later);
    later.superseded = std::move(wakeup_);
    native = std::move(native_);
    native_waiting_ = false;
    armed_ = false;
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  discard(dropped);  // Asio's rule: pending handlers are destroyed uncalled
  native.reset();
}

void wait_cancellation::operator()(boost::asio::cancellation_type_t type) {
  using ct = boost::asio::cancellation_type;
  if ((type & (ct::terminal | ct::partial | ct::total)) == ct::none) return;
  wait_state s = op->state.load();
  if (s == wait_state::starting) {
    // Not queued yet: start() sees the request, or we see it queued now.
    op->cancel_requested.store(true);
    s = op->state.load();
  }
  // Neither in the inbox, nor queued, nor fired and unclaimed: delivered or
  // dropped already, and the shard may be gone.
  if (s != wait_state::unlocked && s != wait_state::queued && s != wait_state::fired) return;
  shard.load()->cancel_wait(*op);
}

}  // namespace chronopool::detail

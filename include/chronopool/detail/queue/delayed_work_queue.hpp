// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// An unbounded blocking priority queue of tasks ordered by (deadline,
// sequence): Java's DelayedWorkQueue. Delayed tasks wait in a
// deadline_index, work due at once in a FIFO ready lane, posted functions
// in a FIFO function lane (pushed without the lock while the queue is
// open). Takers wait leader/follower, so N idle takers arm one kernel
// timer. The queue holds one reference to each queued task; it never
// refuses an offer for capacity (bounds are its owner's).
#pragma once

#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/queue/due_segment.hpp>
#include <chronopool/detail/pool/queued_function.hpp>
#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/detail/wakeup/wakeup_latency.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

namespace chronopool::detail {

class delayed_work_queue {
 public:
  /// How takers behave when nothing is due.
  enum class mode : std::uint8_t {
    open,      ///< wait for work
    draining,  ///< return once the queue is empty (a pool after shutdown())
    closed,    ///< return at once (a pool after shutdown_now())
  };

  /// What a wait returned: a task, a posted function, or why neither.
  enum class wait_status : std::uint8_t { task, function, timeout, interrupted, closed };

  struct wait_result {
    task_ptr task;
    wait_status status;
    queued_function* function = nullptr;  // with wait_status::function; the caller runs or destroys it
  };

  /// @p near_window_log2 (1 to 62) sets the deadline index's near window to
  /// 2^near_window_log2 ns; tests use small windows to move tasks between
  /// tier and heap often.
  explicit delayed_work_queue(unsigned near_window_log2 = deadline_index::default_near_window_log2);
  delayed_work_queue(const delayed_work_queue&) = delete;
  delayed_work_queue& operator=(const delayed_work_queue&) = delete;
  /// Releases the references of tasks still queued (without cancelling them).
  ~delayed_work_queue();

  /// Reads the time from @p m from now on (a pool on a manual clock):
  /// takers never spin and sleep without a timeout, woken by time_moved()
  /// and by new work. Before anything is queued; precision mode stays off.
  void use_manual_time(const manual_time* m) noexcept;
  /// The manual time moved: every taker looks again (see use_manual_time).
  void time_moved() noexcept;
  /// On a manual clock: the count of threads that take from this queue (the
  /// pool's threads in their work loop), which wait_takers_idle() and
  /// auto-advance compare the idle takers with. Before any taker waits.
  void watch_takers(const std::atomic<std::size_t>* takers) noexcept;
  /// Auto-advance on a manual clock (@p time non-null; null turns it off):
  /// the taker that goes idle last, with every taker idle and nothing due,
  /// moves @p time to the earliest deadline queued and looks again, instead
  /// of sleeping (see docs/design.md, "Testable time"). Turning it on wakes
  /// the takers, so a pool idle already jumps at once.
  void set_auto_advance(manual_time* time) noexcept;
  /// Blocks until every taker (watch_takers) waits for work: none is running
  /// anything or on its way back. On a manual clock only: a taker going
  /// idle there notifies, and so does taker_left().
  void wait_takers_idle();
  /// A taker left the work loop for good (its count was lowered first):
  /// wakes wait_takers_idle(), for which it is no longer awaited.
  void taker_left() noexcept;
  /// Times auto-advance moved the time (testing aid).
  std::uint64_t auto_advances() const;
  /// The time the queue runs on: steady_clock::now(), or the manual time.
  time_point now() const noexcept {
    if (manual_ == nullptr) [[likely]]
      return clock::now();
    return manual_->now();
  }

  /// Precision mode with a spin window of at most @p limit (zero: off).
  /// Before any taker waits.
  void set_precision_spin_limit(std::chrono::nanoseconds limit) noexcept;
  /// Outside precision mode the leader waits for the latest deadline at
  /// most @p slack after the head's, so that one wake-up serves them all
  /// (deadline_index::wake_time). Zero: exact. Before any taker waits.
  void set_wake_slack(std::chrono::nanoseconds slack) noexcept;
  /// Testing aid: the leader spins instead of sleeping for a head nearer
  /// than @p d (default: near_kernel_timer_cost()). Before any taker waits.
  void set_near_spin(std::chrono::nanoseconds d) noexcept;
  /// How late the leader's timed sleeps have been woken (a moving average;
  /// zero until one timed out). Without a slack, the leader spins for a
  /// head nearer than the near spin plus this; with one, only for a head
  /// nearer than the near spin (the slack allows the wake-up's latency).
  duration wakeup_latency() const noexcept { return wake_latency_.get(); }
  /// Testing aid: counts as one timed sleep woken @p late.
  void observe_wakeup(duration late) noexcept { wake_latency_.observe(late); }
  /// Whether the leader spins, rather than sleeps, for a head @p ahead.
  bool spins_for(duration ahead) const noexcept;
  /// How long a task a taker took ran (the pool reports each). The leader
  /// keeps its role across a task only while tasks run short (see "Keeping
  /// the role" in docs/design.md). Lock-free.
  void observe_run(duration ran) noexcept {
    const std::int64_t before = run_estimate_.load(std::memory_order_relaxed);
    // A decaying maximum: one long task raises it at once; it falls by an
    // eighth with each shorter one.
    const std::int64_t after = std::max(ran.count(), before - before / 8);
    if (after != before) run_estimate_.store(after, std::memory_order_relaxed);
  }

  /// Inserts @p t at its deadline. A task already cancelled is not inserted
  /// (returns false): re-arming a periodic task races with cancel(), and this
  /// check under the queue's lock is what settles the race.
  bool offer(task_ptr t);
  /// offer() that also tells whether the time a taker must wake up at moved
  /// earlier (see wake_deadline(); a timer service re-arms its wake-up only
  /// then).
  bool offer(task_ptr t, bool& new_head);

  /// Appends @p t, whose deadline is the moment it was submitted (now), to
  /// the ready lane. False when it was cancelled already (see offer()).
  bool offer_now(task_ptr t);

  /// Appends @p f to the function lane; false (nothing queued) once the queue
  /// is closed. O(1), no allocation; while the queue is open, lock-free
  /// unless a taker must be woken.
  bool offer_function(queued_function* f) noexcept;
  /// Takes @p f back out if it is still queued (its submitter could not get
  /// a thread to run it). O(n).
  bool withdraw_function(queued_function* f) noexcept;
  /// Takes every queued function out, oldest first.
  function_list drain_functions() noexcept;

  enum class offer_status : std::uint8_t { queued, cancelled, full };
  /// offer(), refused with `full` when @p max_size tasks are already queued.
  /// The check and the insertion happen under one lock, so the bound is exact.
  offer_status offer_within(task_ptr t, std::size_t max_size);
  /// offer_within() for a task submitted for the first time (nobody else
  /// holds it yet, so it is not cancelled): with no bound, and due at or
  /// after the time the sleeping leader wakes at (the gate), it is pushed
  /// onto the inbox without the lock, and the next locked section drains it
  /// into the index ("The task inbox" in docs/design.md).
  offer_status offer_submitted(task_ptr t, std::size_t max_size);

  /// Blocks until the head is due and removes it; null only when the queue
  /// is closed, or draining and empty, or interrupt_waiters() was called.
  task_ptr take() { return wait_for_task(time_point::max()).task; }

  /// The head if it is due now, else null. Never blocks.
  task_ptr poll();
  /// A due task set out by a busy taker (see "The due segment" in
  /// docs/design.md), claimed without the lock; null when none is. The
  /// caller owns the reference and runs it as a task taken.
  task_base* claim_due() noexcept { return segment_.claim(); }

  /// What wait_for_task() would take right now (a due task or a posted
  /// function); never blocks for work: `timeout` when there is nothing.
  /// With @p spin_for_lock, a held lock is waited for by spinning first
  /// (lock_spinning.hpp) rather than by sleeping at once.
  wait_result try_take(bool spin_for_lock = false);

  /// Like take(), but gives up at @p limit.
  template <class Rep, class Period>
  task_ptr poll(std::chrono::duration<Rep, Period> timeout) {
    return wait_for_task(deadline_after(now(), saturating_duration(timeout, "timeout"))).task;
  }

  /// The leader/follower wait itself, with the reason it returned.
  wait_result wait_for_task(time_point limit);

  /// Takes @p t out of the queue if it is queued here. O(log n) in the heap,
  /// O(1) in the ready lane (it leaves an empty slot there).
  bool remove(task_base& t);
  /// remove() that also tells how many tasks are left, without a second lock
  /// for size() (a timer service disarms its wake-up when none are).
  bool remove(task_base& t, std::size_t& left);

  /// Removes every queued task for which @p pred is true; returns them in
  /// (deadline, sequence) order.
  std::vector<task_ptr> remove_if(const std::function<bool(const task_base&)>& pred);

  /// Removes and returns all queued tasks in (deadline, sequence) order.
  std::vector<task_ptr> drain();

  /// Removes the head (due or not) and returns it; null when empty.
  task_ptr pop_head();

  std::size_t size() const;
  /// What a quiescence check needs, read under one lock: how many items
  /// takers have taken so far (try_take(), wait_for_task()), and the
  /// earliest deadline queued (time_point::min() for a posted function;
  /// none when nothing is queued).
  struct activity {
    std::uint64_t taken = 0;
    std::optional<time_point> earliest;
  };
  activity current_activity() const;
  /// Diagnostics: the bytes the index holds in buffers (deadline_index::reserved_bytes).
  std::size_t index_bytes() const;
  bool empty() const { return size() == 0; }
  /// The head's deadline, if any (exact: scans a far-tier bucket when the
  /// heap is empty).
  std::optional<time_point> head_deadline() const;
  /// When a taker must look at the queue again, the ready lane (due at once)
  /// aside: the heap's head, or when it is empty the lower bound of the
  /// earliest far-tier bucket (at most the earliest tier deadline); none
  /// when only "never" tasks (or none) are queued.
  std::optional<time_point> wake_deadline() const;

  /// Advances the mode (open → draining → closed); a request to go back is ignored.
  void set_mode(mode m);
  mode current_mode() const;

  /// Wakes every thread currently waiting; each returns `interrupted` once.
  /// The pool uses it when its size shrinks so idle workers re-check.
  void interrupt_waiters();

  /// Testing aid: checks the heap property and that every task's heap_index
  /// matches its slot. Returns false on the first violation.
  bool check_invariants() const;

  /// Takers sleeping or spinning for want of work now (a manual clock's
  /// driver waits for every pool thread to be one).
  std::size_t idle_takers() const noexcept { return idle_.load(std::memory_order_seq_cst); }

  /// Testing aid: whether a thread currently holds the leader role (and
  /// waits for the head: a leader that kept the role across a task does not).
  bool has_leader() const;
  /// Testing aid: whether the leader kept its role across the task it took
  /// (see "Keeping the role" in docs/design.md).
  bool leader_kept_role() const;
  /// Testing aid: how often a leader kept its role across a task.
  std::uint64_t roles_kept() const;
  /// Testing aid: whether the leader is spinning (precision mode, or a near head).
  bool is_spinning() const;
  /// Testing aid: takers spinning before an untimed sleep (precision mode).
  std::size_t spinning_followers() const;
  /// Testing aid: whether a sleeping leader has opened the gate (see
  /// offer_submitted()).
  bool gate_open() const noexcept { return gate_.load(std::memory_order_seq_cst) != gate_closed; }
  /// Testing aid: tasks moved from the inbox into the index so far.
  std::uint64_t inbox_drained() const;

 private:
  using entry = deadline_index::entry;
  static task_base* task_of(index_node* n) noexcept { return static_cast<task_base*>(n); }

  /// task_base::heap_index of a task in the ready lane: this bit plus its
  /// position counted from the first task ever queued there.
  static constexpr std::size_t ready_tag = deadline_index::owner_tag;
  /// task_base::heap_index of a task in the due segment: these two bits
  /// plus its slot (a ready-lane position never reaches the second bit).
  static constexpr std::size_t segment_tag = ready_tag | (ready_tag >> 1);
  static bool in_segment(std::size_t heap_index) noexcept {
    return heap_index != task_base::not_queued && (heap_index & segment_tag) == segment_tag;
  }

  /// Queues @p t under the lock unless cancelled or @p max_size is reached;
  /// a new head voids the leader and wakes one taker after unlocking.
  offer_status offer_and_wake(task_ptr& t, std::size_t max_size, bool& new_head);
  // Ready-lane primitives; the caller holds mutex_. The lane's front is never
  // an empty slot.
  task_base* pop_ready() noexcept;
  void drop_empty_front() noexcept;
  /// Whether the next task in (deadline, sequence) order is the ready lane's.
  bool ready_first() const noexcept {
    const entry* head = index_.heap_front();
    return !ready_.empty() && (head == nullptr || ready_.front() < *head);
  }
  /// The next task in order if it is due at @p now, removed; else null.
  task_base* take_due(time_point now) noexcept;
  std::size_t count() const noexcept {
    return index_.size() + ready_count_ + functions_.size() + segment_.left();
  }
  /// After a take at @p now, with every taker busy and no function waiting:
  /// sets out up to due_segment::capacity more tasks due at @p now (never on
  /// a manual clock, where tests see one task taken at a time).
  void fill_segment_locked(time_point now) noexcept;
  /// Puts the segment's tasks back into the index (a task queued after the
  /// fill comes before some of them). Strong guarantee: when the index has
  /// no memory, the rest stay set out and std::bad_alloc is thrown.
  void return_segment_locked();
  /// Moves the functions pushed without the lock into the lane, oldest
  /// first. The lock held; const for size(), which counts them too.
  void absorb_posted_locked() const noexcept;
  /// Moves the tasks pushed onto the inbox into the index, oldest first, as
  /// locked offers would: a task that comes before the waiting leader's wake
  /// time voids its role and wakes a taker. Every locked section that looks
  /// at tasks calls it first. Out of memory, the tasks not moved stay in the
  /// inbox, the gate stays closed and the leader looks again within
  /// inbox_retry. The lock held; const for the inspections (a queue is
  /// never a const object).
  void drain_inbox_locked() const noexcept;
  void drain_inbox_locked() noexcept;
  /// The leader's sleep until @p until opens the gate (unless the inbox is
  /// stuck) and drains what was pushed before; false when that drain voided
  /// its role (a task came before @p until): it looks again instead. The
  /// lock held.
  bool open_gate_locked(time_point until, const void* me) noexcept;
  /// Closes the gate and drains, as the leader wakes. The lock held.
  void close_gate_locked() noexcept;
  /// Puts the chain of tasks from @p first (linked by inbox_next) back onto
  /// the inbox, still queued: a drain that could not take them.
  void return_to_inbox(task_base* first) noexcept;
  /// The new-head rule of a locked offer, after tasks were indexed that
  /// moved the wake time from @p wake_before to @p wake_after: a kept role
  /// stays when still covered; else the leader's role is void, and true:
  /// one taker must be woken. The lock held.
  bool new_head_locked(time_point wake_before, time_point wake_after) noexcept;
  /// Indexes @p t (the lock held) as offer_and_wake() does: due tasks set out
  /// before it go back first when it comes before them. May throw
  /// (allocation): then @p t is not indexed.
  void index_locked(task_base* t);
  /// offer_function()'s locked path: the queue was not open around the push.
  bool settle_posted_function(queued_function* f) noexcept;
  /// Whether a taker should take a posted function now rather than look for
  /// a due task: always when no task is queued, else every other time.
  bool function_first() noexcept {
    if (functions_.empty()) return false;
    if (index_.empty() && ready_count_ == 0) return true;
    function_turn_ = !function_turn_;
    return function_turn_;
  }
  /// What try_take() and wait_for_task() take without blocking, the lock held.
  wait_result take_locked();
  /// index_.wake_time() as a comparable value; time_point::max() for none.
  time_point wake_or_never() const noexcept { return index_.wake_time().value_or(time_point::max()); }
  /// Wakes one sleeping taker (notify_one) or all (notify_all), and ends a
  /// precision spin, which no notification reaches. The lock held.
  void wake_one() noexcept;
  void wake_all() noexcept;
  /// wake_one(), the notification after @p lock is released (see
  /// hand_off_and_unlock).
  void wake_one_and_unlock(std::unique_lock<std::mutex>& lock) noexcept;
  /// Sleeps on available_ until @p until (forever for "never"); false on
  /// timeout.
  bool sleep_until(std::unique_lock<std::mutex>& lock, time_point until);
  /// Whether precision mode is on (a spin limit was set). Under mutex_.
  bool precision_mode() const noexcept { return spin_limit_ > duration::zero(); }
  /// The leader's wait for @p until in precision mode: sleep to a window
  /// before it, then spin; returns early when woken.
  void sleep_then_spin(std::unique_lock<std::mutex>& lock, time_point until);
  /// Spins until @p until without the lock; returns early (true) when
  /// whatever would have woken a sleeper happens. @p leader: the leader's
  /// spin (is_spinning()), else a follower's.
  bool spin_until(std::unique_lock<std::mutex>& lock, time_point until, bool leader = true);
  /// Gives back the index buffers that removals left sparse, allocating and
  /// freeing with the lock released (see deadline_index). Not locked.
  void shrink_index_buffers() noexcept;
  /// Passes the leader role on: ends a follower's spin, or releases @p lock
  /// and then wakes a sleeper.
  void hand_off_and_unlock(std::unique_lock<std::mutex>& lock) noexcept;
  /// Whether the leader, having taken a task, may keep its role while it
  /// runs it instead of waking a follower for the next head (wake_or_never()
  /// is @p next): the tasks run short and the next head comes after this
  /// one's expected end. The lock held.
  bool role_may_be_kept_locked(time_point next) const noexcept;
  /// Whether a role kept now is covered: no taker is idle, or the backup
  /// wakes at most backup_grace after @p next, the next head. The lock held.
  bool backup_covers_locked(time_point next) const noexcept;
  /// A follower's sleep: as the backup of a leader that may keep its role
  /// (until backup_grace past the leader's wake-up), or untimed.
  void follower_sleep(std::unique_lock<std::mutex>& lock, time_point limit);
  /// The leader or a follower spins (watching signals_). The lock held.
  bool anyone_spinning() const noexcept { return spinning_ || spinning_followers_ != 0; }
  /// Makes a spinning taker look again (it watches signals_, not the
  /// condition variable). The lock held.
  void signal_spinners() noexcept {
    if (anyone_spinning()) signals_.fetch_add(1, std::memory_order_relaxed);
  }
  /// A taker (counted in idle_) is about to sleep on a manual clock: tells
  /// wait_takers_idle(), and with auto-advance on, when it is the last taker
  /// to go idle and nothing is due, moves the time to the earliest deadline
  /// and returns true (the caller looks again instead of sleeping). The lock held.
  bool manual_going_idle_locked();

  mutable std::mutex mutex_;
  std::condition_variable available_;
  // The manual clock's time, or null (the real clock); set before the
  // first offer, read by every clock reading (a predictable branch).
  const manual_time* manual_ = nullptr;
  // Manual clock only (null otherwise), guarded by mutex_: the takers'
  // count (watch_takers), the time auto-advance moves (null: off), how often
  // it did, and the driver's wait for every taker to be idle.
  const std::atomic<std::size_t>* takers_ = nullptr;
  manual_time* auto_advance_ = nullptr;
  std::uint64_t auto_advances_ = 0;
  std::condition_variable takers_idle_;
  deadline_index index_;
  std::deque<entry> ready_;        // FIFO; a removed task leaves node == nullptr
  due_segment segment_;            // due tasks set out for claiming without the lock
  std::uint64_t taken_ = 0;         // items handed to takers by take_locked(), ever
  std::size_t ready_count_ = 0;    // tasks in ready_ (its size minus empty slots)
  std::size_t ready_popped_ = 0;   // slots ever popped off ready_'s front
  mutable function_list functions_;  // the function lane (absorb_posted_locked fills it from size() too)
  bool function_turn_ = false;
  std::size_t sleeping_ = 0;  // takers waiting on available_
  // Functions pushed without the lock, newest first (linked by
  // queued_function::next); whether posters may push there (the mode is
  // open); takers sleeping or spinning, for posters to see whether to wake
  // one. A taker counts itself in idle_ and then looks at posted_ once more
  // before it sleeps or spins; a poster pushes and then reads idle_ (all
  // sequentially consistent): either the taker sees the function or the
  // poster sees the taker, and takes the lock to wake it, which it can
  // only get once the taker sleeps (or spins, watching signals_).
  mutable std::atomic<queued_function*> posted_{nullptr};
  std::atomic<bool> open_{true};
  std::atomic<std::uint32_t> idle_{0};
  // The task inbox: tasks pushed without the lock by offer_submitted(),
  // newest first (linked by task_base::inbox_next), and how many since the
  // last drain (a heuristic: plain loads and stores). The gate is the time
  // the leader sleeps until, or gate_closed while no leader sleeps timed: a
  // submitter pushes a task due at or after it, then reads it again; the
  // leader publishes it and then drains (all sequentially consistent), so
  // either the drain sees the task or the submitter sees the new gate and
  // drains under the lock itself. Each on a cache line of its own: the
  // submitter writes the inbox for every task, the gate changes once a sleep.
  static constexpr std::int64_t gate_closed = std::numeric_limits<std::int64_t>::max();
  static constexpr std::uint32_t inbox_drain_batch = 32;  // a submitter drains (try_lock) every this many pushes
  static constexpr duration inbox_retry = std::chrono::milliseconds(1);
  alignas(64) std::atomic<task_base*> inbox_{nullptr};
  std::atomic<std::uint32_t> inbox_count_{0};
  alignas(64) std::atomic<std::int64_t> gate_{gate_closed};
  alignas(64) bool inbox_stuck_ = false;  // a drain ran out of memory; guarded by mutex_
  std::uint64_t inbox_drained_ = 0;       // see inbox_drained(); guarded by mutex_
  const void* leader_ = nullptr;  // identity of the leader's wait, &kept_role_, or null
  // leader_ while the leader runs a task it took and keeps the role: no one
  // sleeps for the head, and the backup (or no idle taker) covers it.
  static constexpr char kept_role_ = 0;
  bool leader_waits() const noexcept { return leader_ != nullptr && leader_ != &kept_role_; }
  time_point leader_until_{time_point::max()};  // what the waiting leader sleeps until
  // The one follower that sleeps timed, until backup_at_, so that a leader
  // that kept its role and is held up by its task is stood in for.
  bool backup_sleeping_ = false;
  // Whether the last leader to take a task could have kept its role: only
  // then does a follower sleep as the backup (a timed sleep costs, and with
  // tasks due back to back the role is handed on anyway).
  bool keep_wanted_ = false;
  time_point backup_at_{time_point::max()};
  std::atomic<std::int64_t> run_estimate_{0};  // ns; see observe_run
  std::uint64_t roles_kept_ = 0;
  std::uint64_t interrupt_epoch_ = 0;
  mode mode_ = mode::open;
  // Precision mode (spin_limit_ > 0). The window and the flag are guarded by
  // mutex_; a spinning leader reads signals_ without it.
  duration spin_limit_{0};
  duration spin_window_{0};
  duration wake_slack_{0};  // see set_wake_slack
  duration near_spin_;  // a head nearer than this (plus the wake-up latency) is spun for, in any mode
  wakeup_latency_average wake_latency_;  // of the leader's timed sleeps
  bool spinning_ = false;               // the leader spins
  std::size_t spinning_followers_ = 0;  // takers spinning before an untimed sleep
  std::atomic<std::uint64_t> signals_{0};  // bumped by the wake-ups and hand-offs while anyone spins
  // Precision mode: the head deadline the leader waits for (rep of a
  // time_point; max while no leader waits), read without the lock by
  // spinning followers, which take the head themselves once it is
  // follower_grace past it (the leader held up).
  std::atomic<std::int64_t> leader_head_{std::numeric_limits<std::int64_t>::max()};
};

}  // namespace chronopool::detail

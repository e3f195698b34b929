// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One lock's worth of a timer service: the waits of some of its timers in a
// deadline index, the inbox of waits started without the lock, the batch of
// cancelled waits to be delivered (one function posted per batch, never a
// completion inside the cancelling call), and the wake-up that makes due
// waits fire: a native Asio timer or the service's poll on the context, or
// a task in a scheduled_thread_pool's queue. While the shard holds any wait
// it holds one tracked copy of the context's executor, so run() does not
// return and a shut-down pool does not terminate.
#pragma once

#include <chronopool/detail/sync/adaptive_mutex.hpp>
#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/support/intrusive_list.hpp>
#include <chronopool/detail/timer/native_poller.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/detail/support/histogram_recorder.hpp>
#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/timer/wait_op.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

namespace chronopool {
struct timer_service_stats;
}  // namespace chronopool

namespace chronopool::detail {

namespace testing {
/// When set, a posted delivery calls it on its thread just before it claims
/// its waits: a test stalls a thread there, as the kernel preempting it
/// at that moment would. One relaxed load per delivered chunk otherwise.
inline std::atomic<void (*)()> before_claim{nullptr};
}  // namespace testing

class pool_core;
class timer_service_base;
class inline_abort_chunk;
class shard_wakeup;
struct native_wakeup;
struct native_poll;
struct held_collect;
struct after_unlock;

/// A list of waits in delivery order (linked through wait_op_base::link).
using wait_list = intrusive_list<wait_op_base, wait_op_base::list_link>;

class timer_shard : public std::enable_shared_from_this<timer_shard> {
 public:
  timer_shard(timer_service_base& service, native_poller& poller);
  ~timer_shard();
  timer_shard(const timer_shard&) = delete;
  timer_shard& operator=(const timer_shard&) = delete;

  /// The executor completions are posted to and the native wake-up runs on:
  /// the context's own, or for a context of a kind the service does not
  /// know, the first wait's I/O executor. Before the first wait starts.
  void set_context_executor(const asio_ns::any_io_executor& ex);
  /// Drive this shard's waits by @p pool's threads instead of a native timer.
  void use_pool(std::shared_ptr<pool_core> pool, bool context_is_pool);
  bool driven_by_pool() const;
  /// The service this shard belongs to: a timer object finds its service
  /// through its home shard instead of keeping a pointer of its own.
  timer_service_base& service() const noexcept { return service_; }

  enum class start_result : std::uint8_t {
    started,
    refused,  ///< the context is shutting down: the caller drops the wait uncalled
    moved,    ///< the timer is no longer at home here: start it where it is now
  };
  /// Queues a wait: @p node is a block (wait_op_base), a timer's wait when
  /// @p timer is set (its deadline is then the timer's expiry), or @p
  /// timer's own inline wait, which the caller has claimed and filled (see
  /// timer_impl). With a timer, this must be its home. Throws on allocation
  /// failure, having taken the wait back out: nobody else saw it (an
  /// inline wait's handler is still in the timer).
  start_result start(wait_node& node, timer_impl* timer);

  /// The shard where a new wait of @p t starts: @p preferred (the calling
  /// thread's) when @p t has no pending wait, which moves it there, else
  /// its home.
  static timer_shard& home_for_wait(timer_impl& t, timer_shard& preferred);
  /// Cancels every wait of @p t and, with @p expiry, sets its expiry under
  /// the same lock; returns how many were cancelled. A plain cancel of an
  /// idle timer takes no lock.
  static std::size_t cancel(timer_impl& t, const time_point* expiry);
  /// Cancels @p t's oldest wait; 0 or 1.
  static std::size_t cancel_one(timer_impl& t);
  /// Moves @p from's state (home, expiry, pending waits) into the new @p to;
  /// @p from is left as newly constructed in its home.
  static void move_timer(timer_impl& to, timer_impl& from) noexcept;
  /// Per-operation cancellation of one wait (from its slot).
  void cancel_wait(wait_op_base& op) noexcept;

  /// Waits started and not yet handed to their handlers.
  std::size_t pending() const;
  /// The bytes the index holds in buffers (deadline_index::reserved_bytes).
  std::size_t index_bytes() const;
  /// Waits that started without the lock, counted as they are drained.
  std::uint64_t unlocked_starts() const;
  /// pending(), for a caller holding the lock.
  std::size_t pending_locked() const noexcept;
  /// Adds this shard's waits to @p s: pending, completed and cancelled
  /// counts and the lateness of the waits that fired (read under the lock,
  /// so one shard's figures agree with each other).
  void add_stats(timer_service_stats& s) const;

  // ---- on a manual clock (see detail/time/manual_time.hpp) -------------------
  /// Reads the time from @p m from now on. On an io_context it arms no
  /// wake-up: the manual clock's driver asks for the first deadline and,
  /// once it moved the time there, calls manual_time_moved(). After
  /// use_pool (a pool on a manual clock) the wake-ups stay the pool's
  /// tasks, due on @p m. Before the first wait.
  void use_manual_time(const manual_time* m);
  /// The earliest deadline pending (the inbox drained first); none when
  /// nothing but "never" waits is pending.
  std::optional<time_point> manual_first_deadline();
  /// The manual time moved: posts a collect when a wait is due.
  void manual_time_moved();

  /// The context is being destroyed: drop every wait uncalled (Asio's rule),
  /// wait for deliveries under way on other threads, refuse new waits.
  void shutdown() noexcept;

  // ---- for the service's poll (native mode) ----------------------------------
  /// The time the shard's wake-up is armed for (time_point::max() when none).
  time_point gate() const noexcept { return time_point(duration(gate_.load(std::memory_order_seq_cst))); }
  /// The poll found the gate passed: does what the wake-up would, unless
  /// fired waits this shard posted are still queued. The poll may have been
  /// queued before them (every other wake-up queued before them is a stale
  /// generation by then), and waits due since must not overtake them: a
  /// one-thread context completes in expiry order. Its next turn, queued
  /// behind them, looks again; when that turn finds the same lists still
  /// unclaimed, another thread of the context holds them, and it serves.
  void serve_due();

  // ---- for the pool wake-up task and the delivery functions -----------------
  void on_wakeup(shard_wakeup& w);
  /// The pool cancelled the wake-up (a shutdown policy, shutdown_now()):
  /// abort every wait; or, with @p discard, the pool is being destroyed:
  /// drop them uncalled.
  void on_wakeup_cancelled(shard_wakeup& w, bool discard) noexcept;
  /// Delivers @p list on this thread, a thread of the context. When a
  /// handler throws, the rest is posted again before the exception leaves.
  void deliver(wait_list& list);
  /// Takes the abort batch for delivery.
  wait_list take_batch() noexcept;
  /// Takes the abort batch for a drain that may stay: when it took
  /// @p stay_from waits or more (0: never), the drain stays posted
  /// (@p stays): aborts meanwhile post no drain, and the drain must take
  /// again until a take leaves it, or call leave_drain().
  wait_list take_batch(std::size_t stay_from, bool& stays) noexcept;
  /// A staying drain leaves without a last take (a handler threw): what
  /// came meanwhile gets a drain of its own.
  void leave_drain() noexcept;
  /// Claims a list posted by post_list() for delivery: unlinks fired waits
  /// from their timers (from now on cancel() no longer sees them); a wait
  /// cancelled after it fired stays in the list, aborted. Once per posted list.
  void claim(wait_list& list) noexcept;
  /// Drops @p list's waits uncalled.
  static void discard(wait_list& list) noexcept;
  /// Posts a function that delivers the abort batch (a drain, counted as
  /// posted by the caller); when the post fails, delivers it here.
  void post_abort_drain() noexcept;
  /// Posts @p list to the context for delivery there; when the post fails,
  /// delivers it on this thread as a last resort.
  void post_list(wait_list list) noexcept;

 private:
  friend struct after_unlock;
  friend struct native_wakeup;
  friend struct native_poll;
  friend struct held_collect;

  /// No wait of @p t pending, linked or started without the lock, as seen
  /// by the thread using @p t.
  static bool idle(const timer_impl& t) noexcept;
  /// Locks @p t's home shard (it may move until then) into @p lock.
  static timer_shard& lock_home(timer_impl& t, std::unique_lock<adaptive_mutex>& lock);

  /// start() without the lock; false when the wait does not qualify and
  /// must start under the lock. A wait due at or after the time the shard
  /// is armed for (the gate) is pushed onto the inbox, a lock-free stack;
  /// whoever locks the shard next drains the inbox into the index before it
  /// looks at waits, and the armed wake-up, due no later, drains it at the
  /// latest. The shard publishes the gate after every change and drains
  /// after publishing; the starting thread pushes, then reads the gate
  /// again (both sides sequentially consistent): either that drain sees the
  /// wait or the thread sees the new gate and takes the lock itself. Every
  /// 8th push tries the lock and drains, so no locked section inherits a
  /// long drain; past 256 waits with the lock busy the thread yields until
  /// it can drain. Until the wait is linked, the timer's start_pending bit
  /// stands for it (see timer_impl).
  bool try_start_unlocked(wait_node& op, timer_impl* timer) noexcept;
  /// Takes the inbox in and re-arms under @p lock (held), then runs what
  /// that leaves for after the unlock: the unlocked start's way of seeing to
  /// the shard.
  void drain_and_rewake(std::unique_lock<adaptive_mutex> lock) noexcept;
  /// An unlocked start found the inbox past its high water and the lock
  /// busy: yields the CPU (to the lock's holder, if it was preempted on
  /// this core) until it can drain, or someone else has.
  void yield_until_drained() noexcept;
  /// Moves the waits started without the lock into the index (in a shutdown,
  /// into @p later's list of waits dropped uncalled); whether there were any.
  bool drain_inbox_locked(after_unlock& later) noexcept;
  /// drain_inbox_locked() for a timer's inline wait.
  void drain_inline_locked(timer_impl& t, after_unlock& later) noexcept;
  /// Publishes the time from which a wait may start without the lock: the
  /// armed wake-up's, or none.
  void publish_gate_locked() noexcept;
  /// Takes @p op out of the index and its timer's list and makes it aborted
  /// (it joins the abort batch). @p timer: its timer, when the caller knows
  /// it. Returns what unlink_locked() returns.
  timer_impl* abort_locked(wait_op_base& op, after_unlock& later, timer_impl* timer = nullptr) noexcept;
  /// The chunk at the end of @p list with room for one more record of a
  /// handler of @p ops, or a spare or new one appended to it; null when
  /// none can be had.
  inline_abort_chunk* chunk_at_end_locked(wait_list& list, const inline_wait_ops* ops) noexcept;
  /// Takes back a delivered chunk (any thread, no lock).
  void give_chunk(inline_abort_chunk* c) noexcept;
  /// Queues aborted @p op (a block) in the abort batch. (Inline, as is the
  /// next: in timer_shard_internal.hpp, for every file that aborts waits.)
  inline void batch_locked(wait_op_base& op, after_unlock& later) noexcept;
  /// One more wait in the abort batch (a block, or a chunk's record): it
  /// counts for take_batch(), and a drain is posted unless one is on its way.
  inline void joined_batch_locked(after_unlock& later) noexcept;

  // ---- a timer's inline wait leaving the timer (see timer_impl) ----------------
  // Wherever it leaves the index it leaves the timer too, under the same
  // lock: into a block of its own, or (aborted, dropped) a record of a
  // chunk. When no memory can be had, a call on the timer completes it on
  // its own thread once unlocked (the call keeps the timer alive); anywhere
  // else it is parked: it stays in the timer, in the shard's parked
  // list, until a later abort drain or collect moves it out (or the timer's
  // next call, or a shutdown). Never lost, never completed twice.

  /// @p t's inline wait, out of the index, in a block of its own: linked at
  /// the front of @p t's list when @p linked (it fired, and stays
  /// cancellable until claimed), else linked nowhere. Frees the inline
  /// wait; null (nothing changed) when no block can be had.
  wait_op_base* evacuate_inline_locked(timer_impl& t, bool linked) noexcept;
  /// @p t's inline wait, out of the index, into the abort batch (@p
  /// aborted), or as a claimed fired wait, which the abort drain completes
  /// with success; false (nothing changed) when no memory can be had.
  bool batch_inline_locked(timer_impl& t, bool aborted, after_unlock& later) noexcept;
  /// Aborts @p t's inline wait, queued in the index (or, @p popped, just
  /// taken out of it). @p pinned: called by a call on @p t.
  void abort_inline_locked(timer_impl& t, after_unlock& later, bool popped, bool pinned) noexcept;
  /// Drops @p t's inline wait (a shutdown) into @p into, destroyed uncalled.
  void drop_inline_locked(timer_impl& t, wait_list& into, after_unlock& later) noexcept;
  void park_locked(timer_impl& t, timer_impl::parked_as as, after_unlock& later) noexcept;
  void unlink_parked_locked(timer_impl* prev, timer_impl& t) noexcept;
  /// Takes @p t out of the parked list; false when it is not in it.
  bool unpark_locked(timer_impl& t) noexcept;
  /// Moves what it can of the parked list out of the timers.
  void retry_parked_locked(after_unlock& later) noexcept;
  /// A call on @p t found its inline wait parked: it leaves the timer now;
  /// 1 when it was a fired one (cancelled by the call), else 0.
  std::size_t settle_parked_of_locked(timer_impl& t, after_unlock& later) noexcept;
  /// Destroys the parked inline waits dropped in a shutdown (unlocked).
  void drop_parked() noexcept;
  /// @p t's inline wait is queued in this shard's index.
  static bool inline_queued(const timer_impl& t) noexcept {
    return t.inline_ops() != nullptr && t.heap_index != index_node::not_queued;
  }
  /// Gives back the index buffers that aborts left sparse: each smaller
  /// buffer is allocated, and each old one freed, with the lock released
  /// (see deadline_index). Called without the lock, after a locked section
  /// that aborted waits.
  void shrink_index_buffers() noexcept;
  /// @p w could not be queued in the pool: forget it, if it is still the
  /// armed wake-up, so that the next wait arms another.
  void forget_wakeup(const task_ptr& w) noexcept;
  void forget_wakeup_locked(const task_ptr& w) noexcept;
  /// Takes @p op out of its timer's pending list (if it is linked to one).
  /// @p timer: its timer, when the caller knows it (a fired wait's is
  /// known): otherwise found at the end of the list, a walk as long as the
  /// waits after @p op. Returns the timer when waits are left in its list
  /// (so it cannot go away while the lock is held), else null.
  timer_impl* unlink_locked(wait_op_base& op, timer_impl* timer = nullptr) noexcept;
  /// Unlinks @p list's fired waits from their timers (see claim()); the
  /// caller has fetched the timers into the cache (prefetch_fired_timers).
  void claim_locked(wait_list& list) noexcept;
  /// The shard lets go of @p n waits (delivered or dropped).
  void release_locked(std::size_t n, after_unlock& later) noexcept;
  /// Before the shard holds its first wait: takes the context's work (again
  /// the copy @p later holds when the last wait went earlier in this
  /// section). Throws when the executor cannot be copied.
  void hold_work_locked(after_unlock& later);
  /// Moves every due wait into @p out, fired.
  void collect_due_locked(wait_list& out, after_unlock& later) noexcept;
  /// Takes every wait out, for shutdown or a lost pool.
  void take_all_locked(wait_list& out, after_unlock& later) noexcept;
  /// Brings the wake-up in line with the index after a change. Throws on
  /// allocation failure unless @p best_effort (the waits then stay queued
  /// and the next wait arms again).
  void rewake_locked(after_unlock& later, bool best_effort);
  /// arm_wakeup_locked() on a manual clock: a collect posted when the first
  /// deadline is due by the manual time, else nothing (the driver comes).
  void arm_manual_locked();
  /// rewake_locked()'s decision for the index as it is (no drain, no gate).
  void arm_wakeup_locked(after_unlock& later, bool best_effort);
  void arm_native_locked(time_point t);
  /// Posts a function to the context that collects the waits due at @p t
  /// (already due): the wake-up of a zero sleep, in either mode.
  void post_collect_locked(time_point t);
  /// Native mode, @p t nearer than arming the native timer costs: left to
  /// the service's poll (started if none runs), which collects at @p t.
  void poll_native_locked(time_point t);
  /// A wake-up for @p t is on its way: the poll's (@p on_poll) or a native
  /// timer's or posted function's.
  void mark_armed_locked(time_point t, bool on_poll) noexcept {
    armed_ = true;
    armed_on_poll_ = on_poll;
    armed_at_ = t;
  }
  /// Left to the poll for a time long passed (see poll_stall): posts one
  /// collect for it, which wakes another thread of the context.
  void rescue_stalled_poll_locked();
  /// Queues @p p on the context behind its other work, as a continuation.
  void repost_poll(const native_poll& p);
  /// After use_pool, how long before a deadline its waits are handed to the
  /// context: how long a held collect posted from outside it took to start
  /// there, as a level that rises at once and falls slowly
  /// (handoff_latency_level); zero in every other mode, and once the pool
  /// is shut down.
  duration handoff_lead() const noexcept;
  /// How far past the first deadline the wake-up may be armed, to the
  /// latest deadline within it (deadline_index::wake_time): the pool's
  /// slack for a pool's own timers, the service's otherwise, none on a
  /// manual clock.
  duration wake_slack() const noexcept;
  /// After use_pool, @p t within handoff_lead(): posts a held collect for @p t.
  void post_held_collect_locked(time_point t);
  /// The wake-up came: the native timer's (@p native) or a posted one.
  /// With @p after_handed_on (a held collect, which a pool task may race),
  /// it collects nothing while fired waits this shard handed on are still
  /// on their way to the context, which a collect completing here would
  /// overtake: false, and the caller comes back behind them.
  bool on_native_expiry(std::uint64_t generation, bool native, bool after_handed_on = false);
  /// Delivers a batch of fired waits: on this thread when it is one of the
  /// context's (the first chunk; the rest posted so other threads share it),
  /// or all posted to the context.
  void deliver_fired(wait_list fired, bool on_context_thread);
  /// For a thread of the context holding 16 fired waits or fewer: claims
  /// them, lets the shard go of them and re-arms, under the caller's lock.
  void settle_here_locked(wait_list& fired, after_unlock& later) noexcept;
  /// Delivers waits settled by settle_here_locked() on this thread.
  void deliver_settled(wait_list fired);

  timer_service_base& service_;
  native_poller& poller_;
  // The manual clock's time, or null (the real clock): read once per
  // collect and per arming. Set under the lock before the first wait.
  const manual_time* manual_ = nullptr;

  mutable adaptive_mutex mutex_;  // guards everything below
  deadline_index index_;
  std::uint64_t next_sequence_ = 0;  // FIFO among equal deadlines (waits in the inbox take theirs as drained)
  wait_list batch_;              // cancelled waits waiting for delivery
  std::size_t batch_waits_ = 0;  // the waits batch_ holds (a chunk holds several)
  timer_impl* parked_ = nullptr;  // inline waits parked in their timers (see above)
  // Delivered chunks kept for the next aborts: returned by delivering
  // threads without the lock (a stack), taken whole into the spare list
  // under it (so no pop races a push). About spare_chunk_limit at most.
  static constexpr std::size_t spare_chunk_limit = 64;
  inline_abort_chunk* spare_chunks_ = nullptr;
  // Written by delivering threads: a line of their own, away from the
  // fields a canceller writes under the lock in every abort.
  alignas(64) std::atomic<inline_abort_chunk*> returned_chunks_{nullptr};
  std::atomic<std::size_t> returned_count_{0};
  [[maybe_unused]] char returned_line_end_[64 - sizeof(std::atomic<inline_abort_chunk*>) - sizeof(std::atomic<std::size_t>)];
  bool drain_posted_ = false;    // a function to deliver batch_ is on its way
  std::size_t held_ = 0;         // waits the shard holds (queued, batched, being handed on)
  std::uint64_t unlocked_starts_ = 0;
  std::optional<asio_ns::any_io_executor> work_;  // tracked, while held_ > 0
  std::optional<asio_ns::any_io_executor> context_ex_;
  bool shutting_down_ = false;
  std::size_t in_flight_ = 0;  // deliveries under way outside the lock
  // Of those, the ones that have not re-armed yet (deliver_fired re-arms
  // once it has posted its chunks). Until then nobody else arms and the
  // gate stays where it was: see arm_wakeup_locked().
  std::size_t rearm_pending_ = 0;
  // Lists of fired waits posted to the context and not claimed yet. Counted
  // up before the post, outside the lock; down in claim(), under it.
  std::atomic<std::size_t> posted_unclaimed_{0};
  // Lists ever posted (counted with posted_unclaimed_), and what the poll's
  // last turn that held back for unclaimed lists saw of both (see
  // serve_due). Only the poll, one turn at a time, uses the second pair.
  std::atomic<std::uint64_t> posted_total_{0};
  std::uint64_t held_back_posted_ = 0;
  std::size_t held_back_unclaimed_ = 0;
  std::condition_variable_any deliveries_done_;

  // Native driving.
  std::unique_ptr<native_wakeup> native_;
  bool native_waiting_ = false;  // the native timer may have a wait pending
  bool armed_ = false;           // a wake-up (native or posted) is on its way, for armed_at_
  time_point armed_at_{};
  bool armed_on_poll_ = false;   // that wake-up is the poll's (poll_native_locked)
  time_point rescued_at_{time_point::min()};  // the poll's stalled time a collect was posted for
  // Tells stale native expiries from the current one. Changed under the
  // lock; atomic so that the poll reads it without the lock, on a cache line
  // of its own, away from the fields submitting threads write.
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  [[maybe_unused]] char generation_line_end_[64 - sizeof(std::atomic<std::uint64_t>)];

  // Starting without the lock: the inbox (waits linked by
  // wait_node::inbox_link, newest first), written by every starting thread,
  // and the gate (the armed wake-up's time in ns, or gate_closed), written
  // only by a re-arm and read by every start and by every turn of the poll.
  // Each on a cache line of its own: sharing one, each push would take the
  // line from a spinning poll, which would take it back at its next turn.
  static constexpr std::int64_t gate_closed = INT64_MAX;
  alignas(64) std::atomic<wait_node*> inbox_{nullptr};
  // About how many waits the inbox holds (pushes since the last drain).
  std::atomic<std::uint32_t> inbox_count_{0};
  [[maybe_unused]] char inbox_line_end_[64 - sizeof(std::atomic<wait_node*>) - sizeof(std::atomic<std::uint32_t>)];
  alignas(64) std::atomic<std::int64_t> gate_{gate_closed};
  [[maybe_unused]] char gate_line_end_[64 - sizeof(std::atomic<std::int64_t>)];

  // Pool driving.
  std::shared_ptr<pool_core> pool_;
  bool context_is_pool_ = false;
  task_ptr wakeup_;  // the armed wake-up task, or null
  time_point wakeup_at_{};  // the wake time it is armed for (it runs handoff_lead() before)
  // After use_pool: how long a held collect posted from outside the context
  // took to start there.
  handoff_latency_level handoff_latency_;

  // Statistics. Written under the lock, so the shard's recorder has one
  // writer at a time (plain relaxed stores, no read-modify-write); read by
  // add_stats() under it too.
  std::uint64_t cancelled_ = 0;        // waits aborted, before or after they fired
  std::uint64_t cancelled_fired_ = 0;  // of those, fired ones cancelled before their delivery claimed them
  // Fire time (the collect's one clock read) minus deadline, of every wait
  // that fired.
  histogram_shard lateness_;
};

// A timer keeps its home shard's address above six flag bits (timer_impl).
static_assert(alignof(timer_shard) >= 64);

}  // namespace chronopool::detail

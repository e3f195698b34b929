// An unbounded blocking priority queue of tasks ordered by (deadline,
// sequence): Java's DelayedWorkQueue, with the leader/follower wait.
//
// * The heap is a 4-ary min-heap of 24-byte entries that carry their key
//   (deadline, sequence) inline next to the task pointer, so sifting compares
//   entries in one contiguous array and never touches the tasks themselves
//   (a task is a few hundred bytes somewhere else on the heap; reading its key
//   at every level is a cache miss per level at a million entries). Four
//   children per node halve the depth; the four sit in 96 contiguous bytes.
//   Each task records its own slot (task_base::heap_index), so remove() is
//   O(log n) and never scans.
// * Only work due soon is in the heap. A task due after the "near window"
//   (the aligned 2^near_window_log2 ns span, ~1.07 s by default, that holds
//   the queue's reference time) waits in a far tier instead: 64 unordered
//   buckets, the task in bucket j when the highest bit in which its deadline
//   differs from the reference time is j. Putting a task there and taking it
//   out (cancel) are O(1): a push, and a swap with the last. A taker keeps
//   the reference time a window ahead of the clock: when less than a window
//   is left before the near window ends, it moves the buckets that come near
//   into the heap (or into lower buckets), so a task is in the heap, and a
//   leader sleeps for its exact deadline, before it is due. A task moves down
//   at most once per bucket, and a timeout cancelled long before its
//   deadline (most of a server's) never sifts through the heap at all. Order
//   stays exact: every heap task is due before every tier task. Deadlines of
//   "never" stay in a list of their own, outside both.
//   The window is wide because a bucket moves all at once, touching every
//   task in it: with 67 ms, timers spread over a second moved in batches of
//   thousands under the lock and their p99 lateness grew sevenfold.
// * Work that is due the moment it is queued (an executor's post) skips the
//   heap: offer_now() appends it to a FIFO "ready lane", O(1) both ways,
//   where a heap would sift every push and every pop through a queue that
//   grows whenever posters outrun the workers. Takers still honour the
//   global (deadline, sequence) order: they take whichever of the two heads
//   comes first.
// * Takers wait leader/follower: at most one thread (the leader) sleeps with a
//   timeout for the head's deadline; the others sleep untimed until the leader
//   takes the head and passes the role on, or a new earlier head arrives.
//   A queue with N idle workers therefore arms one kernel timer, not N.
// * offer() never blocks and never fails for capacity; bounds are the pool's
//   business.
// * The queue holds one reference to each queued task.
#pragma once

#include <chronopool/detail/saturating_time.hpp>
#include <chronopool/detail/task_base.hpp>
#include <chronopool/detail/task_ptr.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
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

  /// Why a wait returned without a task.
  enum class wait_status : std::uint8_t { task, timeout, interrupted, closed };

  struct wait_result {
    task_ptr task;
    wait_status status;
  };

  /// The default near window: 2^30 ns, about 1.07 s.
  static constexpr unsigned default_near_window_log2 = 30;

  /// @p near_window_log2 (1 to 62) sets the near window to 2^near_window_log2
  /// ns; tests use small windows to move tasks between tier and heap often.
  explicit delayed_work_queue(unsigned near_window_log2 = default_near_window_log2);
  delayed_work_queue(const delayed_work_queue&) = delete;
  delayed_work_queue& operator=(const delayed_work_queue&) = delete;
  /// Releases the references of tasks still queued (without cancelling them).
  ~delayed_work_queue();

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

  enum class offer_status : std::uint8_t { queued, cancelled, full };
  /// offer(), refused with `full` when @p max_size tasks are already queued.
  /// The check and the insertion happen under one lock, so the bound is exact.
  offer_status offer_within(task_ptr t, std::size_t max_size);

  /// Blocks until the head is due and removes it; null only when the queue
  /// is closed, or draining and empty, or interrupt_waiters() was called.
  task_ptr take() { return wait_for_task(time_point::max()).task; }

  /// The head if it is due now, else null. Never blocks.
  task_ptr poll();

  /// Like take(), but gives up at @p limit.
  template <class Rep, class Period>
  task_ptr poll(std::chrono::duration<Rep, Period> timeout) {
    return wait_for_task(deadline_after(clock::now(), saturating_duration(timeout, "timeout"))).task;
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

  /// Testing aid: whether a thread currently holds the leader role.
  bool has_leader() const;

 private:
  /// A heap slot: the task's key, copied in when it is queued (a queued
  /// task's deadline and sequence do not change), and the task.
  struct entry {
    time_point::rep deadline;
    std::uint64_t sequence;
    task_base* task;

    static entry of(task_base* t) noexcept { return {t->deadline().time_since_epoch().count(), t->sequence(), t}; }
    friend bool operator<(const entry& a, const entry& b) noexcept {
      return a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence);
    }
  };
  static constexpr std::size_t arity = 4;

  // task_base::heap_index of a task in the far tier: this tag, its bucket
  // shifted by bucket_shift, and its position in the bucket; of a task due
  // "never": never_tag and its position in never_.
  static constexpr std::size_t tier_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 3);
  static constexpr std::size_t never_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 4);
  static constexpr unsigned bucket_shift = 48;
  static constexpr std::size_t position_mask = (std::size_t{1} << bucket_shift) - 1;
  static constexpr std::size_t buckets = 64;

  /// Deadlines as unsigned keys in the same order (the sign bit flipped), so
  /// that bucket arithmetic works on the whole clock range.
  using key = std::uint64_t;
  static constexpr key key_bias = key{1} << 63;
  static key key_of(time_point::rep d) noexcept { return static_cast<key>(d) ^ key_bias; }
  static time_point time_of(key k) noexcept { return time_point(duration(static_cast<time_point::rep>(k ^ key_bias))); }
  /// task_base::heap_index of a task in the ready lane: this bit plus its
  /// position counted from the first task ever queued there.
  static constexpr std::size_t ready_tag = std::size_t{1} << (sizeof(std::size_t) * 8 - 2);

  // Heap primitives; the caller holds mutex_.
  void place(std::size_t i, const entry& e) noexcept {
    heap_[i] = e;
    e.task->heap_index = i;
  }
  time_point head_time() const noexcept { return time_point(duration(heap_.front().deadline)); }
  void sift_up(std::size_t i) noexcept;
  void sift_down(std::size_t i) noexcept;
  void push_entry(task_base* t);
  offer_status offer_locked(task_ptr& t, std::size_t max_size, bool& new_head);
  task_base* remove_at(std::size_t i) noexcept;
  // Ready-lane primitives; the caller holds mutex_. The lane's front is never
  // an empty slot.
  task_base* pop_ready() noexcept;
  void drop_empty_front() noexcept;
  /// Whether the next task in (deadline, sequence) order is the ready lane's.
  bool ready_first() const noexcept {
    return !ready_.empty() && (heap_.empty() || ready_.front() < heap_.front());
  }
  /// The next task in order if it is due at @p now, removed; else null.
  task_base* take_due(time_point now) noexcept;
  std::size_t count() const noexcept { return heap_.size() + ready_count_ + tier_count_ + never_.size(); }

  // Far-tier primitives; the caller holds mutex_.
  /// Queues @p t, not due "never", in the heap or the tier by its key.
  void place_new(task_base* t);
  void tier_push(task_base* t, key k);
  task_base* tier_erase(std::size_t bucket, std::size_t pos) noexcept;
  task_base* never_erase(std::size_t pos) noexcept;
  /// Moves the reference time to @p to (at least near_limit_): the buckets it
  /// affects go to the heap or to lower buckets. Gives up, changing nothing,
  /// when memory runs out (the tasks stay where they were).
  void rebase(key to) noexcept;
  void set_base(key b) noexcept;
  /// One near window after @p now (saturating): where the reference time
  /// goes, so that the heap always reaches at least a window ahead.
  key lead(key now) const noexcept;
  /// The lower bound of bucket @p j's deadlines.
  key bucket_floor(unsigned j) const noexcept;
  /// The smallest key in bucket @p j (a scan).
  key bucket_min(unsigned j) const noexcept;
  /// When the tier has tasks and the heap none, brings the earliest into the
  /// heap, whatever the time (pop_head() must see the true head).
  void pull_earliest() noexcept;
  /// wake_deadline() as a key; ~key{0} for none.
  key wake_key() const noexcept;

  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::vector<entry> heap_;
  std::deque<entry> ready_;        // FIFO; a removed task leaves task == nullptr
  std::size_t ready_count_ = 0;    // tasks in ready_ (its size minus empty slots)
  std::size_t ready_popped_ = 0;   // slots ever popped off ready_'s front
  // The far tier, and the tasks due "never".
  const unsigned near_bits_;
  key base_ = 0;        // the reference time
  key near_limit_ = 0;  // the end of the near window: heap keys are below, tier keys not
  std::vector<task_base*> tier_[buckets];
  std::uint64_t tier_mask_ = 0;  // bit j set when tier_[j] is not empty
  std::size_t tier_count_ = 0;
  std::vector<task_base*> never_;
  const void* leader_ = nullptr;  // identity of the leader's wait, or null
  std::uint64_t interrupt_epoch_ = 0;
  mode mode_ = mode::open;
};

}  // namespace chronopool::detail

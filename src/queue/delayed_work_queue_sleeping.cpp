// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// How a taker of the delayed work queue waits without work: sleeping on the
// condition variable, spinning without the lock, the precision mode's
// sleep-then-spin window, and passing the leader role on.
#include <chronopool/detail/queue/delayed_work_queue.hpp>

#include <chronopool/detail/sync/cpu_relax.hpp>
#include <chronopool/detail/sync/lock_spinning.hpp>

#include <algorithm>
#include <thread>

namespace chronopool::detail {

namespace {

// How far past the head's deadline a spinning follower lets the leader be
// before it takes the head itself (precision mode): a leader that is on its
// CPU takes it within a microsecond.
constexpr std::chrono::nanoseconds follower_grace{std::chrono::microseconds(2)};

// How far past the waiting leader's wake-up the backup follower sleeps: a
// leader that keeps its role across a task and is held up by it delays the
// next head by at most this. Woken once per this, not once per task.
constexpr std::chrono::nanoseconds backup_grace{std::chrono::microseconds(500)};

// Tasks are "short" while their decaying maximum run time stays below
// this; longer ones are handed off at once, as a follower would run the
// next head while the leader is still busy.
constexpr std::chrono::nanoseconds keep_role_run_limit{std::chrono::microseconds(100)};

}  // namespace

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
  // On a manual clock no real time comes: the sleep ends when woken (the
  // time moved, or work came), or at once when this taker moved the time
  // itself (auto-advance). One test of manual_ on the real path, as before.
  if (manual_ != nullptr) [[unlikely]] {
    if (!manual_going_idle_locked()) available_.wait(lock);
  } else if (is_never(until)) {
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
  // With a slack, the wake-up's latency is what the slack allows: only a
  // head nearer than arming the sleep costs is spun for.
  if (wake_slack_ > duration::zero()) return ahead <= near_spin_;
  // Subtracted from `ahead` (a time still to come, and the latency at most
  // 100 us): the near spin may be as long as a test likes.
  return ahead - wake_latency_.get() <= near_spin_;
}

void delayed_work_queue::set_wake_slack(std::chrono::nanoseconds slack) noexcept {
  std::lock_guard lock(mutex_);
  wake_slack_ = std::max(slack, std::chrono::nanoseconds::zero());
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

void delayed_work_queue::follower_sleep(std::unique_lock<std::mutex>& lock, time_point limit) {
  // One follower is the backup: it wakes backup_grace past the leader's
  // wake-up, and (the leader waiting again) sleeps on; the others sleep
  // until woken. A manual clock's time does not pass by itself: untimed.
  if (!keep_wanted_ || backup_sleeping_ || manual_ != nullptr || is_never(leader_until_)) {
    sleep_until(lock, limit);
    return;
  }
  backup_sleeping_ = true;
  // From now at the earliest: a leader woken late, or held up before it
  // takes the lock again, leaves its wake-up in the past, and a backup
  // timed from there would return at once, again and again, on the CPU.
  backup_at_ = saturating_add(std::max(leader_until_, clock::now()), backup_grace);
  sleep_until(lock, std::min(limit, backup_at_));
  backup_sleeping_ = false;
  backup_at_ = time_point::max();
}

bool delayed_work_queue::role_may_be_kept_locked(time_point next) const noexcept {
  // Exact and reproducible waits (precision mode, a manual clock) hand off
  // as ever; so does a queue that is no longer open.
  if (precision_mode() || manual_ != nullptr || mode_ != mode::open) return false;
  const duration run{run_estimate_.load(std::memory_order_relaxed)};
  if (run > keep_role_run_limit) return false;
  // The next head before this task is expected to end (due already, in a
  // burst): a follower runs it meanwhile.
  return next >= saturating_add(clock::now(), run);
}

bool delayed_work_queue::backup_covers_locked(time_point next) const noexcept {
  // No one idle: no one to wake. Else the backup must wake in time: it
  // stands in at most backup_grace after the next head.
  if (sleeping_ == 0) return true;
  return backup_sleeping_ && backup_at_ <= saturating_add(next, backup_grace);
}

bool delayed_work_queue::leader_kept_role() const {
  std::lock_guard lock(mutex_);
  return leader_ == &kept_role_;
}

std::uint64_t delayed_work_queue::roles_kept() const {
  std::lock_guard lock(mutex_);
  return roles_kept_;
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
  return leader_waits();
}

}  // namespace chronopool::detail

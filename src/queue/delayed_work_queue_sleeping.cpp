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

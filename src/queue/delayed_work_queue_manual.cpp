// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The delayed work queue on a manual clock: telling the clock's driver when
// every taker is idle, and auto-advance, where the taker that goes idle last
// moves the virtual time to the earliest deadline instead of sleeping
// (tokio's rule; see docs/design.md, "Testable time").
#include <chronopool/detail/queue/delayed_work_queue.hpp>

namespace chronopool::detail {

void delayed_work_queue::watch_takers(const std::atomic<std::size_t>* takers) noexcept {
  std::lock_guard lock(mutex_);
  takers_ = takers;
}

void delayed_work_queue::set_auto_advance(manual_time* time) noexcept {
  std::lock_guard lock(mutex_);
  auto_advance_ = time;
  // Takers asleep already look again; the last of them to go back to sleep
  // finds the pool idle and jumps.
  if (time != nullptr) wake_all();
}

std::uint64_t delayed_work_queue::auto_advances() const {
  std::lock_guard lock(mutex_);
  return auto_advances_;
}

void delayed_work_queue::wait_takers_idle() {
  std::unique_lock lock(mutex_);
  if (takers_ == nullptr) return;
  // idle_ rises under this lock before a taker's sleep (which notifies), and
  // a taker that leaves lowers *takers_ before taker_left() takes this lock:
  // neither change can fall between a look here and the wait.
  takers_idle_.wait(lock, [this] { return idle_.load(std::memory_order_seq_cst) >= takers_->load(); });
}

void delayed_work_queue::taker_left() noexcept {
  std::lock_guard lock(mutex_);
  takers_idle_.notify_all();
}

bool delayed_work_queue::manual_going_idle_locked() {
  takers_idle_.notify_all();
  if (auto_advance_ == nullptr || takers_ == nullptr) return false;
  // Every taker idle: none runs a task or a function, none is on its way
  // back (it is counted from its sleep on, under this lock), and this one
  // found nothing due (take_locked ran under this lock just before). A
  // function pushed without the lock was looked for after the count rose.
  if (idle_.load(std::memory_order_seq_cst) < takers_->load()) return false;
  if (mode_ == mode::closed || !ready_.empty() || !functions_.empty()) return false;
  const std::optional<time_point> first = index_.first_deadline();
  // Nothing queued, or only "never": the pool sleeps until work comes. A
  // deadline reached already that take_locked did not take (none should
  // be) must not make the takers loop on it.
  if (!first || is_never(*first) || *first <= manual_->now()) return false;
  // The earliest deadline, exactly: the tasks due at it run with now() at
  // it, in (deadline, sequence) order, as under the driver's advance().
  auto_advance_->set_now(*first);
  ++auto_advances_;
  wake_all();
  return true;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// pool_manual_clock: the driver that moves a pool's virtual time one
// deadline at a time and waits, at each, until the pool's threads have run
// what came due (see docs/design.md, "Testable time").
#include <chronopool/pool_manual_clock.hpp>

#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/timer/timer_service_base.hpp>
#include <chronopool/detail/timer/wall_clock_waits.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <stdexcept>

namespace chronopool {

pool_manual_clock::pool_manual_clock(detail::pool_core& core) noexcept : core_(core) {}

pool_manual_clock::~pool_manual_clock() = default;

void pool_manual_clock::throw_negative(const char* what, duration d) {
  throw std::invalid_argument(
      fmt::format("chronopool::pool_manual_clock::{}: the duration must not be negative (was {})", what, d));
}

void pool_manual_clock::refuse_from_pool_thread(const char* what) const {
  if (core_.running_in_this_thread())
    throw std::logic_error(fmt::format("chronopool::pool_manual_clock::{}: called from one of the pool's own "
                                       "threads; it waits for them: call it from the test's thread",
                                       what));
}

void pool_manual_clock::settle() {
  // Quiet before now + 1 ns: nothing running, nothing queued at or before
  // now (a posted function counts as due). A run that queues due work
  // keeps the pool busy (see scheduled_thread_pool's quiescence).
  core_.wait_until_quiet(detail::saturating_add(now(), duration(1)), time_point::max());
  // Then every thread back in its wait: a thread between its last run and
  // its wait has yet to read the time (its keep_alive is measured from it),
  // which must be the time it went idle at, not the next deadline's. The
  // queue tells us: a thread going idle on a manual clock notifies, and so
  // does one that retires.
  core_.wait_manual_threads_idle();
}

void pool_manual_clock::auto_advance(bool on) noexcept {
  auto_advance_.store(on, std::memory_order_release);
  core_.set_manual_auto_advance(on ? &time_ : nullptr);
}

std::uint64_t pool_manual_clock::auto_advances() const { return core_.manual_auto_advances(); }

namespace {

// Auto-advance waits while a driver call moves the time (advance(d) must
// stop at now() + d), and resumes as it was when the call returns.
class auto_advance_paused {
 public:
  auto_advance_paused(detail::pool_core& core, detail::manual_time* time, bool on) noexcept
      : core_(core), time_(time), on_(on) {
    if (on_) core_.set_manual_auto_advance(nullptr);
  }
  auto_advance_paused(const auto_advance_paused&) = delete;
  auto_advance_paused& operator=(const auto_advance_paused&) = delete;
  ~auto_advance_paused() {
    if (on_) core_.set_manual_auto_advance(time_);
  }

 private:
  detail::pool_core& core_;
  detail::manual_time* time_;
  bool on_;
};

}  // namespace

std::size_t pool_manual_clock::drive(duration by, bool to_idle, const char* what) {
  refuse_from_pool_thread(what);
  const auto_advance_paused paused(core_, &time_, auto_advance());
  const time_point target = to_idle ? time_point::max() : detail::saturating_add(now(), by);
  const std::uint64_t before = core_.completed_task_count();
  settle();
  for (;;) {
    const std::optional<time_point> next = core_.manual_first_deadline();
    if (!next || *next > target) break;
    // One deadline at a time: the tasks due at it run with now() at it,
    // and what they queue for it (or earlier) runs before the time moves on.
    if (*next > now()) time_.set_now(*next);
    core_.manual_time_moved();
    settle();
  }
  if (!to_idle) {
    time_.set_now(target);
    core_.manual_time_moved();  // idle threads see their keep_alive pass
  }
  return static_cast<std::size_t>(core_.completed_task_count() - before);
}

void pool_manual_clock::stall_by(duration d) noexcept {
  time_.set_now(detail::saturating_add(now(), d));
  core_.manual_time_moved();
}

std::size_t pool_manual_clock::set_system_time(system_time_point t) {
  const duration step = detail::saturating_sub(detail::saturating_duration(t.time_since_epoch(), "set_system_time time"),
                                               detail::saturating_duration(system_now().time_since_epoch(), "system time"));
  return step_by(step);
}

std::size_t pool_manual_clock::step_by(duration step) {
  refuse_from_pool_thread("step_system_time");
  const auto_advance_paused paused(core_, &time_, auto_advance());
  const std::uint64_t before = core_.completed_task_count();
  time_.step_system(step);
  core_.manual_system_step();
  if (timers_ != nullptr) timers_->wall_waits().on_manual_step();
  settle();
  return static_cast<std::size_t>(core_.completed_task_count() - before);
}

pool_manual_clock& manual_clock_of(scheduled_thread_pool& pool) {
  if (pool_manual_clock* c = pool.core_->manual_clock()) return *c;
  throw std::logic_error("chronopool::manual_clock_of: this pool runs on the real clock "
                         "(set scheduled_thread_pool_options::use_manual_clock to make it on a manual one)");
}

bool has_manual_clock(const scheduled_thread_pool& pool) noexcept { return pool.core_->manual_clock() != nullptr; }

namespace detail {

std::optional<time_point> pool_core::manual_first_deadline() const {
  std::optional<time_point> first = queue_.current_activity().earliest;
  if (first && is_never(*first)) first.reset();
  return first;
}

}  // namespace detail

}  // namespace chronopool

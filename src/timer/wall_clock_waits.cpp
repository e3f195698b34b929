// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The registry of a context's wall waits: cancelling them, moving them when
// the system clock is stepped. See detail/timer/wall_clock_waits.hpp.
#include <chronopool/detail/timer/wall_clock_waits.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace chronopool::detail {

wall_clock_waits::~wall_clock_waits() { shutdown(); }

void wall_clock_waits::link_locked(wall_wait& w) noexcept {
  wall_timer_impl& t = *w.timer;
  w.timer_prev = t.last;
  w.timer_next = nullptr;
  (t.last != nullptr ? t.last->timer_next : t.first) = &w;
  t.last = &w;
  w.all_next = nullptr;
  w.all_prev = all_last_;
  (all_last_ != nullptr ? all_last_->all_next : all_first_) = &w;
  all_last_ = &w;
  w.linked = true;
  ++linked_;
}

void wall_clock_waits::unlink_locked(wall_wait& w) noexcept {
  if (!w.linked) return;
  w.linked = false;
  --linked_;
  if (wall_timer_impl* t = w.timer) {
    (w.timer_prev != nullptr ? w.timer_prev->timer_next : t->first) = w.timer_next;
    (w.timer_next != nullptr ? w.timer_next->timer_prev : t->last) = w.timer_prev;
  }
  w.timer = nullptr;
  w.timer_prev = w.timer_next = nullptr;
  (w.all_prev != nullptr ? w.all_prev->all_next : all_first_) = w.all_next;
  (w.all_next != nullptr ? w.all_next->all_prev : all_last_) = w.all_prev;
  w.all_prev = w.all_next = nullptr;
}

void wall_clock_waits::cancel_locked(wall_wait& w) noexcept {
  w.state = wall_wait::mark::cancelled;
  // The engine's handler in the signal cancels the wait if it is still
  // queued, or does nothing once it has fired: the wrapper then sees the mark.
  w.inner.emit(asio_ns::cancellation_type::terminal);
}

std::size_t wall_clock_waits::cancel(wall_timer_impl& t, const sys_time* expiry) { return cancel(t, expiry, false); }

std::size_t wall_clock_waits::cancel(wall_timer_impl& t, const sys_time* expiry, bool let_go) {
  const std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (wall_wait* w = t.first; w != nullptr;) {
    wall_wait* next = w->timer_next;
    if (w->state != wall_wait::mark::cancelled) {
      cancel_locked(*w);
      ++n;
    }
    if (let_go) {
      // Stays in the context's list until its wrapper completes; no longer
      // in the timer's, which is going.
      w->timer = nullptr;
      w->timer_prev = w->timer_next = nullptr;
    }
    w = next;
  }
  if (let_go) t.first = t.last = nullptr;
  if (expiry != nullptr) t.store_expiry(*expiry);
  return n;
}

std::size_t wall_clock_waits::cancel_one(wall_timer_impl& t) {
  const std::lock_guard lock(mutex_);
  for (wall_wait* w = t.first; w != nullptr; w = w->timer_next) {
    if (w->state == wall_wait::mark::cancelled) continue;  // on its way to its handler
    cancel_locked(*w);
    return 1;
  }
  return 0;
}

void wall_clock_waits::move_timer(wall_timer_impl& to, wall_timer_impl& from) noexcept {
  const std::lock_guard lock(mutex_);
  to.waits = this;
  to.store_expiry(from.load_expiry());
  to.first = std::exchange(from.first, nullptr);
  to.last = std::exchange(from.last, nullptr);
  for (wall_wait* w = to.first; w != nullptr; w = w->timer_next) w->timer = &to;
  construct(from);
}

wall_clock_waits::verdict wall_clock_waits::decide_locked(wall_wait& w, const sys_ns::error_code& ec) noexcept {
  verdict v = verdict::aborted;
  if (w.state == wall_wait::mark::cancelled) {
    v = verdict::aborted;  // cancelled after it fired, or as it was moved
  } else if (ec == asio_ns::error::operation_aborted) {
    // Moved by a step, or aborted by the engine itself (a pool's shutdown_now()).
    v = w.state == wall_wait::mark::retiming ? verdict::rearm : verdict::aborted;
  } else if (!ec) {
    // Due by the steady clock, but not yet by the wall clock: a step back
    // not processed yet, or a deadline a few nanoseconds short.
    v = service_.system_now() < w.expiry ? verdict::rearm : verdict::success;
  }
  if (v == verdict::rearm) {
    const std::lock_guard sub(subscribe_mutex_);
    if (shut_down_) v = verdict::aborted;  // the context is going: nothing follows the clock now
  }
  if (v != verdict::rearm) unlink_locked(w);
  return v;
}

time_point wall_clock_waits::deadline_locked(wall_wait& w, bool after_due) noexcept {
  // A microsecond past the moment that stands for the expiry: the two clock
  // readings behind it are that far from exact (tens of nanoseconds), so a
  // wait that comes due by the steady clock is due by the wall clock too,
  // and is not armed again for the difference (which would put it behind
  // the later waits of its timer).
  constexpr duration slack = std::chrono::microseconds(1);
  wall_timer_impl* t = w.timer;
  const std::uint64_t steps = service_.clock_steps_seen();
  if (t != nullptr && t->deadline_steps == steps && t->deadline_expiry == w.expiry &&
      !(after_due && t->deadline <= service_.now())) {
    return t->deadline;
  }
  const time_point at = service_.steady_deadline_for(w.expiry);
  // On a manual clock the conversion is exact: no slack, so a wait comes due
  // at the very instant that stands for its expiry.
  const time_point d = is_never(at) ? at : saturating_add(at, service_.manual() != nullptr ? duration::zero() : slack);
  if (t != nullptr && t->load_expiry() == w.expiry) {
    t->deadline = d;
    t->deadline_expiry = w.expiry;
    t->deadline_steps = steps;
  }
  return d;
}

void wall_clock_waits::drop(wall_wait& w) noexcept {
  const std::lock_guard lock(mutex_);
  unlink_locked(w);
}

void wall_wait_user_cancel::operator()(asio_ns::cancellation_type_t type) noexcept {
  using ct = asio_ns::cancellation_type;
  if ((type & (ct::terminal | ct::partial | ct::total)) == ct::none) return;
  const std::lock_guard lock(wait->waits->mutex());
  if (!wait->linked || wait->state == wall_wait::mark::cancelled) return;
  wait->state = wall_wait::mark::cancelled;
  wait->inner.emit(ct::terminal);
}

void wall_clock_waits::ensure_subscribed(const asio_ns::any_io_executor& ex) {
  const std::lock_guard lock(subscribe_mutex_);
  if (subscribed_.load(std::memory_order_relaxed) || shut_down_) return;
  post_ex_.emplace(asio_ns::prefer(ex, asio_ns::execution::outstanding_work.untracked));
  subscribe_clock_steps(*this);
  subscribed_.store(true, std::memory_order_release);
}

void wall_clock_waits::on_clock_step() noexcept {
  // On the watcher thread, with the clock-step registry's lock held: post,
  // once for any number of steps until the re-computation starts.
  if (retime_posted_.exchange(true)) return;
  try {
    asio_ns::post(*post_ex_, [self = shared_from_this()] { self->retime(); });
  } catch (...) {
    // No memory for the post: the waits come due at their old steady
    // deadlines, where a step back is still caught (they are armed again);
    // the next step tries again.
    retime_posted_.store(false);
  }
}

void wall_clock_waits::on_manual_step() noexcept {
  // Only once a wall wait subscribed (post_ex_ is set): before that no wait
  // has a deadline to move.
  if (subscribed_.load(std::memory_order_acquire)) on_clock_step();
}

void wall_clock_waits::retime() noexcept {
  // Cleared first: a step from here on posts another re-computation.
  retime_posted_.store(false);
  const std::lock_guard lock(mutex_);
  for (wall_wait* w = all_first_; w != nullptr; w = w->all_next) {
    if (w->state != wall_wait::mark::armed) continue;
    w->state = wall_wait::mark::retiming;
    w->inner.emit(asio_ns::cancellation_type::terminal);
  }
}

void wall_clock_waits::shutdown() noexcept {
  const std::lock_guard lock(subscribe_mutex_);
  if (shut_down_) return;
  shut_down_ = true;
  // Once it returns, on_clock_step neither runs nor will be called.
  if (subscribed_.load(std::memory_order_relaxed)) unsubscribe_clock_steps(*this);
}

std::size_t wall_clock_waits::pending() const {
  const std::lock_guard lock(mutex_);
  return linked_;
}

void wait_for_wall_expiry(const timer_service_base& service, sys_time (*expiry)(const void*), const void* timer) {
  if (const manual_time* m = service.manual()) {
    // Virtual time: the clock's advances and steps notify its sleepers.
    for (sys_time e = expiry(timer); m->system_now() < e; e = expiry(timer)) m->wait_until_system(e);
    return;
  }
  // Woken by every step of the system clock while it sleeps.
  struct step_waker final : clock_step_listener {
    std::mutex mutex;
    std::condition_variable stepped;
    std::uint64_t steps = 0;
    void on_clock_step() noexcept override {
      {
        const std::lock_guard lock(mutex);
        ++steps;
      }
      stepped.notify_all();
    }
  } waker;
  bool subscribed = false;
  try {
    subscribe_clock_steps(waker);
    subscribed = true;
  } catch (...) {
    // No watcher: the sleep below is cut short now and then instead.
  }
  // A sleep is bounded, so "never" stays representable for the condition
  // variable, and without a watcher a step is seen within a second.
  const duration longest = subscribed ? duration(std::chrono::hours(1)) : duration(std::chrono::seconds(1));
  for (;;) {
    const sys_time e = expiry(timer);
    if (system_now() >= e) break;
    std::unique_lock lock(waker.mutex);
    const std::uint64_t seen = waker.steps;
    const time_point until = std::min(steady_deadline_for(e), clock::now() + longest);
    waker.stepped.wait_until(lock, until, [&] { return waker.steps != seen; });
  }
  if (subscribed) unsubscribe_clock_steps(waker);
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Waking a shard up when its first wait comes due: a native timer, the poll, a
// posted or held collect, or a pool task, re-armed as the index changes.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/run_state.hpp>

#include <chronopool/detail/config/asio.hpp>
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/defer.hpp>
#include <asio/steady_timer.hpp>
#else
#include <boost/asio/defer.hpp>
#include <boost/asio/steady_timer.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <utility>

namespace chronopool::detail {

namespace {

// How long past the time a shard left to the poll may go before a thread
// that re-arms the shard (a submitter's drain) posts a collect for it. The
// poll serves a passed gate within a turn (microseconds); when it has not
// for this long, the thread running it is not getting to it, and on a
// machine with fewer cores than busy threads the context's other threads
// sleep meanwhile, nothing queued for them: the poll is one function, held
// by the stalled thread. The posted collect wakes one of them.
constexpr std::chrono::microseconds poll_stall{200};

}  // namespace

// ---- the drivers -------------------------------------------------------------------

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
void defer_on(const asio_ns::any_io_executor& ex, F f) {
  using io_executor = asio_ns::io_context::executor_type;
  if (const auto* io = asio_compat::target<io_executor>(ex)) {
    asio_ns::defer(*io, std::move(f));
  } else {
    asio_ns::defer(ex, std::move(f));
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

// ---- waking up ---------------------------------------------------------------------------

void timer_shard::rewake_locked(after_unlock& later, bool best_effort) {
  // Publish, then drain: a wait pushed after the drain's exchange reads the
  // gate published before it (and takes the lock itself when it is due
  // earlier). What the drain brings in may move the wake-up earlier: arm and
  // publish again, and drain again while that changes the gate. Once the
  // gate stands, the last drain came after its publication and nothing is
  // left that relies on an older one. Draining until the inbox stays empty
  // instead would keep the lock holder draining behind a thread arming
  // timers at full speed, which pushes as fast as a drain takes.
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
  // and from a thread outside the context it would take the context's
  // queue lock while holding ours: a submitter that sleeps on that lock is
  // woken onto the io thread's core and holds it off for a time slice
  // while the other core idles.
  if (rearm_pending_ != 0) return;
  try {
    const auto wake = index_.wake_time(wake_slack());
    if (pool_) {
      if (!wake) {
        later.superseded = std::move(wakeup_);  // nothing to wait for: let the pool go idle
        return;
      }
      if (wakeup_ && wakeup_at_ <= *wake) return;
      // A pool on a manual clock: its time, and the wake-up task below
      // comes due on it.
      const time_point now = manual_ == nullptr ? clock::now() : manual_->now();
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
    if (manual_ != nullptr) [[unlikely]]
      return arm_manual_locked();
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

duration timer_shard::wake_slack() const noexcept {
  // Exact on a manual clock: a test moves the time to a deadline and
  // expects that wait, not a later one, to come due.
  if (manual_ != nullptr) return duration::zero();
  // A pool's own timers wait as its tasks do; an io_context's (also after
  // use_pool) as its service says.
  if (pool_ && context_is_pool_) return pool_->wake_slack();
  return poller_.slack();
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
  native_->timer.async_wait([this, generation](const sys_ns::error_code& ec) {
    // An aborted native wait (re-armed, or the shard going) touches nothing.
    if (ec != asio_ns::error::operation_aborted) on_native_expiry(generation, true);
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
  using io_executor = asio_ns::io_context::executor_type;
  held_collect h{this, generation, t, std::nullopt};
  if (const auto* io = asio_compat::target<io_executor>(*context_ex_); io != nullptr && io->running_in_this_thread()) {
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

}  // namespace chronopool::detail

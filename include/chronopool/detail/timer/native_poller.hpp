// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The one poll of a timer service's shards in native mode. A shard whose
// next deadline is nearer than sleeping on its native timer costs (the arm,
// kernel_timer_cost.hpp, plus how late the context's reactor runs an
// expiry, wakeup_latency.hpp), or than the poll window, leaves it to this
// poll: a function on the context that reads every shard's gate (the time
// it is armed for, published atomically) each turn, completes the due
// shards' waits as their own wake-ups would, and goes on while any gate is
// within its reach (see reach()). One poll per service, not per shard, so
// that timers spread over shards share the polling thread instead of each
// shard falling back to the kernel timer's latency.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/wakeup/wakeup_latency.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace chronopool::detail {

class timer_shard;

class native_poller {
 public:
  native_poller() = default;
  native_poller(const native_poller&) = delete;
  native_poller& operator=(const native_poller&) = delete;

  /// The shards it serves: the service's, fixed once the service made them.
  void attach(const std::vector<std::shared_ptr<timer_shard>>& shards) noexcept { shards_ = &shards; }

  /// The service's poll window (timer_service::set_poll_window).
  void set_window(duration w) noexcept { window_.store(w.count(), std::memory_order_relaxed); }
  duration window() const noexcept { return duration(window_.load(std::memory_order_relaxed)); }
  /// The service's wake-up slack (timer_service::set_wakeup_slack); zero
  /// while a poll window is set: the window asks for exact wake-ups.
  void set_slack(duration s) noexcept { slack_.store(s.count(), std::memory_order_relaxed); }
  duration slack() const noexcept {
    return window() > duration::zero() ? duration::zero() : duration(slack_.load(std::memory_order_relaxed));
  }
  /// A poll starts for a deadline at most this far ahead: sleep_cost(), or
  /// the window when that is more (the native timer wakes a window early
  /// anyway).
  duration threshold() const noexcept;
  /// How far a running poll looks ahead: the threshold, until the poll
  /// has served due shards faster than one per quarter threshold (over
  /// eight, on average since it started); from then until it stops, twice
  /// sleep_cost() (or the window when that is more). In such a dense stream
  /// a gap a little longer than the threshold is a lull, and the deadline
  /// after it, left to the native timer, would be late; for sparse
  /// deadlines, going on past the threshold would spend more CPU on each
  /// than the native wake-up it saves.
  duration reach() const noexcept;
  /// What a turn at @p now saw: @p served due shards (called by turn(); a
  /// test may call it on a claimed poll, with times of its own).
  void note_turn(time_point now, std::uint64_t served) noexcept;
  /// Whether a deadline @p ahead from now is left to the poll: within the
  /// threshold, or within reach() while a poll runs (with a slack, within
  /// what arming costs).
  bool covers(duration ahead) const noexcept;

  /// A poll is running (or starting): a gate published now is served by its
  /// next turn at the latest, or by the poll a claim() then starts.
  bool running() const noexcept { return active_.load(std::memory_order_relaxed); }
  /// A shard has published a gate within threshold(): true when no poll
  /// runs and the caller must queue one (it then counts as started). The
  /// shard publishes its gate, then claims; the poll, to stop, clears its
  /// claim, then reads the gates once more (both sides sequentially
  /// consistent): either the poll sees the new gate and goes on, or the
  /// shard sees it stopped and starts another.
  bool claim() noexcept;
  /// The poll the caller claimed could not be queued (or re-queued).
  void unclaim() noexcept { active_.store(false, std::memory_order_seq_cst); }

  /// One turn of the poll: completes the due waits of every shard (on this
  /// thread, or shared out as their own wake-ups would); whether the poll
  /// goes on. On false it has stopped (its claim is released). Throws what
  /// a handler completed here throws; the poll is then still claimed.
  bool turn();

  /// A shard's native timer woke its thread @p late after the time it was
  /// set for (the interrupt, the reactor, the switch back to the thread).
  void observe_wakeup(duration late) noexcept { latency_.observe(late); }
  /// The native wake-ups' latency as observe_wakeup() saw it (see
  /// wakeup_latency.hpp); zero until it saw one.
  duration wakeup_latency() const noexcept { return latency_.get(); }

  /// Diagnostics: how many polls were started.
  std::uint64_t starts() const noexcept { return starts_.load(std::memory_order_relaxed); }

 private:
  /// What leaving a deadline to the native timer costs it: the arm, then
  /// the wake-up's latency. The latency counts: on a virtual machine it is
  /// the larger part, and a threshold of the arm alone would leave near
  /// deadlines to wake-ups that come later than the poll serves them.
  duration sleep_cost() const noexcept;
  /// Some gate is at or before @p horizon.
  bool any_gate_by(time_point horizon) const noexcept;

  const std::vector<std::shared_ptr<timer_shard>>* shards_ = nullptr;
  std::atomic<bool> active_{false};
  // The running poll's pace: touched by the thread running its turns only
  // (one at a time: the claim orders them); dense_ is read by covers().
  bool pacing_ = false;
  time_point pace_start_{};
  std::uint64_t pace_served_ = 0;
  std::atomic<bool> dense_{false};
  std::atomic<duration::rep> window_{0};
  std::atomic<duration::rep> slack_{0};
  wakeup_latency_average latency_;
  std::atomic<std::uint64_t> starts_{0};
};

}  // namespace chronopool::detail

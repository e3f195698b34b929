// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/detail/timer/native_poller.hpp>

#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>

#include <algorithm>

namespace chronopool::detail {

duration native_poller::sleep_cost() const noexcept { return near_kernel_timer_cost() + latency_.get(); }

duration native_poller::threshold() const noexcept { return std::max(sleep_cost(), window()); }

duration native_poller::reach() const noexcept {
  // The CPU a native wake-up costs is at most its arm and its latency: a
  // poll going on for a deadline farther than that spends more CPU on it,
  // which only a dense stream's lateness pays for.
  if (!dense_.load(std::memory_order_relaxed)) return threshold();
  return std::max(2 * sleep_cost(), window());
}

void native_poller::note_turn(time_point now, std::uint64_t served) noexcept {
  if (!pacing_) {
    pacing_ = true;
    pace_start_ = now;
    pace_served_ = 0;
  }
  pace_served_ += served;
  // Dense: more than one due shard served per quarter threshold, on average
  // since the poll started, over eight at least (one burst is no pace;
  // random deadlines a threshold apart on average show such a run rarely).
  // Once dense, the poll stays so until it stops: a shard may have left a
  // gate to it as far as that reach.
  if (dense_.load(std::memory_order_relaxed) || pace_served_ < 8) return;
  if (saturating_difference(now, pace_start_) * 4 < threshold() * static_cast<duration::rep>(pace_served_))
    dense_.store(true, std::memory_order_relaxed);
}

bool native_poller::covers(duration ahead) const noexcept {
  // With a slack (and no window), the wake-up's latency is what the slack
  // allows: only a deadline nearer than arming costs is polled for.
  if (slack() > duration::zero()) return ahead <= near_kernel_timer_cost();
  if (ahead <= threshold()) return true;
  // Acquire: a poll seen running was claimed after the last one stopped,
  // and that one's dense_ reset comes before this read of it.
  return active_.load(std::memory_order_acquire) && ahead <= reach();
}

bool native_poller::claim() noexcept {
  // The load spares the line a write while a poll runs (the usual case when
  // deadlines come every few microseconds); sequentially consistent like the
  // exchange, so the caller's gate store comes before it either way.
  if (active_.load(std::memory_order_seq_cst) || active_.exchange(true, std::memory_order_seq_cst)) return false;
  starts_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool native_poller::any_gate_by(time_point horizon) const noexcept {
  return std::any_of(shards_->begin(), shards_->end(), [&](const auto& s) { return s->gate() <= horizon; });
}

bool native_poller::turn() {
  for (;;) {
    const time_point now = clock::now();
    const time_point horizon = now + reach();
    bool near = false;
    std::uint64_t served = 0;
    for (const auto& s : *shards_) {
      const time_point gate = s->gate();
      if (gate <= now) {
        s->serve_due();  // its gate moves on: looked at again next turn
        ++served;
        near = true;
      } else if (gate <= horizon) {
        near = true;
      }
    }
    note_turn(now, served);
    // Going on, without offering the CPU as the pool's spins do: a yield
    // hands a whole time slice to a thread that never blocks (a submitter),
    // and the near deadlines this poll serves are then that much late.
    if (near) return true;
    // Nothing near: stop, unless a shard published a near gate before it
    // could see the poll stop. Then go on, unless that shard already
    // started another poll. A shard may have left a gate to this poll as
    // far ahead as its reach: the last look goes that far. From the reset
    // on, shards leave it no more than the threshold.
    const duration relied_on = reach();
    const bool was_dense = dense_.exchange(false, std::memory_order_relaxed);
    pacing_ = false;
    active_.store(false, std::memory_order_seq_cst);
    if (!any_gate_by(clock::now() + relied_on)) return false;
    if (active_.exchange(true, std::memory_order_seq_cst)) return false;
    if (was_dense) dense_.store(true, std::memory_order_relaxed);  // what shards were told still holds
  }
}

}  // namespace chronopool::detail

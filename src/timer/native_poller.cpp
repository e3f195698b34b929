// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/detail/timer/native_poller.hpp>

#include <chronopool/detail/wakeup/kernel_timer_cost.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>

#include <algorithm>

namespace chronopool::detail {

duration native_poller::sleep_cost() const noexcept { return near_kernel_timer_cost() + latency_.get(); }

duration native_poller::threshold() const noexcept { return std::max(sleep_cost(), window()); }

duration native_poller::reach() const noexcept { return std::max(2 * sleep_cost(), window()); }

bool native_poller::covers(duration ahead) const noexcept {
  // With a slack (and no window), the wake-up's latency is what the slack
  // allows: only a deadline nearer than arming costs is polled for.
  if (slack() > duration::zero()) return ahead <= near_kernel_timer_cost();
  return ahead <= threshold() || (ahead <= reach() && running());
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
    for (const auto& s : *shards_) {
      const time_point gate = s->gate();
      if (gate <= now) {
        s->serve_due();  // its gate moves on: looked at again next turn
        near = true;
      } else if (gate <= horizon) {
        near = true;
      }
    }
    // Going on, without offering the CPU as the pool's spins do: a yield
    // hands a whole time slice to a thread that never blocks (a submitter),
    // and the near deadlines this poll serves are then that much late.
    if (near) return true;
    // Nothing near: stop, unless a shard published a near gate before it
    // could see the poll stop. Then go on, unless that shard already
    // started another poll.
    active_.store(false, std::memory_order_seq_cst);
    if (!any_gate_by(clock::now() + reach())) return false;
    if (active_.exchange(true, std::memory_order_seq_cst)) return false;
  }
}

}  // namespace chronopool::detail

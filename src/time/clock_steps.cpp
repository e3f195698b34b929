// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The process-wide registry of clock-step listeners and its watcher thread.
// See detail/time/clock_steps.hpp.
#include <chronopool/detail/platform/clock_step_watch.hpp>
#include <chronopool/detail/time/clock_steps.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace chronopool::detail {

namespace {

struct watcher {
  platform::clock_step_watch watch;
  std::thread thread;
};

class registry {
 public:
  void subscribe(clock_step_listener& l) {
    const std::lock_guard lock(mutex_);
    listeners_.push_back(&l);
    if (watcher_) return;
    try {
      auto w = std::make_unique<watcher>();
      w->thread = std::thread([this, raw = &w->watch] {
        while (raw->wait()) notify();
      });
      watcher_ = std::move(w);
    } catch (...) {
      listeners_.pop_back();
      throw;
    }
  }

  void unsubscribe(clock_step_listener& l) noexcept {
    std::unique_ptr<watcher> retired;
    {
      const std::lock_guard lock(mutex_);
      const auto it = std::find(listeners_.begin(), listeners_.end(), &l);
      if (it == listeners_.end()) return;
      listeners_.erase(it);
      if (listeners_.empty()) retired = std::move(watcher_);
    }
    // Joined outside the lock: the thread may be waiting for it to notify.
    // A step it reports meanwhile finds no listener (or new ones, which
    // re-computing costs nothing but time).
    if (retired) {
      retired->watch.interrupt();
      retired->thread.join();
    }
  }

  void notify() noexcept {
    steps_.fetch_add(1, std::memory_order_relaxed);
    const std::lock_guard lock(mutex_);
    for (clock_step_listener* l : listeners_) l->on_clock_step();
  }

  void inject(std::chrono::nanoseconds step) {
    offset_ns_.fetch_add(step.count(), std::memory_order_relaxed);
    notify();
  }

  void shift(std::chrono::nanoseconds step) noexcept { offset_ns_.fetch_add(step.count(), std::memory_order_relaxed); }

  std::int64_t offset_ns() const noexcept { return offset_ns_.load(std::memory_order_relaxed); }
  std::uint64_t steps() const noexcept { return steps_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  std::vector<clock_step_listener*> listeners_;
  std::unique_ptr<watcher> watcher_;
  std::atomic<std::int64_t> offset_ns_{0};
  std::atomic<std::uint64_t> steps_{0};
};

// Never destroyed: listeners (timer services of static io_contexts, say)
// may unsubscribe during static destruction, after a static registry would
// be gone. Its thread stops with its last listener.
registry& the_registry() {
  static registry* const r = new registry;
  return *r;
}

}  // namespace

sys_time system_now() noexcept {
  const std::int64_t offset = the_registry().offset_ns();
  const sys_time now = std::chrono::system_clock::now();
  if (offset == 0) return now;
  return now + std::chrono::duration_cast<sys_time::duration>(std::chrono::nanoseconds(offset));
}

time_point steady_deadline_for(sys_time instant) noexcept {
  if (instant == sys_time::max()) return time_point::max();  // "never" stays never
  // The two readings are adjacent; their skew (nanoseconds) is what a wall
  // clock deadline can be off by, besides the steps listeners re-compute.
  const time_point steady_now = clock::now();
  const sys_time wall_now = system_now();
  const duration until = saturating_sub(saturating_duration(instant.time_since_epoch()),
                                        saturating_duration(wall_now.time_since_epoch()));
  return deadline_after(steady_now, until);
}

void subscribe_clock_steps(clock_step_listener& l) { the_registry().subscribe(l); }

void unsubscribe_clock_steps(clock_step_listener& l) noexcept { the_registry().unsubscribe(l); }

void inject_clock_step(std::chrono::nanoseconds step) { the_registry().inject(step); }

void shift_system_now_unnoticed(std::chrono::nanoseconds step) noexcept { the_registry().shift(step); }

std::uint64_t clock_steps_seen() noexcept { return the_registry().steps(); }

}  // namespace chronopool::detail

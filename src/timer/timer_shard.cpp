// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A timer shard's set-up and shutdown: construction, the context and pool it
// serves, what it reports, and every wait dropped or aborted when it goes.
#include <chronopool/detail/timer/timer_shard.hpp>

#include "timer_shard_internal.hpp"

#include <chronopool/detail/timer/inline_abort_chunk.hpp>
#include <chronopool/timer_service_stats.hpp>

#include <mutex>
#include <stdexcept>
#include <utility>

namespace chronopool::detail {

// ---- set-up -------------------------------------------------------------------------

timer_shard::timer_shard(timer_service_base& service, native_poller& poller) : service_(service), poller_(poller) {
  // A timer keeps its home's address in 42 bits of a word (timer_impl).
  if ((timer_impl::word_of(this) & ~timer_impl::shard_mask) != 0) {
    throw std::runtime_error("chronopool: a timer shard's address does not fit a timer's word (over 2^48)");
  }
}

timer_shard::~timer_shard() {
  for (auto* list : {spare_chunks_, returned_chunks_.load(std::memory_order_acquire)}) {
    while (list != nullptr) {
      auto* const next = static_cast<inline_abort_chunk*>(list->link());
      delete list;
      list = next;
    }
  }
}

void timer_shard::set_context_executor(const asio_ns::any_io_executor& ex) {
  std::lock_guard lock(mutex_);
  if (!context_ex_) context_ex_.emplace(ex);
}

void timer_shard::use_pool(std::shared_ptr<pool_core> pool, bool context_is_pool) {
  std::lock_guard lock(mutex_);
  pool_ = std::move(pool);
  context_is_pool_ = context_is_pool;
}

std::uint64_t timer_shard::unlocked_starts() const {
  std::lock_guard lock(mutex_);
  return unlocked_starts_;
}

bool timer_shard::driven_by_pool() const {
  std::lock_guard lock(mutex_);
  return pool_ != nullptr;
}

std::size_t timer_shard::pending() const {
  std::lock_guard lock(mutex_);
  return pending_locked();
}

std::size_t timer_shard::pending_locked() const noexcept {
  // Waits in the inbox are started too. Only a lock holder takes them out,
  // so walking it under the lock is safe.
  std::size_t n = held_;
  for (const wait_node* p = inbox_.load(std::memory_order_acquire); p != nullptr; p = p->inbox_link()) ++n;
  return n;
}

void timer_shard::add_stats(timer_service_stats& s) const {
  std::lock_guard lock(mutex_);
  s.pending_waits += pending_locked();
  const std::uint64_t before = s.lateness_histogram.count();
  lateness_.add_to(s.lateness_histogram);
  // Every wait that fired was recorded, or dropped when its bucket's memory
  // could not be had.
  const std::uint64_t fired = s.lateness_histogram.count() - before + lateness_.dropped();
  s.completed_waits += fired - cancelled_fired_;
  s.cancelled_waits += cancelled_;
}

std::size_t timer_shard::index_bytes() const {
  std::lock_guard lock(mutex_);
  return index_.reserved_bytes();
}

// ---- shutdown -------------------------------------------------------------------------

void timer_shard::on_wakeup_cancelled(shard_wakeup& w, bool discard_waits) noexcept {
  wait_list dropped;
  task_ptr self;
  {
    after_unlock later(*this);
    std::lock_guard lock(mutex_);
    if (wakeup_.get() != &w || shutting_down_) return;
    self = std::move(wakeup_);
    publish_gate_locked();  // closed (unless a posted collect is on its way)
    drain_inbox_locked(later);  // what came before the gate closed goes too
    if (discard_waits) {
      // The pool is being destroyed: its waits go with it, uncalled.
      take_all_locked(dropped, later);
    } else {
      // A shutdown policy or shutdown_now(): every wait gets operation_aborted.
      // Waits of one timer come out in their list's order: each is then the
      // first of the timer the one before was aborted from.
      timer_impl* run = nullptr;
      while (index_node* n = index_.pop_first()) {
        auto& node = static_cast<wait_node&>(*n);
        if (node.is_inline()) {
          auto& t = static_cast<timer_impl&>(node);
          abort_inline_locked(t, later, true, false);
          run = t.first.load(std::memory_order_relaxed) != nullptr ? &t : nullptr;
          continue;
        }
        auto& op = static_cast<wait_op_base&>(node);
        const bool same_timer = run != nullptr && run->first.load(std::memory_order_relaxed) == &op;
        run = abort_locked(op, later, same_timer ? run : nullptr);
      }
    }
  }
  discard(dropped);
}

void timer_shard::take_all_locked(wait_list& out, after_unlock& later) noexcept {
  drain_inbox_locked(later);
  std::size_t n = 0;
  index_.clear([&](index_node& in) {
    auto& node = static_cast<wait_node&>(in);
    timer_impl* t = nullptr;
    if (node.is_inline()) {
      t = &static_cast<timer_impl&>(node);
      drop_inline_locked(*t, out, later);  // out of its timer
    } else {
      auto& op = static_cast<wait_op_base&>(node);
      t = op.timer();
      out.push_back(&op);
    }
    ++n;
    // Every queued wait goes, so every timer's list empties. Its fired
    // waits still linked (in delivery lists) are detached too: their
    // deliveries must not look for a timer that may be gone by then.
    if (t != nullptr) {
      for (wait_op_base* w = t->first.load(std::memory_order_relaxed); w != nullptr;) {
        wait_op_base* const after = w->next_wait();
        w->clear_timer();
        w = after;
      }
      t->last = nullptr;
      t->first.store(nullptr, std::memory_order_release);
    }
  });
  while (!batch_.empty()) out.push_back(batch_.pop_front());
  n += std::exchange(batch_waits_, 0);
  // Parked inline waits go too (fired or aborted ones were still held).
  for (timer_impl* t = parked_; t != nullptr; t = t->next_parked()) {
    if (t->parked() == timer_impl::parked_as::dropped) continue;
    t->set_parked(timer_impl::parked_as::dropped);
    ++n;
    later.drop_parked = true;
  }
  drain_posted_ = false;
  release_locked(n, later);
}

void timer_shard::shutdown() noexcept {
  wait_list dropped;
  std::unique_ptr<native_wakeup> native;
  {
    after_unlock later(*this);
    std::unique_lock lock(mutex_);
    shutting_down_ = true;  // from here on no wait starts and none is delivered here
    publish_gate_locked();  // closed: a wait pushed before drops with the rest
    // Deliveries under way on other threads (a pool thread handing fired
    // waits to this context) touch the context: it must outlive them.
    deliveries_done_.wait(lock, [&] { return in_flight_ == 0; });
    take_all_locked(dropped, later);
    later.superseded = std::move(wakeup_);
    native = std::move(native_);
    native_waiting_ = false;
    armed_ = false;
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  discard(dropped);  // Asio's rule: pending handlers are destroyed uncalled
  native.reset();
}
}  // namespace chronopool::detail

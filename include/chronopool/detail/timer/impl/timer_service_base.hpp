// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The inline members of timer_service_base: the paths that start a wait and
// the calling thread's shard. Included at the end of timer_service_base.hpp.
#pragma once

#include <chronopool/detail/timer/timer_service_base.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

template <class Handler, class IoExecutor>
inline void timer_service_base::async_wait(implementation_type& impl, Handler&& handler, const IoExecutor& io_ex) {
  start_wait(&impl, time_point(), std::forward<Handler>(handler), io_ex);
}

template <class Handler, class IoExecutor>
inline void timer_service_base::async_wait_at(time_point deadline, Handler&& handler, const IoExecutor& io_ex) {
  start_wait(nullptr, deadline, std::forward<Handler>(handler), io_ex);
}

template <class Handler, class IoExecutor>
inline void timer_service_base::start_wait(timer_impl* timer, time_point deadline, Handler&& handler,
                                           const IoExecutor& io_ex) {
  if (!context_known_.load(std::memory_order_acquire)) learn_executor(context_executor_of(io_ex));
  if (completes_directly(handler, io_ex, context_)) {
    launch<false>(timer, deadline, std::forward<Handler>(handler), io_ex);
  } else {
    launch<true>(timer, deadline, std::forward<Handler>(handler), io_ex);
  }
}

template <bool Routed, class Handler, class IoExecutor>
inline void timer_service_base::launch(timer_impl* timer, time_point deadline, Handler&& handler,
                                       const IoExecutor& io_ex) {
  // A standalone wait counts as a timer for use_pool(). Stored once: a
  // store on every wait would take the cache line (shared with
  // context_known_, which every wait reads) away from the other threads.
  if (!any_timer_.load(std::memory_order_relaxed)) any_timer_.store(true, std::memory_order_relaxed);
  timer_shard* shard = &local_shard();
  if (timer != nullptr) shard = &timer_shard::home_for_wait(*timer, *shard);
  if constexpr (!Routed && inline_capable<std::decay_t<Handler>, Handler&&>) {
    if (timer != nullptr && !asio_ns::get_associated_cancellation_slot(handler).is_connected() &&
        launch_inline<IoExecutor>(*timer, shard, std::forward<Handler>(handler))) {
      return;
    }
  }
  auto* op = make_wait_op<Routed>(std::forward<Handler>(handler), io_ex);
  wait_cancellation* cancellation = nullptr;
  try {
    cancellation = op->connect_cancellation(shard);
  } catch (...) {
    op->discard();
    throw;
  }
  if (timer == nullptr) op->set_deadline(deadline);
  for (;;) {
    timer_shard::start_result r{};
    try {
      r = shard->start(*op, timer);
    } catch (...) {
      op->abandon();
      throw;
    }
    if (r == timer_shard::start_result::started) return;
    if (r == timer_shard::start_result::refused) return op->abandon();  // the context is going: as Asio does
    // Another thread moved the idle timer meanwhile: start where it is now.
    shard = &timer_shard::home_for_wait(*timer, *shard);
    if (cancellation) cancellation->shard.store(shard);
  }
}

template <class IoExecutor, class Handler>
inline bool timer_service_base::launch_inline(timer_impl& timer, timer_shard* shard, Handler&& handler) {
  using stored = std::decay_t<Handler>;
  using ops = inline_wait_ops_for<stored, IoExecutor>;
  // Not while another wait of the timer is pending, linked or still on its
  // way to the shard's inbox (start_pending): the inline wait must be the
  // timer's oldest, which cancel_one() takes first.
  if (timer.first.load(std::memory_order_relaxed) != nullptr) return false;
  const std::uint16_t ops_id = ops::id();
  if (ops_id == 0 || !timer.try_claim_inline(ops_id)) return false;  // (it checks start_pending)
  ::new (timer.inline_storage()) stored(std::forward<Handler>(handler));  // cannot throw (inline_capable)
  for (;;) {
    timer_shard::start_result r{};
    try {
      r = shard->start(timer, &timer);
    } catch (...) {
      ops::destroy(timer.inline_storage());
      timer.free_inline();
      throw;
    }
    if (r == timer_shard::start_result::started) return true;
    if (r == timer_shard::start_result::refused) {
      // The context is going: dropped uncalled, as Asio does.
      ops::destroy(timer.inline_storage());
      timer.free_inline();
      return true;
    }
    // Another thread moved the timer meanwhile (it was idle before the
    // claim): start where it is now.
    shard = &timer_shard::home_for_wait(timer, *shard);
  }
}

inline timer_shard& timer_service_base::local_shard() noexcept {
  if (shards_.size() == 1) return *shards_.front();
  // The last few services this thread used, each with its shard, so that a
  // thread that arms timers of several contexts in turn keeps its shard in
  // each (a new shard would move its timers, under the lock, to a shard not
  // armed for them). A service that falls out gets a new, equally valid,
  // shard when it comes back; one destroyed and another made at its address
  // inherits the index, which is as valid (every service has as many shards).
  struct shard_choice {
    const timer_service_base* service;
    std::size_t index;
  };
  constexpr std::size_t remembered = 4;
  thread_local shard_choice recent[remembered] = {};
  thread_local std::size_t next_replaced = 0;
  for (const shard_choice& c : recent)
    if (c.service == this) return *shards_[c.index];
  shard_choice& c = recent[next_replaced];
  next_replaced = (next_replaced + 1) % remembered;
  c = {this, next_shard_.fetch_add(1, std::memory_order_relaxed) % shards_.size()};
  return *shards_[c.index];
}

}  // namespace chronopool::detail

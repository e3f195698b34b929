// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What a timer object holds: its state (timer_impl) and its executor, in as
// few words as the executor allows; the counterpart of Asio's
// io_object_impl. For any_io_executor (a small buffer and two function
// tables), a context's own executor (an io_context's or a
// scheduled_thread_pool's, no property preferred), which is how almost every
// timer is made, is not stored: get_executor() rebuilds it from the home
// shard's service. Any other executor is boxed with the state on the heap,
// the object's state word pointing at the box, tagged. Other executor types
// are stored beside the state.
#pragma once

#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/detail/timer/timer_shard.hpp>
#include <chronopool/detail/timer/wait_op.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace chronopool::detail {

/// Selects the constructor of a timer whose state move_timer() fills in.
struct moved_into_t {
  explicit moved_into_t() = default;
};
inline constexpr moved_into_t moved_into{};

/// The executor @p service's context gives out itself, for a timer that
/// does not store it (the context is an io_context or a scheduled_thread_pool,
/// known to the service from that timer's construction).
inline asio_ns::any_io_executor plain_executor(const timer_service_base& service) {
  if (asio_ns::io_context* io = service.own_io_context()) return io->get_executor();
  return service.own_pool()->get_executor();
}

/// Sets @p t as a timer_impl is before its first use (move_timer's target,
/// or a state given back by a moved-from box).
inline void reset_timer_impl(timer_impl& t) noexcept {
  t.set_home(nullptr);  // no home, no inline wait
  t.set_expiry(time_point{});
  t.first.store(nullptr, std::memory_order_relaxed);
  t.last = nullptr;
}

/// The state and the executor side by side.
template <class Executor>
class timer_object_impl {
 public:
  /// A new timer of @p service on @p ex.
  timer_object_impl(const Executor& ex, timer_service_base& service) : ex_(ex) { service.construct(impl_); }
  /// A timer on @p ex whose state move_timer() fills in next.
  timer_object_impl(const Executor& ex, moved_into_t) : ex_(ex) {}
  timer_object_impl(const timer_object_impl&) = delete;
  timer_object_impl& operator=(const timer_object_impl&) = delete;

  timer_impl& impl() noexcept { return impl_; }
  const timer_impl& impl() const noexcept { return impl_; }
  Executor get_executor() const { return ex_; }
  /// Calls @p f with the executor as a const Executor&.
  template <class F>
  decltype(auto) with_executor(F&& f) const {
    return std::forward<F>(f)(ex_);
  }
  /// Takes @p ex as the executor, for a state that move_timer() fills in next
  /// (the old state must have no pending wait). Strong guarantee.
  void reset_moved_into(const Executor& ex) {
    ex_ = ex;
    reset_timer_impl(impl_);
  }

 private:
  timer_impl impl_;
  Executor ex_;
};

template <>
class timer_object_impl<asio_ns::any_io_executor> {
  using executor = asio_ns::any_io_executor;
  /// A timer on an executor that is not its context's own: the executor with
  /// the state.
  struct boxed {
    explicit boxed(const executor& e) : ex(e) {}
    timer_impl impl;
    executor ex;
  };
  // In own_'s word (see timer_impl), where a live timer never sets it.
  static constexpr std::uintptr_t boxed_tag = 4;
  static constexpr std::uintptr_t box_flags = 7;
  static_assert(alignof(boxed) > box_flags);

 public:
  timer_object_impl(const executor& ex, timer_service_base& service) {
    if (is_plain(ex, service)) {
      service.construct(own_);
    } else {
      boxed* b = new boxed(ex);
      service.construct(b->impl);
      own_.set_raw_word(reinterpret_cast<std::uintptr_t>(b) | boxed_tag);
    }
  }
  timer_object_impl(const executor& ex, moved_into_t) {
    // is_plain() compares with what @p ex's own context gives out.
    if (!is_plain(ex, timer_service_of(ex))) {
      own_.set_raw_word(reinterpret_cast<std::uintptr_t>(new boxed(ex)) | boxed_tag);
    }
  }
  timer_object_impl(const timer_object_impl&) = delete;
  timer_object_impl& operator=(const timer_object_impl&) = delete;
  ~timer_object_impl() { delete box(); }

  timer_impl& impl() noexcept {
    boxed* b = box();
    return b != nullptr ? b->impl : own_;
  }
  const timer_impl& impl() const noexcept { return const_cast<timer_object_impl*>(this)->impl(); }

  executor get_executor() const {
    if (const boxed* b = box()) return b->ex;
    return plain_executor(own_.home(std::memory_order_relaxed)->service());
  }
  /// Calls @p f with the executor as a const any_io_executor& (rebuilt for
  /// the call, unless it is boxed).
  template <class F>
  decltype(auto) with_executor(F&& f) const {
    if (const boxed* b = box()) return std::forward<F>(f)(b->ex);
    const executor ex = plain_executor(own_.home(std::memory_order_relaxed)->service());
    return std::forward<F>(f)(ex);
  }
  /// Takes @p ex as the executor, for a state that move_timer() fills in next
  /// (the old state must have no pending wait). Strong guarantee.
  void reset_moved_into(const executor& ex) {
    timer_service_base& service = timer_service_of(ex);
    std::unique_ptr<boxed> b;
    if (!is_plain(ex, service)) b = std::make_unique<boxed>(ex);  // may throw: nothing changed yet
    delete box();
    reset_timer_impl(own_);
    if (b) own_.set_raw_word(reinterpret_cast<std::uintptr_t>(b.release()) | boxed_tag);
  }

 private:
  /// Whether @p ex is the executor @p service's context gives out itself
  /// (then it need not be stored); @p service is the one of @p ex's context.
  /// Only an executor equal to that one: one with a property preferred must
  /// come back from get_executor() with it.
  static bool is_plain(const executor& ex, timer_service_base& service) {
    if (const auto* io_ex = asio_compat::target<asio_ns::io_context::executor_type>(ex)) {
      asio_ns::io_context& io = io_ex->context();
      if (!(*io_ex == io.get_executor())) return false;
      if (service.own_io_context() == nullptr) service.set_own_io_context(io);
      return true;
    }
    if (const auto* pool_ex = asio_compat::target<scheduled_thread_pool::executor_type>(ex)) {
      scheduled_thread_pool& pool = asio_ns::query(*pool_ex, asio_ns::execution::context);
      return service.own_pool() == &pool && *pool_ex == pool.get_executor();
    }
    return false;
  }
  boxed* box() const noexcept {
    // Relaxed: in a plain timer other threads may change the word (its
    // home, its inline wait, start_pending), never the tag; in a boxed one
    // it is only changed by the thread that owns the object.
    const std::uintptr_t w = own_.state(std::memory_order_relaxed);
    return (w & boxed_tag) != 0 ? reinterpret_cast<boxed*>(w & ~box_flags) : nullptr;
  }

  timer_impl own_;  // the state of a plain timer; a boxed one's word points at its box
};

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_thread_pool::basic_executor_type — the pool's Asio executor.
//
// Modelled on asio_ns::thread_pool::basic_executor_type: properties that
// change the executor's type (blocking.always, outstanding_work.tracked) are
// template bits; the others (blocking.never, relationship.continuation) are
// run-time bits. Work submitted through it goes through the same delayed work
// queue as everything else, with a deadline of "now".
#pragma once

#include <chronopool/detail/config/asio.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace chronopool {

namespace detail {
struct pool_executor_bits {
  static constexpr unsigned int blocking_never = 1;
  static constexpr unsigned int blocking_always = 2;
  static constexpr unsigned int blocking_mask = 3;
  static constexpr unsigned int relationship_continuation = 4;
  static constexpr unsigned int outstanding_work_tracked = 8;
};
}  // namespace detail

/// The executor of a scheduled_thread_pool.
///
/// Submitted functions run on the pool's threads in the order they were
/// submitted; when scheduled tasks are due as well, the threads alternate
/// between the two, so neither starves the other. Executor work is how
/// operations in flight continue (a coroutine's next step, a timer's
/// completion), so it is still accepted after shutdown() and runs while the
/// pool drains; from shutdown_now() on, functions submitted through an
/// executor are destroyed without being invoked (those still queued too), as
/// handlers are after an Asio context stops. They are not tasks: an exception
/// escaping one goes to the pool's error handler without a task_view, and
/// they count in completed_task_count() but not in the lateness statistics.
/// (With before_execute, after_execute or a task_decorator configured they go
/// through the task queue instead, so that the hooks see them.) Tracked work
/// (outstanding_work.tracked, on_work_started; a timer service holds some
/// while it has waits) keeps a shut-down pool from terminating until it is
/// released, as it keeps io_context::run() from returning; join() therefore
/// waits for it.
template <class Allocator, unsigned int Bits>
class scheduled_thread_pool::basic_executor_type : detail::pool_executor_bits {
 public:
  basic_executor_type(const basic_executor_type& o) noexcept : pool_(o.pool_), allocator_(o.allocator_), bits_(o.bits_) {
    if constexpr ((Bits & outstanding_work_tracked) != 0)
      if (pool_) pool_->work_started();
  }
  basic_executor_type(basic_executor_type&& o) noexcept
      : pool_(o.pool_), allocator_(std::move(o.allocator_)), bits_(o.bits_) {
    if constexpr ((Bits & outstanding_work_tracked) != 0) o.pool_ = nullptr;
  }
  ~basic_executor_type() {
    if constexpr ((Bits & outstanding_work_tracked) != 0)
      if (pool_) pool_->work_finished();
  }
  basic_executor_type& operator=(const basic_executor_type& o) noexcept {
    if (this != &o) {
      basic_executor_type tmp(o);
      swap(tmp);
    }
    return *this;
  }
  basic_executor_type& operator=(basic_executor_type&& o) noexcept {
    if (this != &o) {
      basic_executor_type tmp(std::move(o));
      swap(tmp);
    }
    return *this;
  }

  // ---- require ----------------------------------------------------------------
  constexpr basic_executor_type<Allocator, Bits & ~blocking_mask> require(
      asio_ns::execution::blocking_t::possibly_t) const {
    return {pool_, allocator_, bits_ & ~blocking_mask};
  }
  constexpr basic_executor_type<Allocator, (Bits & ~blocking_mask) | blocking_always> require(
      asio_ns::execution::blocking_t::always_t) const {
    return {pool_, allocator_, bits_ & ~blocking_mask};
  }
  constexpr basic_executor_type<Allocator, Bits & ~blocking_mask> require(
      asio_ns::execution::blocking_t::never_t) const {
    return {pool_, allocator_, (bits_ & ~blocking_mask) | blocking_never};
  }
  constexpr basic_executor_type require(asio_ns::execution::relationship_t::fork_t) const {
    return {pool_, allocator_, bits_ & ~relationship_continuation};
  }
  constexpr basic_executor_type require(asio_ns::execution::relationship_t::continuation_t) const {
    return {pool_, allocator_, bits_ | relationship_continuation};
  }
  constexpr basic_executor_type<Allocator, Bits | outstanding_work_tracked> require(
      asio_ns::execution::outstanding_work_t::tracked_t) const {
    return {pool_, allocator_, bits_};
  }
  constexpr basic_executor_type<Allocator, Bits & ~outstanding_work_tracked> require(
      asio_ns::execution::outstanding_work_t::untracked_t) const {
    return {pool_, allocator_, bits_};
  }
  template <class OtherAllocator>
  constexpr basic_executor_type<OtherAllocator, Bits> require(
      asio_ns::execution::allocator_t<OtherAllocator> a) const {
    return {pool_, a.value(), bits_};
  }
  constexpr basic_executor_type<std::allocator<void>, Bits> require(asio_ns::execution::allocator_t<void>) const {
    return {pool_, std::allocator<void>(), bits_};
  }

  // ---- query --------------------------------------------------------------------
  static constexpr asio_ns::execution::mapping_t query(asio_ns::execution::mapping_t) noexcept {
    return asio_ns::execution::mapping.thread;
  }
  scheduled_thread_pool& query(asio_ns::execution::context_t) const noexcept { return *pool_; }
  constexpr asio_ns::execution::blocking_t query(asio_ns::execution::blocking_t) const noexcept {
    if constexpr ((Bits & blocking_always) != 0) return asio_ns::execution::blocking.always;
    return (bits_ & blocking_never) != 0 ? asio_ns::execution::blocking_t(asio_ns::execution::blocking.never)
                                         : asio_ns::execution::blocking_t(asio_ns::execution::blocking.possibly);
  }
  constexpr asio_ns::execution::relationship_t query(asio_ns::execution::relationship_t) const noexcept {
    return (bits_ & relationship_continuation) != 0
               ? asio_ns::execution::relationship_t(asio_ns::execution::relationship.continuation)
               : asio_ns::execution::relationship_t(asio_ns::execution::relationship.fork);
  }
  static constexpr asio_ns::execution::outstanding_work_t query(asio_ns::execution::outstanding_work_t) noexcept {
    if constexpr ((Bits & outstanding_work_tracked) != 0) return asio_ns::execution::outstanding_work.tracked;
    return asio_ns::execution::outstanding_work.untracked;
  }
  template <class OtherAllocator>
  constexpr Allocator query(asio_ns::execution::allocator_t<OtherAllocator>) const noexcept {
    return allocator_;
  }
  constexpr Allocator query(asio_ns::execution::allocator_t<void>) const noexcept { return allocator_; }
  /// The number of threads the pool keeps (its core size, at least 1).
  std::size_t query(asio_ns::execution::occupancy_t) const noexcept {
    return std::max<std::size_t>(1, pool_->core_pool_size());
  }

  /// True on one of the pool's threads.
  bool running_in_this_thread() const noexcept { return pool_->running_in_this_thread(); }

  friend bool operator==(const basic_executor_type& a, const basic_executor_type& b) noexcept {
    return a.pool_ == b.pool_ && a.allocator_ == b.allocator_ && a.bits_ == b.bits_;
  }

  // ---- the standard executor model ------------------------------------------------
  /// Runs @p f on the pool. blocking.possibly (the default) runs it at once
  /// when called on a pool thread; blocking.always waits for it to finish.
  template <class Function>
  void execute(Function&& f) const {
    using fn_type = std::decay_t<Function>;
    if constexpr ((Bits & blocking_always) != 0) {
      if (pool_->running_in_this_thread()) return invoke_here(std::forward<Function>(f));
      detail::task_ptr t = make(std::forward<Function>(f), allocator_);
      pool_->submit_from_executor(t);
      t->wait();
    } else {
      if ((bits_ & blocking_never) == 0 && pool_->running_in_this_thread()) {
        fn_type tmp(std::forward<Function>(f));
        return invoke_here(std::move(tmp));
      }
      // relationship.continuation is recorded and reported by query(); the
      // queue orders continuations like any other posted function.
      submit(std::forward<Function>(f), allocator_);
    }
  }

  // ---- the older (Networking TS) executor model --------------------------------------
  scheduled_thread_pool& context() const noexcept { return *pool_; }
  void on_work_started() const noexcept { pool_->work_started(); }
  void on_work_finished() const noexcept { pool_->work_finished(); }

  /// Runs @p f here if on a pool thread, else queues it.
  template <class Function, class OtherAllocator>
  void dispatch(Function&& f, const OtherAllocator& a) const {
    if (pool_->running_in_this_thread()) {
      std::decay_t<Function> tmp(std::forward<Function>(f));
      return invoke_here(std::move(tmp));
    }
    submit(std::forward<Function>(f), a);
  }
  /// Queues @p f; never runs it inside this call.
  template <class Function, class OtherAllocator>
  void post(Function&& f, const OtherAllocator& a) const {
    submit(std::forward<Function>(f), a);
  }
  /// Queues @p f as a continuation of the current work.
  template <class Function, class OtherAllocator>
  void defer(Function&& f, const OtherAllocator& a) const {
    submit(std::forward<Function>(f), a);
  }

 private:
  friend class scheduled_thread_pool;
  template <class, unsigned int>
  friend class basic_executor_type;

  constexpr basic_executor_type(scheduled_thread_pool* p, const Allocator& a, unsigned int bits) noexcept
      : pool_(p), allocator_(a), bits_(bits) {
    if constexpr ((Bits & outstanding_work_tracked) != 0)
      if (pool_) pool_->work_started();
  }

  void swap(basic_executor_type& o) noexcept {
    std::swap(pool_, o.pool_);
    std::swap(allocator_, o.allocator_);
    std::swap(bits_, o.bits_);
  }

  /// Queues @p f: as a plain posted function (one allocation, a FIFO lane),
  /// or, when the pool's hooks or task decorator must see it, as a task.
  template <class Function, class OtherAllocator>
  void submit(Function&& f, const OtherAllocator& a) const {
    if (pool_->runs_plain_functions()) {
      pool_->submit_function(detail::make_queued_function(std::forward<Function>(f), a));
    } else {
      pool_->submit_from_executor(make(std::forward<Function>(f), a));
    }
  }

  template <class Function, class OtherAllocator>
  static detail::task_ptr make(Function&& f, const OtherAllocator& a) {
    detail::task_ptr t = detail::make_one_shot_task(std::forward<Function>(f), a);
    t->set_reports_errors(true);
    return t;
  }

  template <class Function>
  void invoke_here(Function&& f) const {
    try {
      std::forward<Function>(f)();
    } catch (...) {
      pool_->report_executor_error(std::current_exception());
    }
  }

  scheduled_thread_pool* pool_;
  [[no_unique_address]] Allocator allocator_;
  unsigned int bits_;
};

inline scheduled_thread_pool::executor_type scheduled_thread_pool::get_executor() noexcept {
  return executor_type(this, std::allocator<void>(), 0);
}

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The waits of a context's system timers (basic_scheduled_timer<system_clock>),
// which follow steps of the wall clock.
//
// A wall wait is an ordinary timer-less wait of the engine (async_wait_at),
// armed at steady_deadline_for(its expiry), whose handler is a wrapper
// (wall_wait_handler) around the user's. Each wait has a record
// (wall_wait), linked into its timer's list (oldest first, for cancel and
// cancel_one) and into the context's list of pending wall waits, kept by
// one wall_clock_waits per timer service. The steady timers never see any
// of it: their state, their path and their size are untouched.
//
// A step of the system clock: the registry, subscribed to clock steps from
// the first wall wait until the context shuts down, posts one re-computation
// to the context. That cancels every pending engine wait of a wall wait
// through the cancellation signal the record owns, marked `retiming`; its
// wrapper, seeing the abort with that mark, arms it again at the steady
// deadline that now stands for its expiry (a passed one: at once). A wait
// whose engine wait fires while system_now() is still before its expiry
// (the step is not processed yet, or the steady deadline was a few
// nanoseconds short) is armed again the same way instead of completing: a
// wall wait never completes before its expiry by system_now().
//
// One lock per context (a recursive mutex: the engine destroys a handler it
// could not start, whose wrapper then unlinks its record, inside calls made
// under it) guards every record's links and state, and the signal of each:
// an engine wait is started, and its signal emitted, only under it. Lock
// order: this lock, then a shard's; the clock-step registry's lock is never
// held while this one is taken (on_clock_step only posts).
#pragma once

#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/detail/timer/timer_service_base.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace chronopool::detail {

class wall_clock_waits;
struct wall_timer_impl;

/// One pending wall wait. Owned by references: the wrapper carrying the
/// user's handler through the engine (one at a time), and the handler it
/// installs in the user's cancellation slot, if any.
struct wall_wait {
  enum class mark : std::uint8_t {
    armed,      ///< its engine wait is pending for the current steady deadline
    retiming,   ///< a step's re-computation cancelled the engine wait: arm again
    cancelled,  ///< cancelled by the timer or the user's slot: completes aborted
  };

  wall_wait(std::shared_ptr<wall_clock_waits> w, wall_timer_impl* t, sys_time e) noexcept
      : waits(std::move(w)), timer(t), expiry(e) {}

  void add_ref() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Guarded by the registry's lock.
  wall_wait* timer_prev = nullptr;
  wall_wait* timer_next = nullptr;
  wall_wait* all_prev = nullptr;
  wall_wait* all_next = nullptr;
  bool linked = false;  // in the lists (until its outcome is decided, or it is dropped)
  mark state = mark::armed;

  const std::shared_ptr<wall_clock_waits> waits;
  wall_timer_impl* timer;  // null once the timer let go of it (destroyed)
  const sys_time expiry;
  /// The engine wait's slot: emitted to move (retiming) or cancel it.
  asio_ns::cancellation_signal inner;
  std::atomic<int> refs{1};
};

/// What a system timer object holds besides its executor: the context's
/// registry, its expiry, and its pending waits, oldest first.
struct wall_timer_impl {
  wall_clock_waits* waits = nullptr;
  std::atomic<sys_time::rep> expiry{0};  // written under the registry's lock; read without it
  wall_wait* first = nullptr;            // guarded by the registry's lock
  wall_wait* last = nullptr;
  // The steady deadline that stood for `deadline_expiry` when the clock had
  // been stepped `deadline_steps` times: the waits of one timer armed with
  // no step between them share it, so they complete in the order they
  // started (the engine's order for equal deadlines).
  time_point deadline{};
  sys_time deadline_expiry{};
  std::uint64_t deadline_steps = ~std::uint64_t{0};

  sys_time load_expiry() const noexcept { return sys_time(sys_time::duration(expiry.load(std::memory_order_relaxed))); }
  void store_expiry(sys_time t) noexcept { expiry.store(t.time_since_epoch().count(), std::memory_order_relaxed); }
};

/// The handler of a wall wait's engine wait: the user's, and what it needs
/// to be armed again (its record, the I/O executor).
template <class Handler, class IoExecutor>
class wall_wait_handler {
 public:
  using cancellation_slot_type = asio_ns::cancellation_slot;  ///< the record's own signal

  wall_wait_handler(wall_wait* w, Handler&& h, const IoExecutor& io_ex)
      : wait_(w), handler_(std::move(h)), io_ex_(io_ex) {}
  wall_wait_handler(wall_wait_handler&& o) noexcept(std::is_nothrow_move_constructible_v<Handler> &&
                                                   std::is_nothrow_move_constructible_v<IoExecutor>)
      : wait_(std::exchange(o.wait_, nullptr)), handler_(std::move(o.handler_)), io_ex_(std::move(o.io_ex_)) {}
  wall_wait_handler(const wall_wait_handler&) = delete;
  wall_wait_handler& operator=(const wall_wait_handler&) = delete;
  wall_wait_handler& operator=(wall_wait_handler&&) = delete;
  /// Destroyed uncalled (the context is going, or a start failed): the
  /// user's handler goes uncalled too, and the record leaves the lists.
  ~wall_wait_handler();

  cancellation_slot_type get_cancellation_slot() const noexcept { return wait_->inner.slot(); }
  const Handler& handler() const noexcept { return handler_; }

  /// The engine wait completed: deliver, or arm again (see the file comment).
  void operator()(const sys_ns::error_code& ec);

 private:
  wall_wait* wait_;
  Handler handler_;
  IoExecutor io_ex_;
};

/// The registry of a context's wall waits (one per timer service, made with
/// it), and the clock-step listener that moves them.
class wall_clock_waits final : public clock_step_listener, public std::enable_shared_from_this<wall_clock_waits> {
 public:
  explicit wall_clock_waits(timer_service_base& service) noexcept : service_(service) {}
  wall_clock_waits(const wall_clock_waits&) = delete;
  wall_clock_waits& operator=(const wall_clock_waits&) = delete;
  ~wall_clock_waits();

  // ---- the system timer's operations -------------------------------------
  void construct(wall_timer_impl& t) noexcept {
    service_.note_timer();
    t.waits = this;
    t.store_expiry(sys_time{});
    t.first = t.last = nullptr;
    t.deadline_steps = ~std::uint64_t{0};
  }
  /// Cancels every pending wait of @p t and, with @p expiry, sets its expiry
  /// under the same lock; how many were cancelled.
  std::size_t cancel(wall_timer_impl& t, const sys_time* expiry);
  /// Cancels @p t's oldest pending wait; 0 or 1.
  std::size_t cancel_one(wall_timer_impl& t);
  /// Cancels @p t's waits and lets go of them (the timer is destroyed).
  void destroy(wall_timer_impl& t) { cancel(t, nullptr, true); }
  /// Moves @p from's expiry and waits into @p to (not constructed); @p from
  /// is left as newly constructed.
  void move_timer(wall_timer_impl& to, wall_timer_impl& from) noexcept;
  /// Starts a wait of @p t for its expiry. Strong guarantee.
  template <class Handler, class IoExecutor>
  void async_wait(wall_timer_impl& t, Handler&& handler, const IoExecutor& io_ex);

  // ---- for the wrappers -----------------------------------------------------
  enum class verdict : std::uint8_t { rearm, success, aborted };
  /// The engine wait of @p w completed with @p ec: what becomes of it. Every
  /// verdict but rearm takes it out of the lists. Under the lock.
  verdict decide_locked(wall_wait& w, const sys_ns::error_code& ec) noexcept;
  /// The steady deadline to arm @p w at: its timer's shared one while no
  /// step came since it was computed (and, with @p after_due, while it has
  /// not passed: then a wait came due short of its expiry by the wall
  /// clock, and a new one is computed). Under the lock.
  time_point deadline_locked(wall_wait& w, bool after_due) noexcept;
  /// A wrapper destroyed uncalled: @p w leaves the lists.
  void drop(wall_wait& w) noexcept;
  std::recursive_mutex& mutex() noexcept { return mutex_; }
  timer_service_base& service() noexcept { return service_; }

  // ---- steps ------------------------------------------------------------------
  void on_clock_step() noexcept override;
  /// The context's manual clock stepped its system time: as a real step.
  void on_manual_step() noexcept;
  /// On a thread of the context: moves every pending wall wait (see the
  /// file comment).
  void retime() noexcept;
  /// The context is going: no more steps are followed.
  void shutdown() noexcept;
  /// Wall waits pending (started, not yet delivered), for tests.
  std::size_t pending() const;

 private:
  std::size_t cancel(wall_timer_impl& t, const sys_time* expiry, bool let_go);
  /// Subscribes to clock steps, posting re-computations to @p ex.
  void ensure_subscribed(const asio_ns::any_io_executor& ex);
  void link_locked(wall_wait& w) noexcept;
  void unlink_locked(wall_wait& w) noexcept;
  /// Marks @p w cancelled and cancels its engine wait.
  static void cancel_locked(wall_wait& w) noexcept;

  timer_service_base& service_;
  mutable std::recursive_mutex mutex_;
  wall_wait* all_first_ = nullptr;  // every linked wall wait, oldest (or last armed again) first
  wall_wait* all_last_ = nullptr;
  std::size_t linked_ = 0;

  std::atomic<bool> subscribed_{false};
  std::mutex subscribe_mutex_;  // orders subscription and shutdown
  bool shut_down_ = false;      // under subscribe_mutex_
  std::optional<asio_ns::any_io_executor> post_ex_;  // set before subscribing, untracked
  std::atomic<bool> retime_posted_{false};
};

/// Blocks until the system time of @p service's context reaches the expiry
/// that @p expiry returns for @p timer (read again after every wake-up),
/// woken early by each step of the system clock: a system timer's wait().
/// On a manual clock the system time is the virtual one: it waits for
/// another thread to advance or step the clock.
void wait_for_wall_expiry(const timer_service_base& service, sys_time (*expiry)(const void*), const void* timer);

// ---- templates ----------------------------------------------------------------

template <class Handler, class IoExecutor>
wall_wait_handler<Handler, IoExecutor>::~wall_wait_handler() {
  if (wait_ != nullptr) {
    wall_wait* w = std::exchange(wait_, nullptr);
    w->waits->drop(*w);
    w->release();
  }
}

template <class Handler, class IoExecutor>
void wall_wait_handler<Handler, IoExecutor>::operator()(const sys_ns::error_code& ec) {
  wall_wait* w = wait_;
  wall_clock_waits& waits = *w->waits;
  wall_clock_waits::verdict v{};
  {
    const std::lock_guard lock(waits.mutex());
    const bool moved = w->state == wall_wait::mark::retiming;
    v = waits.decide_locked(*w, ec);
    if (v == wall_clock_waits::verdict::rearm) {
      w->state = wall_wait::mark::armed;
      const time_point deadline = waits.deadline_locked(*w, !moved);
      // The engine calls no handler inside the start; if the start throws,
      // this wrapper is destroyed uncalled (it unlinks the record, under
      // this recursive lock) and the exception leaves the handler call.
      const IoExecutor io_ex = io_ex_;
      waits.service().async_wait_at(deadline, std::move(*this), io_ex);
      return;
    }
  }
  // Decided: the record is out of the lists; the user's slot lets go of it.
  wait_ = nullptr;
  if (auto slot = asio_ns::get_associated_cancellation_slot(handler_); slot.is_connected()) slot.clear();
  w->release();
  Handler h(std::move(handler_));
  std::move(h)(v == wall_clock_waits::verdict::success
                   ? sys_ns::error_code()
                   : (ec ? ec : sys_ns::error_code(asio_ns::error::operation_aborted)));
}

/// The handler a wall wait installs in the user's cancellation slot.
struct wall_wait_user_cancel {
  explicit wall_wait_user_cancel(wall_wait* w) noexcept : wait(w) { w->add_ref(); }
  wall_wait_user_cancel(const wall_wait_user_cancel&) = delete;
  wall_wait_user_cancel& operator=(const wall_wait_user_cancel&) = delete;
  ~wall_wait_user_cancel() { wait->release(); }
  void operator()(asio_ns::cancellation_type_t type) noexcept;
  wall_wait* wait;
};

template <class Handler, class IoExecutor>
void wall_clock_waits::async_wait(wall_timer_impl& t, Handler&& handler, const IoExecutor& io_ex) {
  using stored = std::decay_t<Handler>;
  if (!subscribed_.load(std::memory_order_acquire)) ensure_subscribed(asio_ns::any_io_executor(io_ex));
  auto* w = new wall_wait(shared_from_this(), &t, t.load_expiry());
  std::optional<wall_wait_handler<stored, IoExecutor>> wrapper;
  try {
    wrapper.emplace(w, stored(std::forward<Handler>(handler)), io_ex);
  } catch (...) {
    w->release();
    throw;
  }
  // From here on the wrapper owns the record: destroyed uncalled, it lets go of it.
  auto user_slot = asio_ns::get_associated_cancellation_slot(wrapper->handler());
  if (user_slot.is_connected()) user_slot.template emplace<wall_wait_user_cancel>(w);
  try {
    const std::lock_guard lock(mutex_);
    link_locked(*w);
    service_.async_wait_at(deadline_locked(*w, false), std::move(*wrapper), io_ex);
  } catch (...) {
    // The wrapper, destroyed uncalled (by the engine, or here on the way
    // out), unlinks the record.
    if (user_slot.is_connected()) user_slot.clear();
    throw;
  }
}

}  // namespace chronopool::detail

CHRONOPOOL_ASIO_NAMESPACE_BEGIN

/// A wall wait's wrapper completes on its user handler's executor.
template <class Handler, class IoExecutor, class Executor>
struct associated_executor<chronopool::detail::wall_wait_handler<Handler, IoExecutor>, Executor> {
  using type = associated_executor_t<Handler, Executor>;
  static type get(const chronopool::detail::wall_wait_handler<Handler, IoExecutor>& h,
                  const Executor& ex = Executor()) noexcept {
    return get_associated_executor(h.handler(), ex);
  }
};

/// ... and allocates with its user handler's allocator.
template <class Handler, class IoExecutor, class Allocator>
struct associated_allocator<chronopool::detail::wall_wait_handler<Handler, IoExecutor>, Allocator> {
  using type = associated_allocator_t<Handler, Allocator>;
  static type get(const chronopool::detail::wall_wait_handler<Handler, IoExecutor>& h,
                  const Allocator& a = Allocator()) noexcept {
    return get_associated_allocator(h.handler(), a);
  }
};

CHRONOPOOL_ASIO_NAMESPACE_END

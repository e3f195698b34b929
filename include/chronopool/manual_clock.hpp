// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool::manual_clock — virtual time for testing the timers of an io_context.
#pragma once

#include <chronopool/detail/time/manual_time.hpp>
#include <chronopool/detail/time/saturating_time.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace chronopool {

namespace detail {
class timer_service_base;
class manual_clock_idle_hook;
}  // namespace detail

/// Virtual time for one io_context's chronopool timers, so that tests of
/// timeouts, retries and periodic code run at once and the same way every
/// time. Get one with use_manual_clock(io) before the first timer of @p io
/// exists; production code is unchanged (it keeps using steady_timer,
/// system_timer, periodic_timer, sleep_for, cancel_after and periodic
/// handlers on the context's executors, which then read the manual clock).
///
/// Time moves when the test says so, or when the context has nothing else
/// to do (auto-advance, below). The clock can drive the context itself, on
/// the calling thread, with io_context::poll(): advance(), run_for(),
/// run_until_idle() and the wall steps run every handler that becomes
/// ready, then move the time to the next deadline, and so on. Each call
/// restarts the context first and returns early if a handler calls
/// io.stop().
///
/// - advance(d) completes every wait due up to now() + d in deadline order
///   (FIFO among equal deadlines), each handler seeing now() equal to its
///   own deadline: a 10 ms periodic timer advanced by 1 s runs 100 times.
/// - run_until_idle() auto-advances: while the context has nothing ready
///   and waits only on time, the time jumps to the next deadline (tokio's
///   rule), so `co_await sleep_for(1h)` returns at once. It returns when no
///   wait is pending; a periodic schedule never ends, so use advance() there.
/// - Auto-advance without a driver (on by default, as with tokio's paused
///   clock): a plain io.run(), run_one() or run_for() of the context jumps
///   the time to the next deadline whenever the thread running it has no
///   handler ready (none running, none posted and not yet run) and no I/O
///   is ready, so a coroutine's `co_await async_sleep_for(1h)` under
///   io.run() returns at once, with now() moved by exactly 1 h. poll() and
///   the driver's calls never jump on their own. This needs the context to
///   be run by one thread (with several, one may be idle while another
///   runs a handler: turn auto_advance off and drive the clock), and
///   use_manual_clock() called before any I/O object of the context exists
///   (the hook is the context's reactor); otherwise auto-advance is off and
///   auto_advance(true) throws std::logic_error.
/// - set_system_time() and step_system_time() step the wall clock that
///   system_timer reads on this context: waits whose expiry passed complete,
///   later ones move with the clock.
///
/// With the context run by one thread (the caller), the same test gives the
/// same order of completions and the same virtual timestamps on every run.
/// A scheduled_thread_pool has a clock of its own (pool_manual_clock, through
/// scheduled_thread_pool_options::use_manual_clock); an io_context's timers
/// cannot be routed to a pool (use_pool) while either runs on a manual clock.
///
/// @par Thread Safety
/// now() and system_now() from any thread. The other members from one
/// thread at a time, never from a thread running the context (a handler):
/// they run the context themselves; stall() is the exception.
class manual_clock {
 public:
  using duration = std::chrono::steady_clock::duration;      ///< nanoseconds
  using time_point = std::chrono::steady_clock::time_point;  ///< steady_clock's time point
  using system_time_point = std::chrono::system_clock::time_point;  ///< system_clock's time point

  manual_clock(const manual_clock&) = delete;             ///< one per context, owned by it
  manual_clock& operator=(const manual_clock&) = delete;  ///< one per context, owned by it
  /// Destroyed with its io_context.
  ~manual_clock();

  /// The virtual steady time: what steady timers, sleeps and periodic
  /// handlers on the context see as now. Starts at the real steady time of
  /// the attach and only moves forward.
  time_point now() const noexcept { return time_.now(); }
  /// The virtual system time: the real system time of the attach, moved by
  /// advance() and by the wall steps.
  system_time_point system_now() const noexcept { return time_.system_now(); }
  /// The io_context this clock drives.
  asio_ns::io_context& context() const noexcept { return io_; }

  /// Runs the handlers ready now, then moves the time forward by @p d, one
  /// deadline at a time, completing the waits due at each (and running what
  /// they make ready) before it moves on. Any unit, saturating; a negative
  /// @p d throws std::invalid_argument.
  template <class Rep, class Period>
  void advance(std::chrono::duration<Rep, Period> d) {
    drive(checked(d, "advance"), false);
  }
  /// Moves the time forward by @p d and runs nothing: a handler that calls
  /// it takes @p d of virtual time (a long run, a blocked thread), so the
  /// waits due meanwhile complete late, in deadline order, once the
  /// context runs again. The one control callable from a handler of the
  /// context. Any unit, saturating; a negative @p d throws
  /// std::invalid_argument.
  template <class Rep, class Period>
  void stall(std::chrono::duration<Rep, Period> d) {
    const duration by = checked(d, "stall");
    time_.set_now(detail::saturating_add(now(), by));
  }
  /// advance(@p d), returning how many functions the context ran
  /// (io_context::poll's count, the service's own collects among them): the
  /// virtual-time counterpart of io_context::run_for.
  template <class Rep, class Period>
  std::size_t run_for(std::chrono::duration<Rep, Period> d) {
    return drive(checked(d, "run_for"), false);
  }
  /// Runs the context with auto-advance until nothing is ready and no timer
  /// wait is pending (a wait that never expires does not count); returns
  /// how many functions it ran. With a periodic schedule pending it does
  /// not return: use advance().
  std::size_t run_until_idle() { return drive(duration::max(), true); }

  /// Turns auto-advance without a driver on or off (see the class
  /// comment). Turning it on throws std::logic_error when the context
  /// cannot have it (its reactor existed before use_manual_clock).
  void auto_advance(bool on);
  /// Whether auto-advance without a driver is on.
  bool auto_advance() const noexcept { return auto_advance_.load(std::memory_order_acquire); }
  /// How many times auto-advance without a driver moved the time so far.
  std::uint64_t auto_advances() const noexcept { return auto_advances_.load(std::memory_order_acquire); }

  /// Steps the virtual system clock to @p t (back or forth), as NTP or
  /// `date -s` would, and runs what that makes ready (system timer waits
  /// whose expiry passed complete with success). Returns what
  /// io_context::poll counted. The steady time does not move. As with
  /// poll(), a context left without work is stopped: call io.restart()
  /// before a later io.run().
  std::size_t set_system_time(system_time_point t);
  /// set_system_time(system_now() + @p step); any unit, saturating; either sign.
  template <class Rep, class Period>
  std::size_t step_system_time(std::chrono::duration<Rep, Period> step) {
    return step_by(detail::saturating_duration(step, "step_system_time step"));
  }

 private:
  friend class detail::timer_service_base;
  friend class detail::manual_clock_idle_hook;
  friend manual_clock& use_manual_clock(asio_ns::io_context& io);
  manual_clock(asio_ns::io_context& io, detail::timer_service_base& service) noexcept;

  template <class Rep, class Period>
  static duration checked(std::chrono::duration<Rep, Period> d, const char* what) {
    const duration n = detail::saturating_duration(d, what);
    if (n < duration::zero()) throw_negative(what, n);
    return n;
  }
  [[noreturn]] static void throw_negative(const char* what, duration d);
  /// Runs the context, moving the time one deadline at a time up to
  /// now() + @p by (saturating), or, @p to_idle, while any wait is pending.
  std::size_t drive(duration by, bool to_idle);
  /// io.restart(), io.poll(); refused from a thread running the context.
  std::size_t poll_ready(const char* what);
  std::size_t step_by(duration step);
  /// The idle hook's call, on the thread that would block running the
  /// context: moves the time to the first deadline pending and has the
  /// shards post their collect; false (nothing done) when no wait is pending
  /// or the context is stopped.
  bool advance_when_idle();

  asio_ns::io_context& io_;
  detail::timer_service_base& service_;
  detail::manual_time time_;
  detail::manual_clock_idle_hook* idle_hook_ = nullptr;  // the context's reactor, when use_manual_clock made it
  std::atomic<bool> auto_advance_{false};
  std::atomic<std::uint64_t> auto_advances_{0};
};

/// Puts @p io's chronopool timers on a manual clock and returns it (owned
/// by @p io, destroyed with it); the same clock when called again. Call it
/// before the first chronopool timer, sleep or periodic handler of @p io
/// exists, and not with use_pool(io, pool): both throw std::logic_error.
manual_clock& use_manual_clock(asio_ns::io_context& io);

/// The manual clock of @p io; std::logic_error when @p io runs on the real
/// clock (use_manual_clock was not called for it).
manual_clock& manual_clock_of(asio_ns::io_context& io);

/// Whether @p io's chronopool timers run on a manual clock.
bool has_manual_clock(asio_ns::io_context& io);

}  // namespace chronopool

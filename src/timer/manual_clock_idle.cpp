// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Auto-advance of an io_context's manual clock without a driver: a reactor
// that, when a thread of io_context::run() would block in it, offers the
// clock the chance to move the virtual time to the next deadline first
// (tokio's park with a paused clock).
//
// Asio's scheduler runs its task (the reactor) with a blocking timeout only
// when its queue holds nothing but the task: no handler is ready, none was
// posted and not yet run. That is the one moment an io_context says "idle"
// and the one place a hook fits, so the hook is the reactor itself: a
// subclass registered under the reactor's service key before anything
// makes the real one. It relies on Asio's detail layer (scheduler_task's
// virtual run, the reactor typedef, scheduler::init_task), which the tests
// of auto-advance check on every build.
#include "manual_clock_idle.hpp"

#include <chronopool/manual_clock.hpp>

#include <chronopool/detail/config/asio.hpp>
#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/detail/reactor.hpp>
#include <asio/detail/scheduler.hpp>
#else
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/scheduler.hpp>
#endif

#include <atomic>

namespace chronopool::detail {

#if !defined(CHRONOPOOL_ASIO_HAS_REACTOR_TASK)

class manual_clock_idle_hook {};

manual_clock_idle_hook* install_manual_clock_idle_hook(asio_ns::io_context&) { return nullptr; }

void connect_manual_clock_idle_hook(manual_clock_idle_hook&, manual_clock*) noexcept {}

#else

class manual_clock_idle_hook final : public asio_ns::detail::reactor {
 public:
  using base = asio_ns::detail::reactor;
  using op_queue = asio_ns::detail::op_queue<asio_ns::detail::scheduler_operation>;

  explicit manual_clock_idle_hook(asio_ns::io_context& io) : base(io) {}

  void connect(manual_clock* c) noexcept { clock_.store(c, std::memory_order_release); }

  /// The scheduler's call: @p usec is 0 while handlers are ready (or from
  /// poll()), else the thread found nothing to run and would block.
  void run(long usec, op_queue& ops) override {
    manual_clock* const c = clock_.load(std::memory_order_acquire);
    if (usec == 0 || c == nullptr || !c->auto_advance()) return base::run(usec, ops);
    // Idle, as far as handlers go. The descriptors first, without blocking:
    // I/O that is ready is work, and runs before the time moves.
    op_queue ready;
    base::run(0, ready);
    if (!ready.empty()) {
      ops.push(ready);
      return;
    }
    // Only waiting: on time (the clock moves it and posts the collect, which
    // the scheduler runs next), or on I/O and nothing else (block as usual).
    if (c->advance_when_idle()) return;
    base::run(usec, ops);
  }

 private:
  std::atomic<manual_clock*> clock_{nullptr};
};

manual_clock_idle_hook* install_manual_clock_idle_hook(asio_ns::io_context& io) {
  if (asio_ns::has_service<asio_ns::detail::reactor>(io)) return nullptr;
  auto* hook = new manual_clock_idle_hook(io);
  // add_service takes ownership only when it succeeds (it throws before
  // linking the service in otherwise).
  try {
    asio_ns::add_service<asio_ns::detail::reactor>(io, hook);
  } catch (...) {
    delete hook;
    throw;
  }
  // A context without an I/O object has no task yet: its idle threads
  // would sleep on the scheduler's condition variable, never in the hook.
  asio_ns::use_service<asio_ns::detail::scheduler>(io).init_task();
  return hook;
}

void connect_manual_clock_idle_hook(manual_clock_idle_hook& hook, manual_clock* c) noexcept {
  hook.connect(c);
}

#endif

}  // namespace chronopool::detail

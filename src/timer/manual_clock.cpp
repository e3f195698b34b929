// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// manual_clock: attaching virtual time to an io_context's timer service, and
// the driver that runs the context while it moves that time, one deadline at
// a time.
#include <chronopool/manual_clock.hpp>

#include <chronopool/detail/timer/timer_service_base.hpp>
#include <chronopool/detail/timer/wall_clock_waits.hpp>
#include <chronopool/timer_service.hpp>

#include "manual_clock_idle.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace chronopool {

manual_clock::manual_clock(asio_ns::io_context& io, detail::timer_service_base& service) noexcept
    : io_(io), service_(service) {}

manual_clock::~manual_clock() {
  // The hook (the context's reactor) outlives the timer service, which
  // owns this clock: services go newest first.
  if (idle_hook_ != nullptr) detail::connect_manual_clock_idle_hook(*idle_hook_, nullptr);
}

void manual_clock::auto_advance(bool on) {
  if (on && idle_hook_ == nullptr)
    throw std::logic_error("chronopool::manual_clock::auto_advance: this io_context's reactor existed before "
                           "use_manual_clock(io) (an I/O object or Asio timer of it was made first), so the clock "
                           "cannot see when the context is idle; call use_manual_clock first, or drive the clock");
  auto_advance_.store(on, std::memory_order_release);
}

bool manual_clock::advance_when_idle() {
  if (io_.stopped()) return false;
  const std::optional<time_point> next = service_.manual_first_deadline();
  if (!next) return false;
  // The first deadline exactly, never past it: each handler due there runs
  // with now() at its own deadline, in (deadline, start) order.
  if (*next > now()) {
    time_.set_now(*next);
    auto_advances_.fetch_add(1, std::memory_order_acq_rel);
  }
  service_.manual_time_moved();
  return true;
}

void manual_clock::throw_negative(const char* what, duration d) {
  throw std::invalid_argument(fmt::format("chronopool::manual_clock::{}: the duration must not be negative (was {})",
                                          what, d));
}

std::size_t manual_clock::poll_ready(const char* what) {
  if (io_.get_executor().running_in_this_thread())
    throw std::logic_error(fmt::format("chronopool::manual_clock::{}: called from a thread running the clock's "
                                       "io_context; the clock runs the context itself: call it from the test's thread",
                                       what));
  io_.restart();
  return io_.poll();
}

std::size_t manual_clock::drive(duration by, bool to_idle) {
  const char* what = to_idle ? "run_until_idle" : "advance";
  const time_point target = to_idle ? time_point::max() : detail::saturating_add(now(), by);
  std::size_t ran = poll_ready(what);
  for (;;) {
    const std::optional<time_point> next = service_.manual_first_deadline();
    if (!next || *next > target) break;
    // A handler called io.stop() (the context holds work while waits are
    // pending, so it did not run out of it): stop here, as run() would.
    if (io_.stopped()) return ran;
    if (*next > now()) time_.set_now(*next);
    service_.manual_time_moved();
    const std::size_t n = poll_ready(what);
    ran += n;
    if (n == 0) break;  // nothing collected at a due deadline: never loop on it
  }
  // Stopped with waits pending (which hold work): a handler's io.stop(),
  // and the time stays where that handler ran. Stopped without any: the
  // context only ran out of work.
  if (!to_idle && !(io_.stopped() && service_.pending() != 0)) time_.set_now(target);
  return ran;
}

std::size_t manual_clock::set_system_time(system_time_point t) {
  const duration step = detail::saturating_sub(detail::saturating_duration(t.time_since_epoch(), "set_system_time time"),
                                               detail::saturating_duration(system_now().time_since_epoch(), "system time"));
  return step_by(step);
}

std::size_t manual_clock::step_by(duration step) {
  time_.step_system(step);
  service_.wall_waits().on_manual_step();
  return poll_ready("step_system_time");
}

manual_clock& use_manual_clock(asio_ns::io_context& io) {
  // The idle hook is the context's reactor, made before the timer service,
  // whose native timers would make the real one. A second call finds the
  // service (and the clock) there already.
  detail::manual_clock_idle_hook* hook = nullptr;
  if (!asio_ns::has_service<timer_service>(io)) hook = detail::install_manual_clock_idle_hook(io);
  manual_clock& attached = asio_ns::use_service<timer_service>(io).attach_manual_clock(io);
  if (hook != nullptr && attached.idle_hook_ == nullptr) {
    attached.idle_hook_ = hook;
    attached.auto_advance_.store(true, std::memory_order_release);  // tokio's paused clock auto-advances
    detail::connect_manual_clock_idle_hook(*hook, &attached);
  }
  return attached;
}

manual_clock& manual_clock_of(asio_ns::io_context& io) {
  if (asio_ns::has_service<timer_service>(io)) {
    if (manual_clock* c = asio_ns::use_service<timer_service>(io).attached_manual_clock()) return *c;
  }
  throw std::logic_error("chronopool::manual_clock_of: this io_context runs on the real clock "
                         "(call chronopool::use_manual_clock(io) before its first timer)");
}

bool has_manual_clock(asio_ns::io_context& io) {
  return asio_ns::has_service<timer_service>(io) &&
         asio_ns::use_service<timer_service>(io).attached_manual_clock() != nullptr;
}

namespace detail {

manual_clock& timer_service_base::attach_manual_clock(asio_ns::io_context& io) {
  if (manual_clock_) return *manual_clock_;
  if (pool_set_.load())
    throw std::logic_error("chronopool::use_manual_clock: this context's timers use a pool (use_pool); "
                           "a manual clock drives an io_context's own timers only");
  if (any_timer_.load() || context_known_.load())
    throw std::logic_error("chronopool::use_manual_clock: call it before the first timer, sleep or periodic "
                           "handler of the context exists");
  manual_clock_.reset(new manual_clock(io, *this));
  // One shard: every wait in one index, so a one-thread test completes
  // them in one total (deadline, start) order. No timer exists yet, so no
  // thread holds a shard of this service.
  shards_.resize(1);
  shards_.front()->use_manual_time(&manual_clock_->time_);
  manual_.store(&manual_clock_->time_, std::memory_order_release);
  manual_clocks_attached.fetch_add(1, std::memory_order_relaxed);
  return *manual_clock_;
}

std::optional<time_point> timer_service_base::manual_first_deadline() const {
  std::optional<time_point> first;
  for (const auto& shard : shards_) {
    const std::optional<time_point> t = shard->manual_first_deadline();
    if (t && (!first || *t < *first)) first = t;
  }
  return first;
}

void timer_service_base::manual_time_moved() {
  for (const auto& shard : shards_) shard->manual_time_moved();
}

}  // namespace detail

}  // namespace chronopool

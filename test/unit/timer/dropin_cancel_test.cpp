// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The drop-in suite, cancellation: cancel() and cancel_one() counts, new
// expiries, destruction, per-operation cancellation, cancels from handlers.
#include "dropin_support.hpp"

BOOST_AUTO_TEST_SUITE(dropin)

BOOST_AUTO_TEST_CASE_TEMPLATE(cancel_returns_count_and_aborts_all, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, far_away);
  BOOST_TEST(t.cancel() == 0u);
  outcome a, b, c;
  t.async_wait(a.handler());
  t.async_wait(b.handler());
  t.async_wait(c.handler());
  BOOST_TEST(t.cancel() == 3u);
  BOOST_TEST(t.cancel() == 0u);
  BOOST_TEST(a.calls == 0);  // not inside cancel()
  BOOST_TEST(run_bounded(io));
  for (outcome* o : {&a, &b, &c}) {
    BOOST_TEST(o->calls == 1);
    BOOST_TEST((o->ec == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(cancel_one_cancels_only_the_oldest, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 20ms);
  BOOST_TEST(t.cancel_one() == 0u);
  outcome a, b, c;
  t.async_wait(a.handler());
  t.async_wait(b.handler());
  t.async_wait(c.handler());
  BOOST_TEST(t.cancel_one() == 1u);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(a.calls == 1);
  BOOST_TEST((a.ec == asio::error::operation_aborted));
  BOOST_TEST(b.calls == 1);
  BOOST_TEST(!b.ec);
  BOOST_TEST(c.calls == 1);
  BOOST_TEST(!c.ec);
  BOOST_TEST((a.at < b.at));  // the aborted one did not wait for the expiry
  BOOST_TEST((b.at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(completed_waits_are_not_counted_by_later_cancels, Timer, timer_types) {
  // A wait that completed stays out of later counts, whether it was the
  // oldest (cancel_one then takes the next) or followed by new waits.
  asio::io_context io;
  Timer t(io, Timer::clock_type::now());  // already expired
  outcome done_wait;
  t.async_wait(done_wait.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(done_wait.calls == 1);
  BOOST_TEST(!done_wait.ec);
  io.restart();

  // Still expired, but not run yet: the new wait is pending, the old one
  // is not (and must not be "cancelled" instead of it).
  outcome again;
  t.async_wait(again.handler());
  BOOST_TEST(t.cancel_one() == 1u);
  BOOST_TEST(t.cancel_one() == 0u);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(again.calls == 1);
  BOOST_TEST((again.ec == asio::error::operation_aborted));
  io.restart();

  t.expires_at(Timer::clock_type::now() + far_away);
  outcome a, b;
  t.async_wait(a.handler());
  t.async_wait(b.handler());
  BOOST_TEST(t.cancel_one() == 1u);  // a, the oldest pending
  BOOST_TEST(t.cancel() == 1u);      // b only
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((a.ec == asio::error::operation_aborted));
  BOOST_TEST((b.ec == asio::error::operation_aborted));
  BOOST_TEST(done_wait.calls == 1);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(expires_after_and_at_return_count_cancelled, Timer, timer_types) {
  asio::io_context io;
  Timer t(io);
  BOOST_TEST(t.expires_after(far_away) == 0u);
  outcome a, b, c;
  t.async_wait(a.handler());
  t.async_wait(b.handler());
  BOOST_TEST(t.expires_after(far_away) == 2u);
  t.async_wait(c.handler());
  const auto expiry = Timer::clock_type::now() + 15ms;
  BOOST_TEST(t.expires_at(expiry) == 1u);
  BOOST_TEST((t.expiry() == expiry));
  outcome d;
  t.async_wait(d.handler());
  BOOST_TEST(run_bounded(io));
  for (outcome* o : {&a, &b, &c}) {
    BOOST_TEST(o->calls == 1);
    BOOST_TEST((o->ec == asio::error::operation_aborted));
  }
  BOOST_TEST(d.calls == 1);
  BOOST_TEST(!d.ec);
  BOOST_TEST((d.at >= expiry));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(destructor_cancels_pending_waits, Timer, timer_types) {
  asio::io_context io;
  outcome o;
  {
    Timer t(io, far_away);
    t.async_wait(o.handler());
  }
  BOOST_TEST(o.calls == 0);
  const auto start = steady::now();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST((o.ec == asio::error::operation_aborted));
  BOOST_TEST((steady::now() - start < long_wait / 2));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(per_operation_cancellation, Timer, timer_types) {
  for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                    asio::cancellation_type::total}) {
    BOOST_TEST_CONTEXT("cancellation type " << static_cast<unsigned>(type)) {
      asio::io_context io;
      Timer t(io, far_away);
      Timer other(io, 20ms);  // a wait on another timer is not affected
      asio::cancellation_signal signal;
      outcome cancelled, unaffected;
      t.async_wait(asio::bind_cancellation_slot(signal.slot(), cancelled.handler()));
      other.async_wait(unaffected.handler());
      asio::post(io, [&] { signal.emit(type); });
      BOOST_TEST(run_bounded(io));
      BOOST_TEST(cancelled.calls == 1);
      BOOST_TEST((cancelled.ec == asio::error::operation_aborted));
      BOOST_TEST(unaffected.calls == 1);
      BOOST_TEST(!unaffected.ec);
      BOOST_TEST(t.cancel() == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(slot_left_connected_after_completion_is_harmless, Timer, timer_types) {
  // Emitting a signal after its wait completed must not touch the old wait.
  asio::io_context io;
  Timer t(io, 5ms);
  asio::cancellation_signal signal;
  outcome first;
  t.async_wait(asio::bind_cancellation_slot(signal.slot(), first.handler()));
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(first.calls == 1);
  BOOST_TEST(!first.ec);
  signal.emit(asio::cancellation_type::terminal);
  io.restart();
  outcome second;
  t.expires_after(5ms);
  t.async_wait(second.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(first.calls == 1);
  BOOST_TEST(second.calls == 1);
  BOOST_TEST(!second.ec);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(cancel_inside_completion_handler_finds_nothing, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 5ms);
  std::optional<std::size_t> cancelled;
  t.async_wait([&](const error_code& ec) {
    BOOST_TEST(!ec);
    cancelled = t.cancel();
  });
  BOOST_TEST(run_bounded(io));
  BOOST_REQUIRE(cancelled.has_value());
  BOOST_TEST(*cancelled == 0u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(rearm_inside_completion_handler_cancels_nothing, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 5ms);
  std::optional<std::size_t> cancelled;
  int ticks = 0;
  t.async_wait([&](const error_code& ec) {
    BOOST_TEST(!ec);
    ++ticks;
    cancelled = t.expires_after(5ms);
    t.async_wait([&](const error_code& ec2) {
      BOOST_TEST(!ec2);
      ++ticks;
    });
  });
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(ticks == 2);
  BOOST_REQUIRE(cancelled.has_value());
  BOOST_TEST(*cancelled == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

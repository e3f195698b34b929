// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The drop-in suite, completions: every completion token Asio's timer takes,
// blocking waits, several waits on one timer, and when handlers may run.
#include "dropin_support.hpp"

BOOST_AUTO_TEST_SUITE(dropin)

BOOST_AUTO_TEST_CASE_TEMPLATE(async_wait_succeeds_after_expiry, Timer, timer_types) {
  asio::io_context io;
  const auto start = Timer::clock_type::now();
  Timer t(io, 30ms);
  const auto expiry = t.expiry();
  BOOST_TEST((expiry >= start + 30ms));
  outcome o;
  t.async_wait(o.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at >= expiry));
  BOOST_TEST((o.at - start < long_wait));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_named_handler_is_copied_into_each_wait, Timer, timer_types) {
  // async_wait(h) with h an lvalue: Asio copies it; chronopool once failed
  // to compile this (its wait took the handler by rvalue only).
  asio::io_context io;
  Timer t(io, 1ms);
  int calls = 0;
  const auto h = [&calls](const sys_ns::error_code& ec) {
    if (!ec) ++calls;
  };
  t.async_wait(h);
  t.async_wait(h);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(calls == 2);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(use_awaitable_in_coroutine, Timer, timer_types) {
  asio::io_context io;
  Timer t(io);
  typename Timer::time_point expiry{}, woke{};
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        t.expires_after(20ms);
        expiry = t.expiry();
        co_await t.async_wait(asio::use_awaitable);
        woke = Timer::clock_type::now();
        // A cancelled wait throws system_error(operation_aborted).
        t.expires_after(far_away);
        asio::post(io, [&] { t.cancel(); });
        try {
          co_await t.async_wait(asio::use_awaitable);
          BOOST_ERROR("a cancelled wait must throw");
        } catch (const sys_ns::system_error& e) {
          BOOST_TEST((e.code() == asio::error::operation_aborted));
        }
        done = true;
      },
      rethrow);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(done);
  BOOST_TEST((woke >= expiry));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(use_future_token, Timer, timer_types) {
  asio::io_context io;
  Timer ok(io, 10ms);
  Timer aborted(io, far_away);
  std::future<void> f1 = ok.async_wait(asio::use_future);
  // The error case completes on io's thread (this one): use_future's own
  // executor is the system executor, and an exception_ptr handed over from
  // its thread trips TSan (libstdc++ refcounts exceptions uninstrumented).
  std::future<void> f2 = aborted.async_wait(asio::bind_executor(io, asio::use_future));
  BOOST_TEST(aborted.cancel() == 1u);
  BOOST_TEST(run_bounded(io));
  BOOST_REQUIRE((f1.wait_for(long_wait) == std::future_status::ready));
  BOOST_REQUIRE((f2.wait_for(0s) == std::future_status::ready));
  BOOST_CHECK_NO_THROW(f1.get());
  try {
    f2.get();
    BOOST_ERROR("the cancelled wait's future must hold an error");
  } catch (const sys_ns::system_error& e) {
    BOOST_TEST((e.code() == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(deferred_starts_only_when_launched, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 10ms);
  auto op = t.async_wait(asio_compat::deferred);
  BOOST_TEST(t.cancel() == 0u);  // nothing started yet
  outcome o;
  std::move(op)(o.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(as_tuple_use_awaitable, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, far_away);
  std::optional<error_code> first, second;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::post(io, [&] { t.cancel(); });
        auto [ec1] = co_await t.async_wait(asio_compat::as_tuple(asio::use_awaitable));
        first = ec1;
        t.expires_after(5ms);
        auto [ec2] = co_await t.async_wait(asio_compat::as_tuple(asio::use_awaitable));
        second = ec2;
      },
      rethrow);
  BOOST_TEST(run_bounded(io));
  BOOST_REQUIRE(first.has_value());
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST((*first == asio::error::operation_aborted));
  BOOST_TEST(!*second);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(redirect_error_use_awaitable, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, far_away);
  std::optional<error_code> first, second;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        error_code ec;
        asio::post(io, [&] { t.cancel(); });
        co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        first = ec;
        t.expires_after(5ms);
        co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        second = ec;
      },
      rethrow);
  BOOST_TEST(run_bounded(io));
  BOOST_REQUIRE(first.has_value());
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST((*first == asio::error::operation_aborted));
  BOOST_TEST(!*second);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(awaitable_or_timeout_cancels_the_loser, Timer, timer_types) {
  using namespace asio::experimental::awaitable_operators;
  asio::io_context io;
  Timer slow(io, far_away);
  Timer fast(io, 20ms);
  std::optional<std::size_t> index;
  typename Timer::time_point woke{};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto r = co_await (slow.async_wait(asio::use_awaitable) || fast.async_wait(asio::use_awaitable));
        index = r.index();
        woke = Timer::clock_type::now();
      },
      rethrow);
  const auto start = steady::now();
  BOOST_TEST(run_bounded(io));  // returns: the slow wait was cancelled
  BOOST_REQUIRE(index.has_value());
  BOOST_TEST(*index == 1u);
  BOOST_TEST((woke >= fast.expiry()));
  BOOST_TEST((steady::now() - start < long_wait / 2));
  BOOST_TEST(slow.cancel() == 0u);  // nothing left pending on the loser
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blocking_wait_returns_after_expiry, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 30ms);
  const auto expiry = t.expiry();
  t.wait();
  BOOST_TEST((Timer::clock_type::now() >= expiry));
  error_code ec = asio::error::would_block;
  t.expires_after(5ms);
  t.wait(ec);
  BOOST_TEST(!ec);
  BOOST_TEST((Timer::clock_type::now() >= t.expiry()));
  // Already expired: returns at once.
  const auto start = steady::now();
  t.expires_after(-1s);
  t.wait();
  BOOST_TEST((steady::now() - start < long_wait / 2));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(multiple_waits_on_one_timer_all_complete, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 20ms);
  std::vector<int> order;
  std::vector<typename Timer::time_point> times;
  for (int i = 0; i < 5; ++i) {
    t.async_wait([&, i](const error_code& ec) {
      BOOST_TEST(!ec);
      order.push_back(i);
      times.push_back(Timer::clock_type::now());
    });
  }
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}), boost::test_tools::per_element());
  for (auto at : times) BOOST_TEST((at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(past_expiry_completes_promptly, Timer, timer_types) {
  asio::io_context io;
  Timer t(io);
  t.expires_at(Timer::clock_type::now() - 1h);
  outcome o;
  const auto start = steady::now();
  t.async_wait(o.handler());
  BOOST_TEST(o.calls == 0);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST(!o.ec);
  BOOST_TEST((o.at - start < long_wait / 2));
}

// Inside its own completion handler the wait is no longer pending: cancel()
// there finds nothing, and a re-arming handler (the periodic-timer idiom)
// cancels nothing.

BOOST_AUTO_TEST_CASE_TEMPLATE(handler_never_called_inside_async_wait, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, -1s);  // already expired
  bool returned = false;
  int calls = 0;
  bool saw_returned = false;
  t.async_wait([&](const error_code&) {
    ++calls;
    saw_returned = returned;
  });
  returned = true;
  BOOST_TEST(calls == 0);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(calls == 1);
  BOOST_TEST(saw_returned);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(run_does_not_return_while_a_wait_is_pending, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 60ms);
  outcome o;
  t.async_wait(o.handler());
  const auto expiry = t.expiry();
  BOOST_TEST(run_bounded(io));
  const auto returned = Timer::clock_type::now();
  BOOST_TEST((returned >= expiry));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST(!o.ec);
  // And with nothing pending, run() returns at once.
  io.restart();
  const auto start = steady::now();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((steady::now() - start < long_wait / 2));
}

BOOST_AUTO_TEST_SUITE_END()

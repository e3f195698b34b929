// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::steady_timer as a drop-in for boost::asio::steady_timer: every
// test here is written against Asio's timer API alone and runs unchanged for
// both types, so Asio's behaviour is the reference for chronopool's.
// GCC 12 with -fsanitize=address reports a false -Wmaybe-uninitialized inside
// Asio's use_future (async_completion in async_initiate). Silenced for that
// header only, which is why it is included first.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/asio/use_future.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <chronopool/steady_timer.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/mpl/list.hpp>
#include <boost/system/system_error.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <exception>
#include <future>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using steady = std::chrono::steady_clock;

namespace {

using timer_types = boost::mpl::list<asio::steady_timer, chronopool::steady_timer>;

/// Generous bound for anything that must happen (CI: 2 cores, sanitizers).
constexpr auto long_wait = 10s;
/// A wait that must not complete during a test.
constexpr auto far_away = 1h;

/// io.run(), bounded: a broken timer fails the test instead of hanging it.
/// Returns whether run ended because the context ran out of work.
bool run_bounded(asio::io_context& io) {
  io.run_for(long_wait);
  return io.stopped();
}

/// What one completion handler saw.
struct outcome {
  int calls = 0;
  error_code ec;
  steady::time_point at{};

  auto handler() {
    return [this](const error_code& e) {
      ++calls;
      ec = e;
      at = steady::now();
    };
  }
};

/// A co_spawn completion token that rethrows the coroutine's exception out of run().
inline constexpr auto rethrow = [](const std::exception_ptr& e) {
  if (e) std::rethrow_exception(e);
};

}  // namespace

BOOST_AUTO_TEST_SUITE(dropin)

BOOST_AUTO_TEST_CASE_TEMPLATE(async_wait_succeeds_after_expiry, Timer, timer_types) {
  asio::io_context io;
  const auto start = steady::now();
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
  const auto h = [&calls](const boost::system::error_code& ec) {
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
  steady::time_point expiry{}, woke{};
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        t.expires_after(20ms);
        expiry = t.expiry();
        co_await t.async_wait(asio::use_awaitable);
        woke = steady::now();
        // A cancelled wait throws system_error(operation_aborted).
        t.expires_after(far_away);
        asio::post(io, [&] { t.cancel(); });
        try {
          co_await t.async_wait(asio::use_awaitable);
          BOOST_ERROR("a cancelled wait must throw");
        } catch (const boost::system::system_error& e) {
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
  } catch (const boost::system::system_error& e) {
    BOOST_TEST((e.code() == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(deferred_starts_only_when_launched, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 10ms);
  auto op = t.async_wait(asio::deferred);
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
        auto [ec1] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        first = ec1;
        t.expires_after(5ms);
        auto [ec2] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
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
  Timer t(io, std::chrono::steady_clock::now());  // already expired
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

  t.expires_at(std::chrono::steady_clock::now() + far_away);
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
  const auto expiry = steady::now() + 15ms;
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
  const auto returned = steady::now();
  BOOST_TEST((returned >= expiry));
  BOOST_TEST(o.calls == 1);
  BOOST_TEST(!o.ec);
  // And with nothing pending, run() returns at once.
  io.restart();
  const auto start = steady::now();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((steady::now() - start < long_wait / 2));
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

BOOST_AUTO_TEST_CASE_TEMPLATE(move_construction_keeps_pending_wait, Timer, timer_types) {
  asio::io_context io;
  outcome expired, cancelled;

  Timer a(io, 20ms);
  const auto expiry = a.expiry();
  a.async_wait(expired.handler());
  Timer a2(std::move(a));
  BOOST_TEST((a2.expiry() == expiry));

  Timer b(io, far_away);
  b.async_wait(cancelled.handler());
  Timer b2(std::move(b));
  BOOST_TEST(b2.cancel() == 1u);  // the moved-to timer owns the wait

  // The converting move from a timer on a concrete executor.
  using io_timer = typename Timer::template rebind_executor<asio::io_context::executor_type>::other;
  outcome converted;
  io_timer c(io.get_executor(), 20ms);
  c.async_wait(converted.handler());
  Timer c2(std::move(c));

  BOOST_TEST(run_bounded(io));
  BOOST_TEST(expired.calls == 1);
  BOOST_TEST(!expired.ec);
  BOOST_TEST((expired.at >= expiry));
  BOOST_TEST(cancelled.calls == 1);
  BOOST_TEST((cancelled.ec == asio::error::operation_aborted));
  BOOST_TEST(converted.calls == 1);
  BOOST_TEST(!converted.ec);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(moved_from_timer_is_usable_again, Timer, timer_types) {
  asio::io_context io;
  Timer a(io, far_away);
  outcome moved, reused;
  a.async_wait(moved.handler());
  Timer b(std::move(a));
  a.expires_after(10ms);  // as if newly constructed on its executor
  BOOST_TEST(a.cancel() == 0u);
  a.async_wait(reused.handler());
  BOOST_TEST(b.cancel() == 1u);
  BOOST_TEST(run_bounded(io));
  BOOST_TEST((moved.ec == asio::error::operation_aborted));
  BOOST_TEST(reused.calls == 1);
  BOOST_TEST(!reused.ec);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(get_executor_returns_the_executor_it_was_made_with, Timer, timer_types) {
  asio::io_context io, other;
  const asio::any_io_executor plain = io.get_executor();
  const asio::any_io_executor strand = asio::make_strand(io);
  const asio::any_io_executor continuation = asio::prefer(plain, asio::execution::relationship.continuation);
  BOOST_TEST(!(continuation == plain));  // a property that must come back with it
  for (const auto& ex : {plain, strand, continuation}) {
    Timer t(ex);
    BOOST_TEST((t.get_executor() == ex));
    Timer moved(std::move(t));
    BOOST_TEST((moved.get_executor() == ex));
    BOOST_TEST((t.get_executor() == ex));  // the moved-from timer keeps it
    Timer assigned(other);
    assigned = std::move(moved);
    BOOST_TEST((assigned.get_executor() == ex));
  }
  Timer from_context(io);
  BOOST_TEST((from_context.get_executor() == plain));
  BOOST_TEST(!(from_context.get_executor() == asio::any_io_executor(other.get_executor())));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_wait_on_a_strand_timer_completes_on_the_strand, Timer, timer_types) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  Timer t(asio::any_io_executor(strand), 1ms);
  bool in_strand = false;
  t.async_wait([&](const error_code&) { in_strand = strand.running_in_this_thread(); });
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(in_strand);
}

// chronopool keeps a context's own executor and a strand in different ways
// (the first is not stored at all): moving between such timers, in every
// direction, keeps each pending wait, its outcome and where it completes.
BOOST_AUTO_TEST_CASE_TEMPLATE(moves_between_context_and_strand_timers_keep_waits_and_executors, Timer, timer_types) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  const asio::any_io_executor plain = io.get_executor();
  const asio::any_io_executor stranded = strand;
  outcome strand_wait, target_wait, plain_wait, last_wait;
  bool strand_wait_on_strand = false;
  Timer on_strand(stranded, 20ms);
  on_strand.async_wait([&, h = strand_wait.handler()](const error_code& ec) mutable {
    strand_wait_on_strand = strand.running_in_this_thread();
    h(ec);
  });
  Timer moved(std::move(on_strand));  // a strand timer into a new one
  BOOST_TEST((moved.get_executor() == stranded));
  BOOST_TEST((on_strand.get_executor() == stranded));

  Timer target(io, far_away);
  target.async_wait(target_wait.handler());
  target = std::move(moved);  // a context timer (its wait cancelled) takes the strand timer's
  BOOST_TEST((target.get_executor() == stranded));

  Timer context_timer(io, 30ms);
  context_timer.async_wait(plain_wait.handler());
  moved = std::move(context_timer);  // the moved-from strand timer takes a context timer's
  BOOST_TEST((moved.get_executor() == plain));

  on_strand = std::move(moved);  // and once more, into the first strand timer
  BOOST_TEST((on_strand.get_executor() == plain));
  on_strand.expires_after(10ms);  // cancels the wait it took over
  on_strand.async_wait(last_wait.handler());

  BOOST_TEST(run_bounded(io));
  BOOST_TEST(strand_wait.calls == 1);
  BOOST_TEST(!strand_wait.ec);
  BOOST_TEST(strand_wait_on_strand);
  BOOST_TEST(target_wait.calls == 1);
  BOOST_TEST((target_wait.ec == asio::error::operation_aborted));
  BOOST_TEST(plain_wait.calls == 1);
  BOOST_TEST((plain_wait.ec == asio::error::operation_aborted));
  BOOST_TEST(last_wait.calls == 1);
  BOOST_TEST(!last_wait.ec);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(move_assignment_cancels_target_and_keeps_source_wait, Timer, timer_types) {
  asio::io_context io;
  outcome target_wait, source_wait, after;
  Timer target(io, far_away);
  target.async_wait(target_wait.handler());
  Timer source(io, 20ms);
  const auto expiry = source.expiry();
  source.async_wait(source_wait.handler());
  target = std::move(source);
  BOOST_TEST((target.expiry() == expiry));
  target.async_wait(after.handler());
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(target_wait.calls == 1);
  BOOST_TEST((target_wait.ec == asio::error::operation_aborted));
  BOOST_TEST(source_wait.calls == 1);
  BOOST_TEST(!source_wait.ec);
  BOOST_TEST(after.calls == 1);
  BOOST_TEST(!after.ec);
  BOOST_TEST((after.at >= expiry));
}

// A timer move-assigned from another context's timer belongs to that context:
// new waits are driven by it (running the old context is not needed).
BOOST_AUTO_TEST_CASE_TEMPLATE(move_assignment_across_contexts, Timer, timer_types) {
  asio::io_context io1, io2;
  Timer target(io1, 1ms);
  outcome warm_up;
  target.async_wait(warm_up.handler());  // io1's timers are in use
  BOOST_TEST(run_bounded(io1));
  BOOST_TEST(warm_up.calls == 1);

  Timer source(io2, 20ms);
  outcome source_wait, after;
  source.async_wait(source_wait.handler());
  target = std::move(source);
  target.async_wait(after.handler());
  // 100x the expiry: a bound that fails fast when io2 cannot complete it.
  io2.run_for(2s);
  BOOST_TEST(source_wait.calls == 1);
  BOOST_TEST(after.calls == 1);
  BOOST_TEST(!after.ec);
  BOOST_TEST(target.cancel() == 0u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(awaitable_or_timeout_cancels_the_loser, Timer, timer_types) {
  using namespace asio::experimental::awaitable_operators;
  asio::io_context io;
  Timer slow(io, far_away);
  Timer fast(io, 20ms);
  std::optional<std::size_t> index;
  steady::time_point woke{};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto r = co_await (slow.async_wait(asio::use_awaitable) || fast.async_wait(asio::use_awaitable));
        index = r.index();
        woke = steady::now();
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

BOOST_AUTO_TEST_CASE_TEMPLATE(handler_runs_on_its_associated_strand, Timer, timer_types) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  Timer ok(io, 5ms);
  Timer aborted(io, far_away);
  int calls = 0;
  int on_strand = 0;
  auto h = [&](const error_code&) {
    ++calls;
    if (strand.running_in_this_thread()) ++on_strand;
  };
  ok.async_wait(asio::bind_executor(strand, h));
  aborted.async_wait(asio::bind_executor(strand, h));
  aborted.cancel();
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(calls == 2);
  BOOST_TEST(on_strand == 2);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(blocking_wait_returns_after_expiry, Timer, timer_types) {
  asio::io_context io;
  Timer t(io, 30ms);
  const auto expiry = t.expiry();
  t.wait();
  BOOST_TEST((steady::now() >= expiry));
  error_code ec = asio::error::would_block;
  t.expires_after(5ms);
  t.wait(ec);
  BOOST_TEST(!ec);
  BOOST_TEST((steady::now() >= t.expiry()));
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
  std::vector<steady::time_point> times;
  for (int i = 0; i < 5; ++i) {
    t.async_wait([&, i](const error_code& ec) {
      BOOST_TEST(!ec);
      order.push_back(i);
      times.push_back(steady::now());
    });
  }
  BOOST_TEST(run_bounded(io));
  BOOST_TEST(order == (std::vector<int>{0, 1, 2, 3, 4}), boost::test_tools::per_element());
  for (auto at : times) BOOST_TEST((at >= t.expiry()));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(past_expiry_completes_promptly, Timer, timer_types) {
  asio::io_context io;
  Timer t(io);
  t.expires_at(steady::now() - 1h);
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

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The drop-in suite, the I/O object: moves, executors and strands.
#include "dropin_support.hpp"

BOOST_AUTO_TEST_SUITE(dropin)

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

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Completion handlers that throw. As Asio documents, an exception thrown by
// a handler propagates out of io_context::run() (run_one(), poll()) on the
// thread that invoked it, and the context stays usable: calling run() again
// continues with the remaining work. chronopool's timers must keep that
// promise in every way they complete — success, operation_aborted, several
// waits due in one batch, completions posted back from a pool (use_pool) —
// and must not lose or repeat any other handler on the way. On a pool, where
// no caller is there to catch it, the exception goes to the error handler.
#include "fault_support.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <vector>

namespace bdata = boost::unit_test::data;
using sys_ns::error_code;
using chronopool::scheduled_thread_pool;
using chronopool::steady_timer;
using namespace fault;

// Named, not anonymous: the data-driven test cases are templates, and
// -Wsubobject-linkage objects to their lambdas capturing internal types.
namespace handler_exception_test {

/// What came out of run() while a context was run to completion.
struct run_exceptions {
  int caught = 0;    // exceptions out of run()
  int merged = 0;    // of those, asio::multiple_exceptions
  bool all_match = true;  // each one is (or, merged, begins with) the payload
};

/// Runs @p io to completion, restarting it after each exception a handler
/// throws, and checks each exception against @p p.
///
/// Handlers that chronopool completes inline (a batch of waits due
/// together) run inside one Asio operation, through the io_context
/// executor's inline path, which captures their exceptions and rethrows them
/// when the operation ends: one exception as itself, several as
/// asio::multiple_exceptions holding the first.
run_exceptions run_catching(asio::io_context& io, payload p) {
  run_exceptions r;
  for (int round = 0; round < 1000; ++round) {
    io.restart();
    std::exception_ptr e = thrown_by([&] { io.run_for(long_wait); });
    if (!e) return r;
    ++r.caught;
    try {
      std::rethrow_exception(e);
    } catch (const asio::multiple_exceptions& m) {
      ++r.merged;
      e = m.first_exception();
    } catch (...) {
    }
    if (!holds(e, p)) r.all_match = false;
  }
  BOOST_ERROR("run() kept throwing");
  return r;
}

/// One wait's ledger entry.
struct outcome {
  int calls = 0;
  error_code ec;
};

}  // namespace handler_exception_test

using namespace handler_exception_test;

BOOST_AUTO_TEST_SUITE(handler_exceptions)

BOOST_DATA_TEST_CASE(every_other_handler_of_one_batch_throws, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  asio::io_context io;
  constexpr int n = 12;
  std::vector<std::unique_ptr<steady_timer>> timers;
  std::vector<outcome> outcomes(n);
  const auto due = steady::now() + 5ms;  // all due in the same batch
  for (int i = 0; i < n; ++i) {
    timers.push_back(std::make_unique<steady_timer>(io, due));
    timers.back()->async_wait([&outcomes, i, p](const error_code& ec) {
      ++outcomes[static_cast<std::size_t>(i)].calls;
      outcomes[static_cast<std::size_t>(i)].ec = ec;
      if (i % 2 == 0) throw_payload(p, "a timer completion handler");
    });
  }
  const run_exceptions r = run_catching(io, p);
  BOOST_TEST(r.caught >= 1);  // at least one came out; the batch may merge them (see run_catching)
  BOOST_TEST(r.caught + r.merged <= n / 2);
  BOOST_TEST(r.all_match);
  for (int i = 0; i < n; ++i) {
    BOOST_TEST_CONTEXT("wait " << i) {
      BOOST_TEST(outcomes[static_cast<std::size_t>(i)].calls == 1);  // none lost, none repeated
      BOOST_TEST(!outcomes[static_cast<std::size_t>(i)].ec);
    }
  }
  // The service still works: a new wait on a timer whose handler threw.
  outcome later;
  timers[0]->expires_after(1ms);
  timers[0]->async_wait([&](const error_code& ec) {
    ++later.calls;
    later.ec = ec;
  });
  BOOST_TEST(run_catching(io, p).caught == 0);
  BOOST_TEST(later.calls == 1);
  BOOST_TEST(!later.ec);
  BOOST_TEST(asio::use_service<chronopool::timer_service>(io).pending_waits() == 0u);
}

BOOST_DATA_TEST_CASE(aborted_handlers_that_throw, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  asio::io_context io;
  steady_timer t(io, 1h);
  constexpr int n = 6;
  std::vector<outcome> outcomes(n);
  for (int i = 0; i < n; ++i)
    t.async_wait([&outcomes, i, p](const error_code& ec) {
      ++outcomes[static_cast<std::size_t>(i)].calls;
      outcomes[static_cast<std::size_t>(i)].ec = ec;
      if (i != 3) throw_payload(p, "an operation_aborted handler");
    });
  BOOST_TEST(t.cancel() == static_cast<std::size_t>(n));
  const run_exceptions r = run_catching(io, p);
  BOOST_TEST(r.caught == n - 1);  // posted one by one: each throws out of its own run()
  BOOST_TEST(r.merged == 0);
  BOOST_TEST(r.all_match);
  for (const auto& o : outcomes) {
    BOOST_TEST(o.calls == 1);
    BOOST_TEST((o.ec == asio::error::operation_aborted));
  }
}

BOOST_DATA_TEST_CASE(handlers_completed_through_a_pool_throw_out_of_the_io_context, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  scheduled_thread_pool pool(2);
  asio::io_context io;
  chronopool::use_pool(io, pool);  // the pool keeps time; completions come back to io
  constexpr int n = 8;
  std::vector<outcome> outcomes(n);
  std::vector<std::unique_ptr<steady_timer>> timers;
  for (int i = 0; i < n; ++i) {
    timers.push_back(std::make_unique<steady_timer>(io, steady::now() + 2ms));
    timers.back()->async_wait([&outcomes, i, p](const error_code& ec) {
      ++outcomes[static_cast<std::size_t>(i)].calls;
      outcomes[static_cast<std::size_t>(i)].ec = ec;
      if (i % 3 == 0) throw_payload(p, "a pool-driven timer's handler");
    });
  }
  const run_exceptions r = run_catching(io, p);
  BOOST_TEST(r.caught >= 1);
  BOOST_TEST(r.caught + r.merged <= 3);
  BOOST_TEST(r.all_match);
  for (const auto& o : outcomes) BOOST_TEST(o.calls == 1);
  // async_sleep through the same road.
  int slept = 0;
  chronopool::async_sleep(io.get_executor(), 1ms, [&](const error_code&) {
    ++slept;
    throw_payload(p, "an async_sleep handler");
  });
  const run_exceptions s = run_catching(io, p);
  BOOST_TEST(s.caught == 1);
  BOOST_TEST(s.all_match);
  BOOST_TEST(slept == 1);
  BOOST_TEST(pool.submit([] { return 1; }).get() == 1);  // the pool is unaffected
}

BOOST_DATA_TEST_CASE(handlers_running_on_a_pool_report_to_its_error_handler, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  std::atomic<int> reported{0};
  std::atomic<bool> matched{true};
  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.error_handler = [&, p](std::exception_ptr e, const chronopool::task_view*) {
    if (!holds(e, p)) matched.store(false);
    reported.fetch_add(1);
  };
  scheduled_thread_pool pool(o);
  std::atomic<int> calls{0};
  std::vector<std::unique_ptr<steady_timer>> timers;
  for (int i = 0; i < 4; ++i) {
    timers.push_back(std::make_unique<steady_timer>(pool, i % 2 == 0 ? 1ms : 1h));
    timers.back()->async_wait([&, p](const error_code&) {
      calls.fetch_add(1);
      throw_payload(p, "a handler running on the pool");
    });
  }
  // The near ones fire first: the pool's wake-up task calls their handlers
  // inline (their exceptions were once lost there, not reported: TSan's
  // slower timing found it), then the far ones complete with
  // operation_aborted through the abort batch's delivery.
  BOOST_TEST(eventually([&] { return calls.load() == 2; }));
  BOOST_TEST(eventually([&] { return reported.load() == 2; }));
  for (auto& t : timers) t->cancel();
  BOOST_TEST(eventually([&] { return reported.load() == 4; }));
  BOOST_TEST(calls.load() == 4);
  BOOST_TEST(matched.load());
  BOOST_TEST(pool.submit([] { return 1; }).get() == 1);
}

BOOST_AUTO_TEST_CASE(run_resumes_on_another_thread_after_an_exception) {
  asio::io_context io;
  steady_timer a(io, steady::now() + 1ms), b(io, steady::now() + 20ms);
  int b_calls = 0;
  a.async_wait([](const error_code&) { throw_payload(payload::int_value, "a timer handler (then run() moves threads)"); });
  b.async_wait([&](const error_code& ec) { b_calls += ec ? 0 : 1; });
  BOOST_CHECK_THROW(io.run_for(long_wait), int);
  std::thread other([&] {
    io.restart();
    io.run_for(long_wait);
  });
  other.join();
  BOOST_TEST(b_calls == 1);
  BOOST_TEST(io.stopped());
}

// With asio::steady_timer every throwing handler is its own operation, so
// each exception comes out of its own run() call. chronopool completes a
// batch of waits that came due together inside one operation; it once did
// so through dispatch, which captured each handler's exception and merged a
// batch's into one multiple_exceptions, losing all but the first. Handlers
// of the completing context are now called directly, and the rest of the
// batch is posted when one throws.
BOOST_AUTO_TEST_CASE(each_throwing_handler_of_a_batch_throws_out_of_run_on_its_own) {
  asio::io_context io;
  std::vector<std::unique_ptr<steady_timer>> timers;
  const auto due = steady::now() + 5ms;
  for (int i = 0; i < 4; ++i) {
    timers.push_back(std::make_unique<steady_timer>(io, due));
    timers.back()->async_wait([i](const error_code&) { throw i; });
  }
  std::vector<int> thrown;
  for (int round = 0; round < 10; ++round) {
    io.restart();
    try {
      io.run_for(long_wait);
      break;
    } catch (int i) {
      thrown.push_back(i);
    } catch (const asio::multiple_exceptions&) {
      thrown.push_back(-1);  // several merged into one, all but the first lost
    }
  }
  BOOST_TEST(thrown == (std::vector<int>{0, 1, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

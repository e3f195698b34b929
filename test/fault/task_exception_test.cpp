// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tasks, executor functions and hooks that throw — std exceptions and types
// that are not (int, a plain struct) — through every way work enters a pool.
// Each exception must reach exactly the place the API promises (a future, the
// error handler, pending_task::run()'s result) with its type and value
// intact, and the pool must keep working afterwards.
#include "fault_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include "../support/asio.hpp"
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <exception>
#include <mutex>
#include <vector>

namespace bdata = boost::unit_test::data;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using namespace fault;

// Named, not anonymous: the data-driven test cases are templates, and
// -Wsubobject-linkage objects to their lambdas capturing internal types.
namespace task_exception_test {

/// Collects what reaches the pool's error handler.
struct error_sink {
  std::mutex mutex;
  std::vector<std::exception_ptr> errors;
  std::atomic<int> with_task{0};  // errors that came with a task_view

  auto handler() {
    return [this](std::exception_ptr e, const chronopool::task_view* task) {
      if (task != nullptr) with_task.fetch_add(1);
      std::lock_guard lock(mutex);
      errors.push_back(std::move(e));
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return errors.size();
  }
  std::exception_ptr at(std::size_t i) {
    std::lock_guard lock(mutex);
    return errors.at(i);
  }
};

/// The pool still runs work after whatever was injected.
bool still_works(scheduled_thread_pool& pool) {
  auto f = pool.submit([] { return 5; });
  return f.wait_for(long_wait) == std::future_status::ready && f.get() == 5;
}

}  // namespace task_exception_test

using namespace task_exception_test;

BOOST_AUTO_TEST_SUITE(task_exceptions)

BOOST_DATA_TEST_CASE(submitted_and_scheduled_tasks_report_through_their_future, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  scheduled_thread_pool pool(2);
  auto a = pool.submit([p]() -> int { throw_payload(p, "a submitted task"); });
  auto b = pool.schedule(1ms, [p] { throw_payload(p, "a scheduled task"); });
  auto c = pool.schedule_at(steady::now(), [p](std::stop_token) -> double { throw_payload(p, "a stop-token task"); });
  for (auto* f : {static_cast<chronopool::scheduled_future_base*>(&a), static_cast<chronopool::scheduled_future_base*>(&b),
                  static_cast<chronopool::scheduled_future_base*>(&c)}) {
    BOOST_REQUIRE(f->wait_for(long_wait) == std::future_status::ready);
    BOOST_TEST(!f->cancelled());
  }
  BOOST_TEST(holds(thrown_by([&] { (void)a.get(); }), p));
  BOOST_TEST(holds(thrown_by([&] { b.get(); }), p));
  BOOST_TEST(holds(thrown_by([&] { (void)c.get(); }), p));
  BOOST_TEST(holds(thrown_by([&] { (void)a.get(); }), p));  // every get() rethrows it
  BOOST_TEST(still_works(pool));
}

BOOST_DATA_TEST_CASE(fire_and_forget_work_reports_to_the_error_handler, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  error_sink sink;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.error_handler = sink.handler();
  scheduled_thread_pool pool(o);
  pool.execute([p] { throw_payload(p, "an execute()d task"); });
  asio::post(pool.get_executor(), [p] { throw_payload(p, "a posted function"); });
  // dispatch from a pool thread runs inline: its exception takes the same road.
  pool.execute([&pool, p] { asio::dispatch(pool.get_executor(), [p] { throw_payload(p, "a dispatched function"); }); });
  BOOST_REQUIRE(eventually([&] { return sink.size() == 3; }));
  for (std::size_t i = 0; i < 3; ++i) BOOST_TEST(holds(sink.at(i), p));
  BOOST_TEST(still_works(pool));
  BOOST_TEST(sink.size() == 3u);
}

BOOST_DATA_TEST_CASE(a_throwing_periodic_task_stops_or_continues_as_configured, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  error_sink sink;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.error_handler = sink.handler();
  scheduled_thread_pool pool(o);

  std::atomic<int> stopped_runs{0};
  auto stops = pool.schedule_at_fixed_rate(0ms, 1ms, [&, p] {
    stopped_runs.fetch_add(1);
    throw_payload(p, "a periodic task");
  });
  BOOST_REQUIRE(stops.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(holds(thrown_by([&] { stops.get(); }), p));
  BOOST_TEST(stopped_runs.load() == 1);  // the error ended the schedule

  std::atomic<int> continued_runs{0};
  auto continues = pool.schedule_with_fixed_delay(
      0ms, 1ms,
      [&, p] {
        continued_runs.fetch_add(1);
        throw_payload(p, "a continue_after_error periodic task");
      },
      {.continue_after_error = true});
  BOOST_REQUIRE(eventually([&] { return continued_runs.load() >= 3; }));
  BOOST_TEST(continues.cancel());
  BOOST_REQUIRE(continues.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(continues.cancelled());
  BOOST_REQUIRE(eventually([&] { return sink.size() >= 3; }));
  BOOST_TEST(holds(sink.at(0), p));
  BOOST_TEST(sink.with_task.load() >= 3);  // periodic errors come with their task
  BOOST_TEST(still_works(pool));
}

BOOST_DATA_TEST_CASE(caller_runs_and_pending_tasks_report_to_their_future_not_the_caller, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  {
    scheduled_thread_pool_options o;
    o.max_queued = 0;  // every submission is rejected: it runs on this thread
    o.rejection = chronopool::rejection_policy::caller_runs;
    scheduled_thread_pool pool(o);
    chronopool::scheduled_future<int> f;
    BOOST_CHECK_NO_THROW(f = pool.submit([p]() -> int { throw_payload(p, "a caller-runs task"); }));
    BOOST_REQUIRE(f.done());
    BOOST_TEST(holds(thrown_by([&] { (void)f.get(); }), p));
  }
  {
    scheduled_thread_pool pool(1);
    auto f = pool.schedule(1h, [p]() -> int { throw_payload(p, "a task returned by shutdown_now()"); });
    auto pending = pool.shutdown_now();
    BOOST_REQUIRE(pending.size() == 1u);
    std::exception_ptr e;
    BOOST_CHECK_NO_THROW(e = pending[0].run());
    BOOST_TEST(holds(e, p));
    BOOST_REQUIRE(f.done());
    BOOST_TEST(holds(thrown_by([&] { (void)f.get(); }), p));
  }
}

BOOST_DATA_TEST_CASE(throwing_hooks_and_a_throwing_error_handler_do_not_take_the_pool_down, bdata::xrange(5), index) {
  const payload p = all_payloads[index];
  std::atomic<int> handler_calls{0};
  std::atomic<bool> fail_before{true};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  // The error handler itself throws: there is nowhere left to report to.
  o.error_handler = [&, p](std::exception_ptr, const chronopool::task_view*) {
    handler_calls.fetch_add(1);
    throw_payload(p, "the error handler");
  };
  o.on_thread_start = [p](std::size_t) { throw_payload(p, "the on_thread_start hook"); };
  o.on_thread_stop = [p](std::size_t) { throw_payload(p, "the on_thread_stop hook"); };
  o.before_execute = [&, p](const chronopool::task_view&) {
    if (fail_before.exchange(false)) throw_payload(p, "the before_execute hook");
  };
  o.after_execute = [p](const chronopool::task_view&, std::exception_ptr) { throw_payload(p, "the after_execute hook"); };
  o.terminated = [p] { throw_payload(p, "the terminated hook"); };
  {
    scheduled_thread_pool pool(o);
    std::atomic<int> runs{0};
    auto first = pool.submit([&] { return runs.fetch_add(1); });  // failed by before_execute, never invoked
    BOOST_REQUIRE(first.wait_for(long_wait) == std::future_status::ready);
    BOOST_TEST(holds(thrown_by([&] { (void)first.get(); }), p));
    BOOST_TEST(runs.load() == 0);
    auto second = pool.submit([&] { return runs.fetch_add(1) + 10; });
    BOOST_REQUIRE(second.wait_for(long_wait) == std::future_status::ready);
    BOOST_TEST(second.get() == 10);  // after_execute's throw goes to the error handler, not the result
    pool.execute([p] { throw_payload(p, "an execute()d task under a throwing error handler"); });
    pool.join();
    BOOST_TEST(pool.is_terminated());
  }
  // on_thread_start, after_execute ×3, the execute()d task, on_thread_stop, terminated.
  BOOST_TEST(handler_calls.load() >= 5);
}

BOOST_AUTO_TEST_CASE(the_default_error_handler_survives_every_payload) {
  scheduled_thread_pool pool(1);  // no error_handler: one line to stderr per error
  for (payload p : all_payloads) pool.execute([p] { throw_payload(p, "an execute()d task (default error handler)"); });
  BOOST_TEST(still_works(pool));
}

BOOST_AUTO_TEST_SUITE_END()

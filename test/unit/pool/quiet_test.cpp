// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// wait_until_quiet / async_wait_quiet: the pool has nothing running and
// nothing queued due before a horizon. Work due before the horizon keeps it
// busy until it ran (also work queued by running work); work due at or after
// the horizon does not.
#include "pool_test_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <functional>
#include <memory>

using namespace pool_test;
using sys_ns::error_code;
using chronopool::scheduled_thread_pool;

namespace {

auto far_horizon() { return steady::now() + 1h; }

}  // namespace

BOOST_AUTO_TEST_SUITE(quiet)

BOOST_AUTO_TEST_CASE(an_idle_pool_is_quiet_at_once) {
  scheduled_thread_pool pool(2);
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  pool.prestart_core_threads();
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  BOOST_TEST(!pool.is_shutdown());  // quiescing is not shutting down
}

BOOST_AUTO_TEST_CASE(a_task_scheduled_before_the_horizon_keeps_it_waiting_until_it_ran) {
  scheduled_thread_pool pool(1);
  std::atomic<bool> ran{false};
  const auto start = steady::now();
  auto f = pool.schedule(50ms, [&] { ran.store(true); });
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  BOOST_TEST(ran.load());
  BOOST_TEST(f.done());
  BOOST_TEST((steady::now() - start >= 50ms));
}

BOOST_AUTO_TEST_CASE(a_delayed_task_or_periodic_run_at_or_after_the_horizon_does_not_count) {
  scheduled_thread_pool pool(1);
  auto far = pool.schedule(1h, [] {});
  auto periodic = pool.schedule_at_fixed_rate(1h, 1h, [] {});
  BOOST_TEST(pool.wait_until_quiet(steady::now() + 1min, long_wait));
  BOOST_TEST(!far.done());
  // The same tasks before a horizon past their deadlines: not quiet.
  BOOST_TEST(!pool.wait_until_quiet(steady::now() + 2h, 20ms));
  far.cancel();
  periodic.cancel();
}

BOOST_AUTO_TEST_CASE(a_running_task_that_queues_due_work_keeps_the_pool_busy) {
  scheduled_thread_pool pool(2);
  constexpr int depth = 200;
  std::atomic<int> ran{0};
  // Each link queues the next before it finishes: between them the queue is
  // never observed empty with nothing running.
  std::function<void(int)> link = [&](int left) {
    ran.fetch_add(1);
    if (left > 0) pool.execute([&link, left] { link(left - 1); });
  };
  pool.execute([&] { link(depth - 1); });
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  BOOST_TEST(ran.load() == depth);
}

BOOST_AUTO_TEST_CASE(a_periodic_task_due_before_the_horizon_keeps_it_busy_until_its_runs_move_past_it) {
  scheduled_thread_pool pool(1);
  std::atomic<int> runs{0};
  auto periodic = pool.schedule_at_fixed_rate(0ms, 10ms, [&] { runs.fetch_add(1); });
  const auto horizon = steady::now() + 40ms;
  BOOST_TEST(pool.wait_until_quiet(horizon, long_wait));
  BOOST_TEST((steady::now() >= horizon - 10ms));  // its next run is at or after the horizon
  BOOST_TEST(runs.load() >= 3);
  periodic.cancel();
}

BOOST_AUTO_TEST_CASE(a_running_task_or_posted_function_keeps_it_busy_and_the_wait_times_out) {
  scheduled_thread_pool pool(1);
  gate g;
  auto running = pool.submit([&] { g.wait(); });
  BOOST_TEST(!pool.wait_until_quiet(far_horizon(), 30ms));
  g.open();
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));

  gate g2;
  std::atomic<bool> posted_ran{false};
  asio::post(pool.get_executor(), [&] {
    g2.wait();
    posted_ran.store(true);
  });
  BOOST_TEST(!pool.wait_until_quiet(far_horizon(), 30ms));
  g2.open();
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  BOOST_TEST(posted_ran.load());
}

BOOST_AUTO_TEST_CASE(a_timer_wait_on_the_pool_keeps_it_busy_until_it_fired) {
  scheduled_thread_pool pool(1);
  chronopool::steady_timer timer(pool, 40ms);
  std::atomic<bool> fired{false};
  timer.async_wait([&](error_code ec) { fired.store(!ec); });
  BOOST_TEST(pool.wait_until_quiet(far_horizon(), long_wait));
  BOOST_TEST(fired.load());
}

BOOST_AUTO_TEST_CASE(cancelling_the_last_work_before_the_horizon_makes_it_quiet) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto far = pool.schedule(1h, [] {});
  recorded r;
  pool.async_wait_quiet(steady::now() + 2h, asio::bind_executor(io, [&](error_code ec) {
                          ++r.calls;
                          r.ec = ec;
                        }));
  io.poll();
  BOOST_TEST(r.calls == 0);
  BOOST_TEST(far.cancel());  // removed from the queue (remove_on_cancel): no thread goes idle for it
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
}

BOOST_AUTO_TEST_CASE(async_wait_quiet_completes_after_work_before_the_horizon_ran) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  std::atomic<bool> ran{false};
  auto f = pool.schedule(30ms, [&] { ran.store(true); });
  recorded r;
  bool ran_when_called = false;
  pool.async_wait_quiet(far_horizon(), asio::bind_executor(io, [&](error_code ec) {
                          ++r.calls;
                          r.ec = ec;
                          ran_when_called = ran.load();
                        }));
  io.run_for(long_wait);  // the pending wait keeps io's work
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
  BOOST_TEST(ran_when_called);
}

BOOST_AUTO_TEST_CASE(async_wait_quiet_on_a_quiet_pool_is_posted_not_run_inside_the_call) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  recorded r;
  pool.async_wait_quiet(far_horizon(), asio::bind_executor(io, [&](error_code ec) {
                          ++r.calls;
                          r.ec = ec;
                        }));
  BOOST_TEST(r.calls == 0);
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(!r.ec);
}

BOOST_AUTO_TEST_CASE(async_wait_quiet_is_cancellable_and_callable_from_a_pool_thread) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  gate g;
  auto running = pool.submit([&] { g.wait(); });
  asio::cancellation_signal signal;
  recorded r;
  pool.async_wait_quiet(far_horizon(), asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](error_code ec) {
                                                                        ++r.calls;
                                                                        r.ec = ec;
                                                                      })));
  signal.emit(asio::cancellation_type::total);
  io.run_for(long_wait);
  BOOST_TEST(r.calls == 1);
  BOOST_TEST(r.ec == asio::error::operation_aborted);
  g.open();

  // From a pool thread it waits for its own task to finish, without blocking.
  recorded inner;
  auto t = pool.submit([&] {
    pool.async_wait_quiet(far_horizon(), asio::bind_executor(io, [&](error_code ec) {
                            ++inner.calls;
                            inner.ec = ec;
                          }));
  });
  BOOST_REQUIRE(ready_within(t));
  io.restart();
  io.run_for(long_wait);
  BOOST_TEST(inner.calls == 1);
  BOOST_TEST(!inner.ec);
}

BOOST_AUTO_TEST_CASE(a_handler_on_the_pools_executor_runs_there) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(10ms, [] {});
  std::promise<bool> on_pool;
  pool.async_wait_quiet(far_horizon(), asio::bind_executor(pool.get_executor(), [&](error_code ec) {
                          on_pool.set_value(!ec && pool.running_in_this_thread());
                        }));
  auto p = on_pool.get_future();
  BOOST_REQUIRE(p.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(p.get());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// set_wakeup_slack on an io_context: waits due within the slack of each other
// complete on one wake-up, none early.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "timer_test_support.hpp"

namespace {

std::int64_t slack_ns(steady::time_point t) { return t.time_since_epoch().count(); }

/// Arms a timer 10 ms before @p first, then timers at @p first and @p first
/// + @p gap on @p ex; runs @p io until all completed, and returns when the
/// last two handlers ran. The slack is applied when a wake-up is armed: the
/// first timer's expiry re-arms the shard for the two that are queued by then.
template <class Executor>
std::pair<steady::time_point, steady::time_point> two_waits(asio::io_context& io, const Executor& ex,
                                                             steady::time_point first, steady::duration gap) {
  chronopool::steady_timer opener(ex, first - 10ms);
  chronopool::steady_timer a(ex, first);
  chronopool::steady_timer b(ex, first + gap);
  steady::time_point at_a{}, at_b{};
  opener.async_wait([](error_code) {});
  a.async_wait([&](error_code) { at_a = steady::now(); });
  b.async_wait([&](error_code) { at_b = steady::now(); });
  io.run();
  return {at_a, at_b};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wakeup_slack)

BOOST_AUTO_TEST_CASE(waits_within_the_slack_complete_on_the_wake_up_of_the_last) {
  asio::io_context io;
  chronopool::set_wakeup_slack(io, 1ms);
  const auto first = steady::now() + 20ms;
  const auto [a, b] = two_waits(io, io.get_executor(), first, 900us);
  BOOST_TEST(slack_ns(a) >= slack_ns(first + 900us));
  BOOST_TEST(slack_ns(b) >= slack_ns(first + 900us));
}

BOOST_AUTO_TEST_CASE(after_use_pool_the_contexts_slack_applies) {
  asio::io_context io;
  chronopool::scheduled_thread_pool pool(1);
  chronopool::use_pool(io, pool);
  chronopool::set_wakeup_slack(io, 1ms);
  auto work = asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  const auto first = steady::now() + 20ms;
  chronopool::steady_timer opener(io.get_executor(), first - 10ms);
  opener.async_wait([](error_code) {});
  chronopool::steady_timer ta(io.get_executor(), first);
  chronopool::steady_timer tb(io.get_executor(), first + 900us);
  std::promise<steady::time_point> pa, pb;
  ta.async_wait([&](error_code) { pa.set_value(steady::now()); });
  tb.async_wait([&](error_code) { pb.set_value(steady::now()); });
  auto fa = pa.get_future();
  auto fb = pb.get_future();
  BOOST_TEST_REQUIRE((fa.wait_for(10s) == std::future_status::ready));
  BOOST_TEST_REQUIRE((fb.wait_for(10s) == std::future_status::ready));
  BOOST_TEST(slack_ns(fa.get()) >= slack_ns(first + 900us));
  work.reset();
  io.stop();
  runner.join();
}

BOOST_AUTO_TEST_CASE(a_wait_beyond_the_slack_does_not_hold_back_the_first) {
  asio::io_context io;
  chronopool::set_wakeup_slack(io, 100us);
  const auto first = steady::now() + 20ms;
  chronopool::steady_timer a(io.get_executor(), first);
  chronopool::steady_timer b(io.get_executor(), first + 2s);
  steady::time_point at_a{};
  a.async_wait([&](error_code) {
    at_a = steady::now();
    b.cancel();
  });
  b.async_wait([](error_code) {});
  io.run();
  BOOST_TEST(slack_ns(at_a) >= slack_ns(first));
  BOOST_TEST(slack_ns(at_a) < slack_ns(first + 2s));
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// timer_service::stats(): completed and cancelled waits counted apart, the
// lateness of each completed wait recorded by the shard that fired it and
// merged over the shards, exact figures on a manual clock, a pool's timer
// service, and the one-line text.
#include <chronopool/async_sleep.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/timer_service_stats.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using sys_ns::error_code;
using std::chrono::nanoseconds;

BOOST_AUTO_TEST_SUITE(timer_stats_suite)

BOOST_AUTO_TEST_CASE(a_fresh_service_reports_nothing) {
  asio::io_context io;
  const chronopool::timer_service_stats s = chronopool::timer_stats(io);
  BOOST_TEST(s.pending_waits == 0u);
  BOOST_TEST(s.completed_waits == 0u);
  BOOST_TEST(s.cancelled_waits == 0u);
  BOOST_TEST(s.lateness_histogram.count() == 0u);
}

// On a manual clock each wait fires at the virtual time of its deadline:
// lateness exactly 0, and the cancelled ones are counted, not measured.
BOOST_AUTO_TEST_CASE(manual_clock_waits_complete_exactly_on_time_and_cancels_count_apart) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  std::vector<std::unique_ptr<chronopool::steady_timer>> timers;
  int fired = 0, aborted = 0;
  for (int i = 1; i <= 10; ++i) {
    timers.push_back(std::make_unique<chronopool::steady_timer>(io, i * 10ms));
    timers.back()->async_wait([&](error_code ec) { ++(ec ? aborted : fired); });
  }
  // A second wait on one timer (a block, not the inline wait) and a sleep.
  timers[0]->async_wait([&](error_code ec) { ++(ec ? aborted : fired); });
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    co_await chronopool::sleep_for(35ms);
    ++fired;
  }, asio::detached);
  clock.advance(0ms);  // the coroutine starts its sleep
  BOOST_TEST(chronopool::timer_stats(io).pending_waits == 12u);

  BOOST_TEST(timers[9]->cancel() == 1u);
  BOOST_TEST(timers[8]->cancel() == 1u);
  clock.advance(200ms);
  BOOST_TEST(fired == 10);
  BOOST_TEST(aborted == 2);

  const chronopool::timer_service_stats s = chronopool::timer_stats(io);
  BOOST_TEST(s.pending_waits == 0u);
  BOOST_TEST(s.completed_waits == 10u);
  BOOST_TEST(s.cancelled_waits == 2u);
  const chronopool::latency_histogram& h = s.lateness_histogram;
  BOOST_TEST(h.count() == 10u);
  BOOST_TEST(h.sum().count() == 0);
  BOOST_TEST(h.max().count() == 0);
  BOOST_TEST(h.quantile(0.99).count() == 0);
  // The service's own call and the free function agree.
  BOOST_TEST((asio::use_service<chronopool::timer_service>(io).stats().lateness_histogram == h));
}

// A stall makes the waits due meanwhile complete late, by exactly the
// virtual time they were overdue when the service next looked.
BOOST_AUTO_TEST_CASE(manual_clock_stall_gives_exact_lateness) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  chronopool::steady_timer a(io, 10ms), b(io, 14ms), c(io, 30ms);
  int fired = 0;
  for (auto* t : {&a, &b, &c}) t->async_wait([&](error_code ec) { fired += ec ? 0 : 1; });
  clock.stall(17ms);   // a is 7 ms late, b 3 ms, when the context runs again
  clock.advance(0ms);  // collects a and b at 17 ms
  BOOST_TEST(fired == 2);
  clock.advance(20ms);  // c at 30 ms, on time
  BOOST_TEST(fired == 3);

  const chronopool::latency_histogram h = chronopool::timer_stats(io).lateness_histogram;
  BOOST_TEST(h.count() == 3u);
  BOOST_TEST((h.min() == nanoseconds(0)));
  BOOST_TEST((h.max() == nanoseconds(7ms)));
  BOOST_TEST((h.sum() == nanoseconds(10ms)));
  // The median, 3 ms, within the histogram's 1/128.
  const auto p50 = h.quantile(0.5);
  BOOST_TEST(p50.count() >= 3'000'000 - 3'000'000 / 128);
  BOOST_TEST(p50.count() <= 3'000'000 + 3'000'000 / 128);
}

// A deadline at the clock's far past is as late as a duration can say,
// not an overflow (UBSan would see one).
BOOST_AUTO_TEST_CASE(a_deadline_at_the_far_past_saturates) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  chronopool::steady_timer t(io);
  t.expires_at(std::chrono::steady_clock::time_point::min());
  bool fired = false;
  t.async_wait([&](error_code ec) { fired = !ec; });
  clock.advance(0ms);
  BOOST_TEST(fired);
  const chronopool::latency_histogram h = chronopool::timer_stats(io).lateness_histogram;
  BOOST_TEST(h.count() == 1u);
  BOOST_TEST((h.max() == nanoseconds::max()));
}

// Threads of one io_context starting their own waits use different shards
// (handed out round-robin): the service's figures are all of them, merged.
BOOST_AUTO_TEST_CASE(real_clock_waits_on_several_shards_are_merged) {
  asio::io_context io;
  constexpr int per_thread = 200;
  constexpr int threads = 4;
  std::atomic<int> fired{0}, aborted{0};
  std::vector<std::thread> starters;
  std::vector<std::unique_ptr<chronopool::steady_timer>> timers(threads * per_thread);
  auto work = asio::make_work_guard(io);
  for (int t = 0; t < threads; ++t) {
    starters.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        auto& timer = timers[static_cast<std::size_t>(t * per_thread + i)];
        // Every 10th wait far away, to be cancelled; the rest due within 2 ms.
        const bool far = i % 10 == 0;
        timer = std::make_unique<chronopool::steady_timer>(io, far ? 1h : std::chrono::microseconds(10 * (i % 200)));
        timer->async_wait([&](error_code ec) { ++(ec ? aborted : fired); });
      }
    });
  }
  for (auto& s : starters) s.join();
  std::thread runner([&] { io.run(); });
  // The near ones complete; then the far ones are cancelled.
  constexpr int near = threads * per_thread * 9 / 10;
  while (fired.load() < near) std::this_thread::sleep_for(1ms);
  std::promise<std::size_t> cancelled;
  asio::post(io, [&] {
    std::size_t n = 0;
    for (auto& timer : timers) n += timer->cancel();
    cancelled.set_value(n);
  });
  const std::size_t n_cancelled = cancelled.get_future().get();
  while (aborted.load() < threads * per_thread / 10) std::this_thread::sleep_for(1ms);
  work.reset();
  runner.join();

  BOOST_TEST(n_cancelled == static_cast<std::size_t>(threads * per_thread / 10));
  const chronopool::timer_service_stats s = chronopool::timer_stats(io);
  BOOST_TEST(s.pending_waits == 0u);
  BOOST_TEST(s.completed_waits == static_cast<std::uint64_t>(near));
  BOOST_TEST(s.cancelled_waits == n_cancelled);
  const chronopool::latency_histogram& h = s.lateness_histogram;
  BOOST_TEST(h.count() == static_cast<std::uint64_t>(near));
  BOOST_TEST(h.min().count() >= 0);
  BOOST_TEST((h.min() <= h.quantile(0.5)));
  BOOST_TEST((h.quantile(0.5) <= h.quantile(0.99)));
  BOOST_TEST((h.quantile(0.99) <= h.max()));
  BOOST_TEST((h.mean() <= h.max()));
}

// A pool is an execution context with a timer service of its own: its
// workers fire the waits and record them.
BOOST_AUTO_TEST_CASE(a_pool_timer_service_counts_its_waits) {
  std::promise<void> done;
  std::atomic<int> completions{0};
  chronopool::scheduled_thread_pool pool(2);
  chronopool::steady_timer on_time(pool, 1ms), cancelled(pool, 1h);
  on_time.async_wait([&](error_code ec) {
    if (!ec && ++completions == 2) done.set_value();
  });
  cancelled.async_wait([&](error_code ec) {
    if (ec && ++completions == 2) done.set_value();
  });
  BOOST_TEST(cancelled.cancel() == 1u);
  done.get_future().get();
  pool.shutdown();
  BOOST_TEST(pool.wait_for_termination(10s));
  const chronopool::timer_service_stats s = chronopool::timer_stats(pool);
  BOOST_TEST(s.completed_waits == 1u);
  BOOST_TEST(s.cancelled_waits == 1u);
  BOOST_TEST(s.lateness_histogram.count() == 1u);
  BOOST_TEST(s.lateness_histogram.min().count() >= 0);
}

BOOST_AUTO_TEST_CASE(stats_format_on_one_line) {
  chronopool::timer_service_stats s;
  s.pending_waits = 3;
  s.completed_waits = 2;
  s.cancelled_waits = 1;
  s.lateness_histogram.record(41us);
  s.lateness_histogram.record(88us);
  const std::string text = chronopool::to_string(s);
  BOOST_TEST(text == "pending=3 completed=2 cancelled=1 lateness(n=2) p50=41us p99=88us max=88us");
  BOOST_TEST(fmt::format("{}", s) == text);
}

BOOST_AUTO_TEST_SUITE_END()

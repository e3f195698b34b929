// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Calendar schedules that run on the real clock: scheduled_thread_pool::
// schedule_cron, cron_timer, and the misfire rule (detail::cron_cursor) on
// synthetic times. The schedules have a seconds field, so each real-time
// case takes 1-3 s; the rest of these behaviours (cancel, errors, the
// executor form, each misfire policy after a long run) run on manual clocks
// in cron_run_virtual_test.cpp, at exact instants. Lower bounds are strict
// (a run never starts before its instant by the system clock); upper bounds
// leave a second or more, for a loaded machine.
#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;
using chronopool::cron_fire;
using chronopool::cron_misfire;
using chronopool::cron_schedule;
using chronopool::periodic_control;

namespace {

// One run as its callable saw it.
struct seen_run {
  sys::time_point scheduled;
  sys::time_point started;
  sys::time_point ended;
};

// Records runs from any thread, and checks that no two overlap.
class run_log {
 public:
  void begin() {
    if (in_flight_.fetch_add(1) != 0) overlapped_.store(true);
  }
  void end(sys::time_point scheduled, sys::time_point started) {
    in_flight_.fetch_sub(1);
    std::lock_guard lock(mutex_);
    runs_.push_back({scheduled, started, sys::now()});
  }
  std::vector<seen_run> runs() const {
    std::lock_guard lock(mutex_);
    return runs_;
  }
  bool overlapped() const { return overlapped_.load(); }

 private:
  mutable std::mutex mutex_;
  std::vector<seen_run> runs_;
  std::atomic<int> in_flight_{0};
  std::atomic<bool> overlapped_{false};
};

// Each run starts no earlier than its instant (system clock) and, on a
// loaded machine, less than @p slack after it.
void check_on_time(const std::vector<seen_run>& runs, sys::duration slack = 1500ms) {
  for (const auto& r : runs) {
    BOOST_TEST((r.started >= r.scheduled));
    BOOST_TEST((r.started < r.scheduled + slack));
  }
}

// Each instant is the schedule's next one after the previous instant.
void check_consecutive(const cron_schedule& s, const std::vector<seen_run>& runs) {
  for (std::size_t i = 1; i < runs.size(); ++i) BOOST_TEST((runs[i].scheduled == *s.next_after(runs[i - 1].scheduled)));
}

sys::time_point at(int second) { return sys::time_point(std::chrono::seconds(1'800'000'000 + second)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(cron_cursor_rule)

// The misfire rule alone, on synthetic times: an every-second schedule whose
// run for second 0 ends at 2.5 (the instants 1 and 2 have passed).
BOOST_AUTO_TEST_CASE(misfire_budget_decides_how_many_missed_instants_run) {
  const cron_schedule every_second("* * * * * *");
  const auto late = at(2) + 500ms;
  {
    chronopool::detail::cron_cursor c(every_second, cron_misfire::skip());
    BOOST_TEST((*c.start(at(0) - 1ms) == at(0)));
    BOOST_TEST((*c.peek(late) == at(3)));
    BOOST_TEST((*c.advance(late) == at(3)));  // missed 1 and 2 dropped
  }
  {
    chronopool::detail::cron_cursor c(every_second, cron_misfire::fire_once_now());
    c.start(at(0) - 1ms);
    BOOST_TEST((*c.advance(late) == at(1)));        // one run at once, for the earliest missed
    BOOST_TEST((*c.advance(late + 1ms) == at(3)));  // then the next instant ahead
    BOOST_TEST((*c.advance(at(3) + 1ms) == at(4)));  // on time: the budget is back
    BOOST_TEST((*c.advance(at(6) + 1ms) == at(5)));  // a new streak: one more run
    BOOST_TEST((*c.advance(at(6) + 2ms) == at(7)));
  }
  {
    chronopool::detail::cron_cursor c(every_second, cron_misfire::catch_up(2));
    c.start(at(0) - 1ms);
    const auto very_late = at(5) + 500ms;
    BOOST_TEST((*c.advance(very_late) == at(1)));
    BOOST_TEST((*c.advance(very_late) == at(2)));
    BOOST_TEST((*c.advance(very_late) == at(6)));  // 3, 4 and 5 dropped
  }
  {
    chronopool::detail::cron_cursor c(every_second, cron_misfire::catch_up_all());
    c.start(at(0) - 1ms);
    for (int i = 1; i <= 5; ++i) BOOST_TEST((*c.advance(at(5) + 500ms) == at(i)));
    BOOST_TEST((*c.advance(at(5) + 500ms) == at(6)));
  }
  BOOST_TEST(cron_misfire{}.max_runs == 1u);  // fire once now is the default
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pool_cron_tasks)

// Consecutive instants, each run told its own, none before its instant,
// none overlapping; periodic_control::stop completes the future normally.
BOOST_AUTO_TEST_CASE(runs_at_consecutive_instants_until_stopped) {
  chronopool::scheduled_thread_pool pool(2);
  const cron_schedule s("* * * * * *");
  run_log log;
  std::atomic<int> n{0};
  const auto before = sys::now();
  auto fut = pool.schedule_cron(s, [&](cron_fire fire) {
    log.begin();
    const auto started = sys::now();
    std::this_thread::sleep_for(50ms);
    log.end(fire.scheduled, started);
    return ++n == 2 ? periodic_control::stop : periodic_control::keep;
  });
  const auto after = sys::now();
  BOOST_REQUIRE((fut.wait_for(6s) == std::future_status::ready));
  BOOST_CHECK_NO_THROW(fut.get());
  BOOST_TEST(!fut.cancelled());
  const auto runs = log.runs();
  BOOST_REQUIRE(runs.size() == 2u);
  BOOST_TEST((runs[0].scheduled >= *s.next_after(before)));
  BOOST_TEST((runs[0].scheduled <= *s.next_after(after)));
  check_consecutive(s, runs);
  check_on_time(runs);
  BOOST_TEST(!log.overlapped());
}

// shutdown_now() hands the queued calendar task back; running it by hand
// calls f once, at once, for the instant it was queued for.
BOOST_AUTO_TEST_CASE(a_task_run_by_hand_after_shutdown_now_runs_once_for_its_instant) {
  chronopool::scheduled_thread_pool pool(1);
  const cron_schedule s("0 0 0 1 1 *");  // next New Year: far ahead
  std::optional<sys::time_point> seen;
  const auto before = sys::now();
  auto fut = pool.schedule_cron(s, [&](cron_fire fire) { seen = fire.scheduled; });
  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 1u);
  BOOST_TEST(!pending[0].run());
  BOOST_REQUIRE(seen.has_value());
  BOOST_TEST((*seen == *s.next_after(before)));
  BOOST_REQUIRE((fut.wait_for(1s) == std::future_status::ready));
  BOOST_CHECK_NO_THROW(fut.get());
}

BOOST_AUTO_TEST_CASE(the_schedule_controls_are_no_ops_on_a_calendar_task) {
  chronopool::scheduled_thread_pool pool(1);
  std::atomic<int> n{0};
  auto fut = pool.schedule_cron("0 0 1 1 *", "UTC", [&] { ++n; });  // yearly: no run during the test
  BOOST_TEST(!fut.pause());
  BOOST_TEST(!fut.paused());
  BOOST_TEST(!fut.resume());
  BOOST_TEST(!fut.reschedule(1s));
  BOOST_TEST(!fut.reschedule_next(std::chrono::steady_clock::now()));
  BOOST_TEST(!fut.trigger_now());
  BOOST_TEST(fut.cancel(false));
  BOOST_TEST(n.load() == 0);  // no extra run was added
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cron_handlers)

BOOST_AUTO_TEST_CASE(the_schedule_controls_are_no_ops_on_a_calendar_handler) {
  asio::io_context io;
  auto h = chronopool::schedule_cron(io.get_executor(), "* * * * *", "UTC", [] {});
  BOOST_TEST(!h.pause());
  BOOST_TEST(!h.paused());
  BOOST_TEST(!h.resume());
  BOOST_TEST(!h.reschedule(1s));
  BOOST_TEST(!h.reschedule_next(std::chrono::steady_clock::now()));
  BOOST_TEST(!h.trigger_now());
  BOOST_TEST(h.active());
  BOOST_TEST(h.cancel());
  io.run();  // the cancelled wait completes at once
}

BOOST_AUTO_TEST_CASE(cron_timer_ticks_at_the_instants) {
  asio::io_context io;
  const cron_schedule s("* * * * * *");
  std::vector<seen_run> runs;
  std::optional<sys::time_point> first_promised;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        chronopool::cron_timer t(co_await asio::this_coro::executor, s);
        BOOST_TEST(!t.last_tick());
        first_promised = t.next_tick();
        for (int i = 0; i < 2; ++i) {
          co_await t.async_tick(asio::use_awaitable);
          const auto now = sys::now();
          runs.push_back({*t.last_tick(), now, now});
        }
      },
      asio::detached);
  io.run_for(8s);
  BOOST_REQUIRE(runs.size() == 2u);
  BOOST_TEST((runs[0].scheduled == *first_promised));
  check_consecutive(s, runs);
  check_on_time(runs);
}

BOOST_AUTO_TEST_CASE(cron_timer_skips_what_a_long_body_missed) {
  asio::io_context io;
  const cron_schedule s("* * * * * *");
  std::vector<sys::time_point> ticks;
  sys::time_point body_end{};
  sys::time_point previewed{};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        chronopool::cron_timer t(co_await asio::this_coro::executor, s, cron_misfire::skip());
        co_await t.async_tick(asio::use_awaitable);
        ticks.push_back(*t.last_tick());
        std::this_thread::sleep_for(1500ms);  // the loop body overruns an instant
        body_end = sys::now();
        previewed = t.next_tick();
        co_await t.async_tick(asio::use_awaitable);
        ticks.push_back(*t.last_tick());
        BOOST_TEST((sys::now() >= ticks[1]));
      },
      asio::detached);
  io.run_for(8s);
  BOOST_REQUIRE(ticks.size() == 2u);
  BOOST_TEST((ticks[1] == *s.next_after(body_end)));
  BOOST_TEST((previewed == ticks[1]));
}

BOOST_AUTO_TEST_CASE(cron_timer_cancel_aborts_the_wait_without_consuming_the_tick) {
  asio::io_context io;
  chronopool::cron_timer t(io, cron_schedule("* * * * * *"));
  const auto promised = t.next_tick();
  sys_ns::error_code got;
  bool done = false;
  t.async_tick([&](sys_ns::error_code ec) {
    got = ec;
    done = true;
  });
  t.cancel();
  io.run_for(500ms);
  BOOST_TEST(done);
  BOOST_TEST((got == asio::error::operation_aborted));
  BOOST_TEST(!t.last_tick());
  BOOST_TEST((t.next_tick() == promised));
}

BOOST_AUTO_TEST_SUITE_END()

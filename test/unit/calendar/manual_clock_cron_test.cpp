// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Calendar schedules on a manual clock: schedule_cron on a pool and
// cron_timer / schedule_cron(ex) on an io_context fire at their exact
// virtual instants, across a daylight-saving change of Europe/Berlin, and a
// step of the virtual system clock moves them as a real step would.
#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <mutex>
#include <ostream>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;

namespace {

sys::time_point utc(std::chrono::year_month_day day, std::chrono::hours h) {
  return sys::time_point(std::chrono::sys_days(day)) + h;
}

/// A run: the instant it was told and the system time it saw.
struct fire {
  sys::time_point scheduled;
  sys::time_point seen;
  bool operator==(const fire&) const = default;
};

std::ostream& operator<<(std::ostream& os, const fire& f) {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  return os << duration_cast<seconds>(f.scheduled.time_since_epoch()).count() << "s seen "
            << duration_cast<seconds>(f.seen.time_since_epoch()).count() << "s";
}

/// Runs recorded by pool threads; read by the test after advance() returned.
class fires {
 public:
  void add(sys::time_point scheduled, sys::time_point seen) {
    const std::lock_guard lock(mutex_);
    fires_.push_back({scheduled, seen});
  }
  std::vector<fire> take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(fires_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<fire> fires_;
};

/// 02:00 Berlin time daily around the spring change (29 March 2026, 02:00
/// CET skipped to 03:00 CEST at 01:00 UTC): 02:00 CET is 01:00 UTC, the
/// skipped 02:00 runs once at the change, 02:00 CEST is 00:00 UTC.
const std::vector<sys::time_point> spring{
    utc(std::chrono::year{2026} / 3 / 28, 1h), utc(std::chrono::year{2026} / 3 / 29, 1h), utc(std::chrono::year{2026} / 3 / 30, 0h)};

/// Around the autumn change (25 October 2026, 03:00 CEST back to 02:00 CET
/// at 01:00 UTC): the repeated 02:00 runs once, at its first occurrence.
const std::vector<sys::time_point> autumn{
    utc(std::chrono::year{2026} / 10 / 24, 0h), utc(std::chrono::year{2026} / 10 / 25, 0h), utc(std::chrono::year{2026} / 10 / 26, 1h)};

std::vector<fire> exact(const std::vector<sys::time_point>& instants) {
  std::vector<fire> out;
  for (const auto& i : instants) out.push_back({i, i});
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(manual_clock_cron_suite)

BOOST_AUTO_TEST_CASE(pool_schedule_cron_runs_at_exact_instants_across_both_dst_changes) {
  for (const auto& instants : {spring, autumn}) {
    fires log;
    chronopool::scheduled_thread_pool_options o;
    o.use_manual_clock = true;
    chronopool::scheduled_thread_pool pool(o);
    chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
    clock.set_system_time(instants.front() - 12h);
    const auto start = clock.now();
    auto f = pool.schedule_cron("0 2 * * *", "Europe/Berlin",
                                [&](chronopool::cron_fire fire) { log.add(fire.scheduled, pool.system_now()); });
    clock.advance(instants.back() - instants.front() + 12h);
    BOOST_TEST(log.take() == exact(instants), boost::test_tools::per_element());
    // The steady time moved by as much as the wall clock: no step.
    BOOST_TEST((clock.now() - start == instants.back() - instants.front() + 12h));
    f.cancel(false);
  }
}

BOOST_AUTO_TEST_CASE(a_step_of_the_pool_clock_moves_calendar_work_as_a_real_step) {
  fires log;
  chronopool::scheduled_thread_pool_options o;
  o.use_manual_clock = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  clock.set_system_time(spring[0] - 12h);
  const auto start = clock.now();
  auto f = pool.schedule_cron("0 2 * * *", "Europe/Berlin",
                              [&](chronopool::cron_fire fire) { log.add(fire.scheduled, pool.system_now()); });
  // Forward onto the first instant: it runs in the step, the steady time stays.
  clock.step_system_time(12h);
  BOOST_TEST(log.take() == exact({spring[0]}), boost::test_tools::per_element());
  BOOST_TEST((clock.now() == start));
  // Back by an hour: the next instant is 25 h of steady time away.
  clock.step_system_time(-1h);
  clock.advance(24h + 59min);
  BOOST_TEST(log.take().empty());
  clock.advance(1min);
  BOOST_TEST(log.take() == exact({spring[1]}), boost::test_tools::per_element());
  BOOST_TEST((clock.now() - start == 25h));
  f.cancel(false);
}

BOOST_AUTO_TEST_CASE(cron_timer_and_schedule_cron_on_a_manual_io_context_fire_at_exact_instants) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(spring[0] - 12h);
  std::vector<fire> ticks;
  std::vector<fire> handled;
  chronopool::cron_timer timer(io, chronopool::cron_schedule("0 2 * * *", "Europe/Berlin"));
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int k = 0; k < 3; ++k) {
          co_await timer.async_tick(asio::use_awaitable);
          ticks.push_back({*timer.last_tick(), clock.system_now()});
        }
      },
      asio::detached);
  auto handle = chronopool::schedule_cron(io.get_executor(), "0 2 * * *", "Europe/Berlin",
                                          [&](chronopool::cron_fire f) { handled.push_back({f.scheduled, clock.system_now()}); });
  clock.advance(spring.back() - spring.front() + 12h);
  BOOST_TEST(ticks == exact(spring), boost::test_tools::per_element());
  BOOST_TEST(handled == exact(spring), boost::test_tools::per_element());
  // A step forward past the next instant runs it at once, as a real step would.
  clock.step_system_time(24h);
  BOOST_TEST(handled.size() == 4u);
  BOOST_TEST((handled.back().scheduled == utc(std::chrono::year{2026} / 3 / 31, 0h)));
  handle.cancel();
}

// A calendar schedule's stats: lateness from each instant by the system
// clock (exactly 0 on time, the step's overshoot after a step past an
// instant) and run time by the steady clock (exactly what the handler
// stalled).
BOOST_AUTO_TEST_CASE(schedule_cron_on_a_manual_io_context_records_lateness_and_run_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  clock.set_system_time(spring[0] - 12h);
  auto handle = chronopool::schedule_cron(io.get_executor(), "0 2 * * *", "Europe/Berlin",
                                          [&] { clock.stall(3ms); });
  clock.advance(spring.back() - spring.front() + 12h);
  chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == 3u);
  BOOST_TEST(s.lateness_histogram.count() == 3u);
  BOOST_TEST((s.lateness_histogram.max() == std::chrono::nanoseconds(0)));
  BOOST_TEST(s.run_time_histogram.count() == 3u);
  BOOST_TEST((s.run_time_histogram.min() == std::chrono::nanoseconds(3ms)));
  BOOST_TEST((s.run_time_histogram.max() == std::chrono::nanoseconds(3ms)));
  // Now at the last instant; a step of 36 h lands 12 h past the next one
  // (31 March, 00:00 UTC), which then runs at once, that late.
  clock.step_system_time(36h);
  s = handle.stats();
  BOOST_TEST(s.runs == 4u);
  BOOST_TEST((s.lateness_histogram.max() >= std::chrono::nanoseconds(12h)));
  BOOST_TEST((s.lateness_histogram.max() <= std::chrono::nanoseconds(12h + 1s)));
  handle.cancel();
}

BOOST_AUTO_TEST_SUITE_END()

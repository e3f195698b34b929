// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Calendar schedules on an executor (chronopool::schedule_cron) and
// cron_timer follow steps of the system clock, injected through
// detail::inject_clock_step: a forward step over the next instant runs it at
// once, a backward step does not run it early (cron_timer here; both on a
// manual clock in cron_run_virtual_test.cpp).
#include "../../support/injected_step.hpp"

#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/detail/time/clock_steps.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;
using chronopool::cron_fire;
using chronopool::cron_schedule;
using steady = std::chrono::steady_clock;

namespace {

/// Runs (or ticks) as seen: the instant, and the system clock when it started.
class step_fire_log {
 public:
  void add(cpd::sys_time scheduled) {
    const std::lock_guard lock(mutex_);
    fires_.push_back({scheduled, cpd::system_now(), steady::now()});
  }
  struct fire {
    cpd::sys_time scheduled;
    cpd::sys_time started;
    steady::time_point at;
  };
  std::vector<fire> fires() const {
    const std::lock_guard lock(mutex_);
    return fires_;
  }
  std::size_t size() const { return fires().size(); }
  /// Waits (polling) until @p n fires were seen, at most @p limit.
  bool wait_for(std::size_t n, std::chrono::milliseconds limit) const {
    const auto until = steady::now() + limit;
    while (size() < n) {
      if (steady::now() > until) return false;
      std::this_thread::sleep_for(2ms);
    }
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<fire> fires_;
};

class running {
 public:
  explicit running(asio::io_context& io) : io_(io), guard_(io.get_executor()), thread_([this] { io_.run(); }) {}
  ~running() {
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  running(const running&) = delete;
  running& operator=(const running&) = delete;

 private:
  asio::io_context& io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// Daily at midnight UTC: the next instant is hours away unless the clock moves.
const cron_schedule& nightly() {
  static const cron_schedule s("0 0 * * *", "UTC");
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cron_steps)

BOOST_AUTO_TEST_CASE(executor_form_runs_an_instant_a_forward_step_passed_at_once) {
  asio::io_context io;
  step_fire_log log;
  running r(io);
  const cpd::sys_time next = *nightly().next_after(cpd::system_now());
  auto h = chronopool::schedule_cron(io.get_executor(), nightly(), [&](cron_fire f) { log.add(f.scheduled); });
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(log.size() == 0u);
  const auto start = steady::now();
  {
    test_support::injected_step step(next - cpd::system_now() + 2s);  // two seconds past the instant
    BOOST_REQUIRE(log.wait_for(1, 5s));
  }
  const auto fires = log.fires();
  BOOST_TEST((fires[0].scheduled == next));
  BOOST_TEST((fires[0].started >= next));
  BOOST_TEST((fires[0].at - start < 5s));  // not the hours the steady deadline said
  h.cancel();
}

BOOST_AUTO_TEST_CASE(cron_timer_ticks_an_instant_a_forward_step_passed_at_once) {
  asio::io_context io;
  step_fire_log log;
  std::optional<chronopool::cron_timer> t;
  running r(io);
  const cpd::sys_time next = *nightly().next_after(cpd::system_now());
  t.emplace(io, nightly());
  BOOST_TEST((t->next_tick() == next));
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await t->async_tick(asio::use_awaitable);
        log.add(*t->last_tick());
      },
      asio::detached);
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(log.size() == 0u);
  const auto start = steady::now();
  {
    test_support::injected_step step(next - cpd::system_now() + 2s);
    BOOST_REQUIRE(log.wait_for(1, 5s));
  }
  const auto fires = log.fires();
  BOOST_TEST((fires[0].scheduled == next));
  BOOST_TEST((fires[0].started >= next));
  BOOST_TEST((fires[0].at - start < 5s));
}

BOOST_AUTO_TEST_CASE(cron_timer_does_not_tick_early_after_a_backward_step) {
  asio::io_context io;
  step_fire_log log;
  std::optional<chronopool::cron_timer> t;
  running r(io);
  t.emplace(io, cron_schedule("* * * * * *"));
  std::atomic<bool> stop{false};  // (read on the io thread)
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (!stop.load()) {
          co_await t->async_tick(asio::use_awaitable);
          log.add(*t->last_tick());
        }
      },
      asio::detached);
  {
    // Every instant armed so far is at most a second away by the real
    // clock, and an hour by the stepped one. A tick already on its way at
    // the step is counted first; then 1.1 s pass the armed instant by the
    // real clock, and nothing may tick.
    test_support::injected_step step(-1h);
    std::this_thread::sleep_for(100ms);
    const std::size_t held = log.size();
    std::this_thread::sleep_for(1100ms);
    BOOST_TEST(log.size() == held);
  }
  const std::size_t back = log.size();
  BOOST_TEST(log.wait_for(back + 1, 3s));
  stop.store(true);
  asio::post(io, [&] { t->cancel(); });
  for (const auto& f : log.fires()) BOOST_TEST((f.started >= f.scheduled));
}

BOOST_AUTO_TEST_SUITE_END()

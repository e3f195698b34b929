// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_thread_pool::schedule_cron follows steps of the wall clock.
//
// The steps are injected (detail::inject_clock_step: process-wide, notified
// at once); Boost.Test runs these cases one after the other and each steps
// back before it ends, so the real-time cases of this executable see the
// real clock.
#include "../../support/bounded_wait.hpp"
#include "../../support/injected_step.hpp"
#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;
using chronopool::cron_fire;
using chronopool::cron_schedule;
namespace cpd = chronopool::detail;

namespace {

/// The instants runs were told, and whether one started before its instant
/// by the library's clock.
class fire_log {
 public:
  void record(cron_fire fire) {
    const auto now = cpd::system_now();
    std::lock_guard lock(mutex_);
    if (now < fire.scheduled) ++early_;
    instants_.push_back(fire.scheduled);
  }
  std::vector<sys::time_point> instants() const {
    std::lock_guard lock(mutex_);
    return instants_;
  }
  std::size_t size() const { return instants().size(); }
  int early() const {
    std::lock_guard lock(mutex_);
    return early_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<sys::time_point> instants_;
  int early_ = 0;
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  return test_support::eventually(pred, limit);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pool_cron_clock_steps)

BOOST_AUTO_TEST_CASE(a_forward_step_over_the_next_instant_runs_it_at_once) {
  chronopool::scheduled_thread_pool pool(2);
  const cron_schedule s("0 0 3 * * *", "UTC");  // daily, 03:00:00 UTC
  fire_log log;
  const auto next = *s.next_after(cpd::system_now());
  auto fut = pool.schedule_cron(s, [&](cron_fire fire) { log.record(fire); });
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(log.size() == 0u);
  // Just past the next instant, well before the one after it (a day later).
  const auto submitted = std::chrono::steady_clock::now();
  test_support::injected_step step(next - cpd::system_now() + 1min);
  BOOST_REQUIRE(eventually([&] { return log.size() >= 1; }));
  BOOST_TEST((std::chrono::steady_clock::now() - submitted < 10s));
  std::this_thread::sleep_for(100ms);
  const auto seen = log.instants();
  BOOST_REQUIRE(seen.size() == 1u);  // the next one is a day ahead
  BOOST_TEST((seen[0] == next));
  BOOST_TEST(log.early() == 0);
  BOOST_TEST(!fut.done());
  BOOST_TEST((fut.delay() > 23h));
  fut.cancel();
}

BOOST_AUTO_TEST_CASE(a_backward_step_does_not_run_it_early) {
  chronopool::scheduled_thread_pool pool(2);
  fire_log log;
  auto fut = pool.schedule_cron("* * * * * *", "UTC", [&](cron_fire fire) { log.record(fire); });
  std::size_t at_step = 0;
  {
    // The instant armed is at most a second away by the real clock, an hour
    // by the stepped one. A run already starting at the step is counted
    // first; then 1.1 s pass the armed instant by the real clock.
    test_support::injected_step step(-1h);
    std::this_thread::sleep_for(100ms);
    at_step = log.size();
    std::this_thread::sleep_for(1100ms);
    BOOST_TEST(log.size() == at_step);
    BOOST_TEST((fut.delay() > 59min));
  }
  // Back at the real clock: the armed instant has passed, the runs resume.
  BOOST_TEST(eventually([&] { return log.size() > at_step; }));
  BOOST_TEST(log.early() == 0);
  fut.cancel();
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail/platform/clock_step_watch.hpp and the registry of
// detail/time/clock_steps.hpp built on it.
#include "../../support/bounded_wait.hpp"
#include "../../support/machine_clock.hpp"
#include "platform_expectation.hpp"

#include <chronopool/detail/platform/clock_step_watch.hpp>
#include <chronopool/detail/time/clock_steps.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

namespace cpd = chronopool::detail;
namespace cpp = chronopool::detail::platform;
using namespace std::chrono_literals;

namespace {

struct counting_listener final : cpd::clock_step_listener {
  std::atomic<int> steps{0};
  void on_clock_step() noexcept override { steps.fetch_add(1); }
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
  return test_support::eventually(pred, limit);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(clock_step_watch)

BOOST_AUTO_TEST_CASE(interrupt_ends_a_pending_wait_and_every_later_one) {
  cpp::clock_step_watch watch;
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = watch.wait() ? 1 : 0; });
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(result.load() == -1);  // no step happened: it still waits
  watch.interrupt();
  waiter.join();
  BOOST_TEST(result.load() == 0);
  BOOST_TEST(!watch.wait());
}

BOOST_AUTO_TEST_CASE(the_notice_delay_is_what_the_platform_promises) {
  if (platform_test::expect_linux())
    BOOST_TEST(cpp::clock_step_watch::notice_delay_ns() == 0);
  else
    BOOST_TEST(cpp::clock_step_watch::notice_delay_ns() == 100'000'000);
}

// Opt-in: steps CLOCK_REALTIME forward by 3 s and back, restoring it (to
// within the microseconds between the calls).
BOOST_AUTO_TEST_CASE(real_steps_of_the_clock_are_reported) {
  if (!test_support::may_step_the_machine_clock()) {
    BOOST_TEST_MESSAGE("skipped: set CHRONOPOOL_TEST_CLOCK_STEP=1 to let this test step the machine's clock");
    return;
  }
  counting_listener l;
  cpd::subscribe_clock_steps(l);
  const auto offset_before = std::chrono::system_clock::now().time_since_epoch() -
                             std::chrono::steady_clock::now().time_since_epoch();
  if (!test_support::step_machine_clock(3s)) {
    cpd::unsubscribe_clock_steps(l);
    BOOST_FAIL("CHRONOPOOL_TEST_CLOCK_STEP=1 but this process may not set CLOCK_REALTIME (errno " << errno << ")");
  }
  BOOST_TEST(eventually([&] { return l.steps.load() >= 1; }, 1s));
  BOOST_TEST_REQUIRE(test_support::step_machine_clock(-3s));
  BOOST_TEST(eventually([&] { return l.steps.load() >= 2; }, 1s));
  cpd::unsubscribe_clock_steps(l);
  const auto offset_after = std::chrono::system_clock::now().time_since_epoch() -
                            std::chrono::steady_clock::now().time_since_epoch();
  BOOST_TEST((offset_after - offset_before < 50ms && offset_before - offset_after < 50ms));
}

BOOST_AUTO_TEST_CASE(an_injected_step_moves_system_now_and_tells_every_listener_at_once) {
  counting_listener a;
  counting_listener b;
  cpd::subscribe_clock_steps(a);
  cpd::subscribe_clock_steps(b);
  const auto before = cpd::system_now();
  const auto seen = cpd::clock_steps_seen();
  cpd::inject_clock_step(1h);
  BOOST_TEST(a.steps.load() == 1);
  BOOST_TEST(b.steps.load() == 1);
  BOOST_TEST(cpd::clock_steps_seen() == seen + 1);
  const auto after = cpd::system_now();
  BOOST_TEST((after - before >= 1h));
  BOOST_TEST((after - before < 1h + 1s));
  cpd::unsubscribe_clock_steps(a);
  cpd::inject_clock_step(-1h);  // back to the real clock
  BOOST_TEST(a.steps.load() == 1);  // no longer subscribed
  BOOST_TEST(b.steps.load() == 2);
  cpd::unsubscribe_clock_steps(b);
  BOOST_TEST((cpd::system_now() - std::chrono::system_clock::now() < 1s));
}

BOOST_AUTO_TEST_CASE(a_steady_deadline_follows_the_library_s_system_clock) {
  const auto in_ten = cpd::system_now() + 10s;
  const auto d = cpd::steady_deadline_for(in_ten);
  const auto ahead = d - std::chrono::steady_clock::now();
  BOOST_TEST((ahead > 9s && ahead <= 10s));
  cpd::inject_clock_step(5s);  // the instant is now 5 s away
  const auto ahead_after = cpd::steady_deadline_for(in_ten) - std::chrono::steady_clock::now();
  BOOST_TEST((ahead_after > 4s && ahead_after <= 5s));
  cpd::inject_clock_step(-5s);
  // An instant in the past stands for a deadline already passed, and "never" stays never.
  const auto past = cpd::steady_deadline_for(cpd::system_now() - 1h);
  BOOST_TEST((past <= std::chrono::steady_clock::now()));
  BOOST_TEST((cpd::steady_deadline_for(cpd::sys_time::max()) == cpd::time_point::max()));
}

BOOST_AUTO_TEST_CASE(the_watcher_thread_stops_with_the_last_listener_and_starts_again) {
  for (int round = 0; round < 3; ++round) {
    counting_listener l;
    cpd::subscribe_clock_steps(l);
    cpd::inject_clock_step(0ns);
    BOOST_TEST(l.steps.load() == 1);
    cpd::unsubscribe_clock_steps(l);
  }
}

BOOST_AUTO_TEST_SUITE_END()

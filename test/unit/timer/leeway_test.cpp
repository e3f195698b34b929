// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A timer's leeway: expires_at/expires_after(t, leeway) move the expiry up to
// the end of its leeway-wide slot, so that timers due within one slot share a
// deadline and complete together, never before they were asked to.
#include <chronopool/async_sleep.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "timer_test_support.hpp"

namespace {

std::int64_t ns(steady::time_point t) { return t.time_since_epoch().count(); }

/// What each timer's handler saw.
struct fired {
  std::size_t index;
  steady::time_point at;
  error_code ec;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(leeway)

BOOST_AUTO_TEST_CASE(expiry_is_moved_up_to_the_end_of_its_slot) {
  asio::io_context io;
  timer t(io);
  const auto before = steady::now();
  BOOST_TEST(t.expires_after(30ms, 10ms) == 0u);
  const auto after = steady::now();
  const auto e = t.expiry();
  BOOST_TEST(ns(e) % 10'000'000 == 0);  // a slot end: a multiple of the leeway
  BOOST_TEST(ns(e) >= ns(before + 30ms));  // never earlier than asked
  BOOST_TEST(ns(e) < ns(after + 30ms + 10ms));  // less than a leeway later

  // expires_at: the same slot end for every time in the slot, and a time on
  // a slot end stays.
  const auto slot_end = steady::time_point(steady::duration(ns(e)));
  t.expires_at(slot_end - 9ms, 10ms);
  BOOST_TEST(ns(t.expiry()) == ns(slot_end));
  t.expires_at(slot_end, 10ms);
  BOOST_TEST(ns(t.expiry()) == ns(slot_end));
  t.expires_at(slot_end + 1ns, 10ms);
  BOOST_TEST(ns(t.expiry()) == ns(slot_end + 10ms));
  // A zero leeway is an exact expiry.
  t.expires_at(slot_end + 1ns, 0ms);
  BOOST_TEST(ns(t.expiry()) == ns(slot_end + 1ns));
}

BOOST_AUTO_TEST_CASE(bad_leeways_are_rejected_and_huge_ones_saturate) {
  asio::io_context io;
  timer t(io);
  t.expires_after(1h);
  const auto kept = t.expiry();
  BOOST_CHECK_THROW(t.expires_after(1s, -1ns), std::invalid_argument);
  BOOST_CHECK_THROW(t.expires_at(steady::now(), -1ms), std::invalid_argument);
  BOOST_CHECK_THROW(t.expires_after(1s, std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN())),
                    std::invalid_argument);
  BOOST_TEST(ns(t.expiry()) == ns(kept));  // a rejected call changes nothing
  // "Never" stays never; a slot end past the clock's range is never, not a
  // wrapped time in the past.
  t.expires_after(steady::duration::max(), 1ms);
  BOOST_TEST(ns(t.expiry()) == ns(steady::time_point::max()));
  t.expires_at(steady::time_point::max() - 1ns, 1s);
  BOOST_TEST(ns(t.expiry()) == ns(steady::time_point::max()));
  t.expires_after(1ms, std::chrono::hours::max());
  BOOST_TEST(ns(t.expiry()) == ns(steady::time_point::max()));
}

BOOST_AUTO_TEST_CASE(setting_an_expiry_with_leeway_cancels_pending_waits) {
  asio::io_context io;
  timer t(io, 1h);
  std::vector<error_code> seen;
  t.async_wait([&](error_code ec) { seen.push_back(ec); });
  BOOST_TEST(t.expires_after(1ms, 1ms) == 1u);
  t.async_wait([&](error_code ec) { seen.push_back(ec); });
  io.run_for(long_wait);
  BOOST_TEST_REQUIRE(seen.size() == 2u);
  BOOST_TEST(seen[0] == asio::error::operation_aborted);
  BOOST_TEST(!seen[1]);
}

// Timers spread over most of one slot share its end as their deadline: they
// get the same expiry(), so one wake-up takes them all, and they complete
// in the order their waits started (one starting thread: one shard), none
// before its own requested expiry.
constexpr auto slot_leeway = 50ms;
constexpr std::size_t slot_timers = 40;

/// The start of the next slot at least 20 ms away: far enough for every
/// timer to be armed before it.
steady::time_point next_slot() { return chronopool::detail::round_up_to_slot(steady::now() + 20ms, slot_leeway); }

/// Timer i of a slot: asks for 1 + i ms into it, so the 40 spread over 40 ms.
template <class Context>
std::vector<std::unique_ptr<timer>> timers_in_slot(Context& ctx, steady::time_point slot_start) {
  std::vector<std::unique_ptr<timer>> timers;
  for (std::size_t i = 0; i < slot_timers; ++i) {
    timers.push_back(std::make_unique<timer>(ctx));
    timers.back()->expires_at(slot_start + 1ms + i * 1ms, slot_leeway);
    BOOST_TEST(ns(timers.back()->expiry()) == ns(slot_start + slot_leeway));
  }
  return timers;
}

BOOST_AUTO_TEST_CASE(timers_in_one_slot_complete_together_in_start_order_on_an_io_context) {
  asio::io_context io;
  const auto slot_start = next_slot();
  auto timers = timers_in_slot(io, slot_start);
  std::vector<fired> seen;
  for (std::size_t i = 0; i < slot_timers; ++i)
    timers[i]->async_wait([&seen, i](error_code ec) { seen.push_back({i, steady::now(), ec}); });
  io.run_for(long_wait);
  BOOST_TEST_REQUIRE(seen.size() == slot_timers);
  for (std::size_t k = 0; k < slot_timers; ++k) {
    BOOST_TEST(seen[k].index == k);
    BOOST_TEST(!seen[k].ec);
    BOOST_TEST(ns(seen[k].at) >= ns(slot_start + slot_leeway));  // the slot's end: after every request
  }
}

BOOST_AUTO_TEST_CASE(timers_in_one_slot_complete_together_in_start_order_on_a_one_thread_pool) {
  chronopool::scheduled_thread_pool pool(1);
  const auto slot_start = next_slot();
  auto timers = timers_in_slot(pool, slot_start);
  std::mutex m;
  std::vector<fired> seen;
  std::promise<void> all_done;
  for (std::size_t i = 0; i < slot_timers; ++i) {
    timers[i]->async_wait([&, i](error_code ec) {
      std::lock_guard lock(m);
      seen.push_back({i, steady::now(), ec});
      if (seen.size() == slot_timers) all_done.set_value();
    });
  }
  BOOST_TEST_REQUIRE((all_done.get_future().wait_for(long_wait) == std::future_status::ready));
  std::lock_guard lock(m);
  for (std::size_t k = 0; k < slot_timers; ++k) {
    BOOST_TEST(seen[k].index == k);
    BOOST_TEST(!seen[k].ec);
    BOOST_TEST(ns(seen[k].at) >= ns(slot_start + slot_leeway));
  }
}

// A sleep whose end lands 1 ms into a slot completes at the slot's end, not
// near the end it asked for. Lower bounds only.
BOOST_AUTO_TEST_CASE(sleeps_with_a_leeway_end_at_their_slot_end) {
  constexpr auto leeway = 40ms;
  asio::io_context io;
  const auto now = steady::now();
  const auto slot_start = chronopool::detail::round_up_to_slot(now + 10ms, leeway);
  const auto d = slot_start + 1ms - now;  // now + d: 1 ms into the slot
  std::vector<steady::time_point> ended;
  error_code seen{asio::error::would_block};
  chronopool::async_sleep(io.get_executor(), d, leeway, [&](error_code ec) {
    seen = ec;
    ended.push_back(steady::now());
  });
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await chronopool::sleep_for(d - (steady::now() - now), leeway);
        ended.push_back(steady::now());
      },
      asio::detached);
  // Without a leeway, the same call shapes still mean what they did.
  chronopool::async_sleep(io.get_executor(), 1ms, [&](error_code ec) { BOOST_TEST(!ec); });
  io.run_for(long_wait);
  BOOST_TEST(!seen);
  BOOST_TEST_REQUIRE(ended.size() == 2u);
  for (const auto& t : ended) BOOST_TEST(ns(t) >= ns(slot_start + leeway));
  BOOST_CHECK_THROW(chronopool::async_sleep(io.get_executor(), 1ms, -1ms, [](error_code) {}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

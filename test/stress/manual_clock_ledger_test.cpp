// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Randomized stress of a pool on a manual clock, with a ledger: producer
// threads submit one-shot tasks with random delays (zero, negative, "never"
// among them) and cancel some, while the test's thread advances the clock by
// random steps and a fixed-rate task ticks. Every one-shot must end exactly
// once (ran, or cancelled before it started, or, as in Java, cancelled while
// it was already running), none may start before its deadline by the pool's
// clock, every one due by the end must have run, and the fixed-rate task
// must have run at exactly its ideal instants, one per period passed: the
// driver settles the pool deadline by deadline while submissions race it.
// Counts scale with CHRONOPOOL_STRESS_SCALE (stress_config.hpp).
#include "random_submitters.hpp"
#include "stress_config.hpp"

#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

constexpr int clock_producers = 3;
constexpr std::size_t default_tasks = 30'000;  // over all producers, at scale 1

struct ledger {
  explicit ledger(std::size_t n) : ran(n), early(n), deadline(n), cancel_won(n), cancelled_at(n) {}
  std::vector<std::atomic<std::uint8_t>> ran;
  std::vector<std::atomic<std::uint8_t>> early;  // started before its deadline by the pool's clock
  std::vector<std::atomic<std::int64_t>> deadline;  // ns since the steady epoch
  // Whether a cancel(false) returned true (0: never, else 1), and the
  // pool's time read just after it returned. A task may be cancelled while
  // it runs, but one cancelled while the pool's time was still before its
  // deadline cannot have started (no task starts early), so it must not
  // run. (When the task's own first statement ran is no bound: its thread
  // may be held up between starting it and running that statement.)
  std::vector<std::atomic<std::uint8_t>> cancel_won;
  std::vector<std::atomic<std::int64_t>> cancelled_at;
};

}  // namespace

BOOST_AUTO_TEST_CASE(manual_clock_ledger_under_concurrent_submissions) {
  const std::size_t total = std::max<std::size_t>(
      clock_producers, static_cast<std::size_t>(static_cast<double>(default_tasks) * stress::scale()));
  const std::size_t per_producer = total / clock_producers;
  const std::uint64_t seed = stress::base_seed() + 42;
  BOOST_TEST_MESSAGE("manual clock ledger: " << per_producer * clock_producers << " tasks, seed " << seed << ", build "
                                             << stress::build_name());
  ledger l(per_producer * clock_producers);
  std::mutex ticks_mutex;
  std::vector<steady::time_point> ticks;
  std::vector<chronopool::scheduled_future<void>> never_run;  // "never" tasks, checked at the end
  std::mutex never_mutex;

  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.use_manual_clock = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();
  auto ticker = pool.schedule_at_fixed_rate(start + 7ms, 7ms, [&] {
    const std::lock_guard lock(ticks_mutex);
    ticks.push_back(pool.now());
  });

  std::atomic<std::size_t> submitted{0};
  auto never = [&](std::size_t id) {
    // Never: must neither run nor hold up run_until_idle().
    auto f = pool.schedule(std::chrono::hours::max(), [&l, id] { l.ran[id].fetch_add(1); });
    const std::lock_guard lock(never_mutex);
    never_run.push_back(std::move(f));
    submitted.fetch_add(1);
  };
  auto timed = [&](std::size_t id, std::chrono::milliseconds delay, bool cancel_at_once) {
    // The deadline is at least the time read here plus the delay (later
    // when the clock moves meanwhile): a run before that is early.
    l.deadline[id].store((pool.now() + std::max(delay, 0ms)).time_since_epoch().count());
    auto f = pool.schedule(delay, [&l, &pool, id] {
      if (pool.now().time_since_epoch().count() < l.deadline[id].load()) l.early[id].store(1);
      l.ran[id].fetch_add(1);
    });
    if (cancel_at_once && f.cancel(false)) {
      l.cancelled_at[id].store(pool.now().time_since_epoch().count());
      l.cancel_won[id].store(1);
    }
    submitted.fetch_add(1);
  };
  std::vector<std::thread> threads =
      stress::start_random_submitters({clock_producers, per_producer, seed}, never, timed);
  // The clock moves by random steps while the clock_producers submit.
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> step_us(0, 3000);
  while (submitted.load() < l.ran.size()) clock.advance(std::chrono::microseconds(step_us(rng)));
  for (auto& t : threads) t.join();
  // Everything submitted is due within 50 ms of its submission.
  clock.advance(100ms);
  const steady::time_point ended = clock.now();
  ticker.cancel(false);
  clock.run_until_idle();

  std::size_t ran = 0, cancelled = 0, cancelled_while_running = 0, not_once = 0, ran_after_cancel = 0, early = 0,
              never_ran = 0;
  for (std::size_t id = 0; id < l.ran.size(); ++id) {
    const std::uint8_t r = l.ran[id].load();
    const bool was_cancelled = l.cancel_won[id].load() != 0;
    early += l.early[id].load();
    if (r > 1) ++not_once;
    if (!was_cancelled) {
      ran += r;
    } else if (r == 0) {
      ++cancelled;
    } else {
      ++cancelled_while_running;
      if (l.cancelled_at[id].load() < l.deadline[id].load()) ++ran_after_cancel;
    }
  }
  {
    const std::lock_guard lock(never_mutex);
    for (auto& f : never_run) {
      if (f.done()) ++never_ran;
      f.cancel(false);
    }
  }
  const std::size_t never_count = never_run.size();
  BOOST_TEST_MESSAGE("manual clock ledger: ran " << ran << ", cancelled " << cancelled << " (while running "
                                                 << cancelled_while_running << "), never " << never_count << ", ticks "
                                                 << ticks.size());
  BOOST_TEST(not_once == 0u);
  BOOST_TEST(ran_after_cancel == 0u);
  BOOST_TEST(early == 0u);
  BOOST_TEST(never_ran == 0u);
  BOOST_TEST(ran + cancelled + cancelled_while_running + never_count == l.ran.size());
  // The ticker: one run per 7 ms passed, each at its ideal instant exactly.
  const std::lock_guard lock(ticks_mutex);
  BOOST_REQUIRE(!ticks.empty());
  bool exact = true;
  for (std::size_t k = 0; k < ticks.size(); ++k) exact = exact && ticks[k] == start + 7ms * static_cast<int>(k + 1);
  BOOST_TEST(exact);
  BOOST_TEST(ticks.size() == static_cast<std::size_t>((ended - start) / 7ms));
}

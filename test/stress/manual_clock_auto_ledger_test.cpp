// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The manual-clock ledger with auto-advance and no driver: producer threads
// submit one-shot tasks with random delays (zero, negative, "never" among
// them) and cancel some, while nobody advances the clock; the pool's idle
// threads move it. Every one-shot must end exactly once, none may start
// before its deadline, and none after it either: the time only jumps to
// the earliest deadline queued, with every thread idle, so a task starts
// with now() at most its deadline as read after its submission. Every
// task due must run; "never" tasks must not. Counts scale with
// CHRONOPOOL_STRESS_SCALE (stress_config.hpp).
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
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace auto_ledger {

using steady = std::chrono::steady_clock;

constexpr int producers = 3;
constexpr std::size_t default_task_count = 30'000;  // over all producers, at scale 1

struct book {
  explicit book(std::size_t n) : ran(n), early(n), late(n), earliest(n), latest(n), cancelled(n), done(n) {}
  std::vector<std::atomic<std::uint8_t>> ran;
  std::vector<std::atomic<std::uint8_t>> early;  // started before its deadline's lower bound
  std::vector<std::atomic<std::uint8_t>> late;   // started after its deadline's upper bound
  // The deadline lies between the pool's time read before schedule() plus
  // the delay and the time read after it plus the delay (ns since the epoch).
  std::vector<std::atomic<std::int64_t>> earliest;
  std::vector<std::atomic<std::int64_t>> latest;
  // cancel(false) succeeded: before the run, or (as Java allows) during it.
  std::vector<std::atomic<std::uint8_t>> cancelled;
  std::vector<std::atomic<std::uint8_t>> done;  // ran or cancelled, whichever came first
  std::atomic<std::size_t> finished{0};         // tasks done
  void finish(std::size_t id) {
    if (done[id].exchange(1) == 0) finished.fetch_add(1);
  }
};

}  // namespace auto_ledger

BOOST_AUTO_TEST_CASE(manual_clock_auto_advance_ledger_under_concurrent_submissions) {
  using auto_ledger::steady;
  const std::size_t total = std::max<std::size_t>(
      auto_ledger::producers, static_cast<std::size_t>(static_cast<double>(auto_ledger::default_task_count) *
                                                       stress::scale()));
  const std::size_t per_producer = total / auto_ledger::producers;
  const std::uint64_t seed = stress::base_seed() + 4242;
  BOOST_TEST_MESSAGE("auto-advance ledger: " << per_producer * auto_ledger::producers << " tasks, seed " << seed
                                             << ", build " << stress::build_name());
  auto_ledger::book b(per_producer * auto_ledger::producers);
  std::vector<chronopool::scheduled_future<void>> never_run;
  std::mutex never_mutex;

  chronopool::scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.use_manual_clock = true;
  o.manual_clock_auto_advance = true;
  chronopool::scheduled_thread_pool pool(o);
  chronopool::pool_manual_clock& clock = chronopool::manual_clock_of(pool);
  const steady::time_point start = clock.now();

  std::atomic<std::size_t> expected_finished{0};  // every task but the "never" ones
  auto never = [&](std::size_t id) {
    auto f = pool.schedule(std::chrono::hours::max(), [&b, id] { b.ran[id].fetch_add(1); });
    const std::lock_guard lock(never_mutex);
    never_run.push_back(std::move(f));
  };
  auto timed = [&](std::size_t id, std::chrono::milliseconds requested, bool cancel_at_once) {
    expected_finished.fetch_add(1);
    const auto delay = std::max(requested, 0ms);
    b.earliest[id].store((pool.now() + delay).time_since_epoch().count());
    b.latest[id].store(std::numeric_limits<std::int64_t>::max());  // until known: a run meanwhile is not late
    auto f = pool.schedule(delay, [&b, &pool, id] {
      const std::int64_t now = pool.now().time_since_epoch().count();
      if (now < b.earliest[id].load()) b.early[id].store(1);
      if (now > b.latest[id].load()) b.late[id].store(1);
      b.ran[id].fetch_add(1);
      b.finish(id);
    });
    b.latest[id].store((pool.now() + delay).time_since_epoch().count());
    if (cancel_at_once && f.cancel(false)) {
      b.cancelled[id].store(1);
      b.finish(id);
    }
  };
  std::vector<std::thread> threads =
      stress::start_random_submitters({auto_ledger::producers, per_producer, seed}, never, timed);
  for (auto& t : threads) t.join();
  // No driver: the idle pool moves its own clock until every task ran. A
  // real bound only (generous: sanitizers on a loaded machine).
  const steady::time_point give_up = steady::now() + 120s;
  while (b.finished.load() < expected_finished.load() && steady::now() < give_up) std::this_thread::sleep_for(1ms);
  BOOST_REQUIRE_EQUAL(b.finished.load(), expected_finished.load());
  const steady::duration virtual_span = clock.now() - start;

  std::size_t ran = 0, cancelled = 0, not_once = 0, early = 0, late = 0, ended = 0, never_ran = 0;
  for (std::size_t id = 0; id < b.ran.size(); ++id) {
    const std::uint8_t r = b.ran[id].load();
    if (r > 1) ++not_once;
    ran += r;
    cancelled += b.cancelled[id].load();
    ended += b.done[id].load();
    early += b.early[id].load();
    late += b.late[id].load();
  }
  {
    const std::lock_guard lock(never_mutex);
    for (auto& f : never_run) {
      if (f.done()) ++never_ran;
      f.cancel(false);
    }
  }
  BOOST_TEST_MESSAGE("auto-advance ledger: ran " << ran << ", cancelled " << cancelled << ", never "
                                                 << never_run.size() << ", virtual span "
                                                 << std::chrono::duration_cast<std::chrono::milliseconds>(virtual_span).count()
                                                 << " ms in " << clock.auto_advances() << " jumps");
  BOOST_TEST(not_once == 0u);
  BOOST_TEST(early == 0u);
  BOOST_TEST(late == 0u);
  BOOST_TEST(never_ran == 0u);
  BOOST_TEST(ended + never_run.size() == b.ran.size());  // every other task ran or was cancelled
}

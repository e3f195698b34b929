// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Cancellation of one-shot tasks: cancel(), remove(), remove_on_cancel and
// purge(), waking blocked waiters, and handles that are simply dropped.
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::task_cancelled;

namespace {

/// Counts its own destruction (moved-from copies do not count).
class destroy_tracker {
 public:
  explicit destroy_tracker(std::atomic<int>& n) noexcept : n_(&n) {}
  destroy_tracker(destroy_tracker&& o) noexcept : n_(std::exchange(o.n_, nullptr)) {}
  destroy_tracker(const destroy_tracker&) = delete;
  destroy_tracker& operator=(const destroy_tracker&) = delete;
  destroy_tracker& operator=(destroy_tracker&&) = delete;
  ~destroy_tracker() {
    if (n_ != nullptr) n_->fetch_add(1);
  }

 private:
  std::atomic<int>* n_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(cancel)

BOOST_AUTO_TEST_CASE(cancel_queued_task) {
  std::atomic<int> ran{0};
  std::atomic<int> destroyed{0};
  auto token = std::make_shared<int>(1);
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(1h, [&ran, token, t = destroy_tracker(destroyed)] {
    ran.fetch_add(1);
    return *token;
  });
  BOOST_REQUIRE_EQUAL(pool.queued_count(), 1U);
  BOOST_REQUIRE_EQUAL(token.use_count(), 2);
  BOOST_CHECK_EQUAL(destroyed.load(), 0);
  BOOST_CHECK(!f.done());

  BOOST_CHECK(f.cancel());
  // Everything below holds at once, without waiting.
  BOOST_CHECK(f.cancelled());
  BOOST_CHECK(f.done());
  BOOST_CHECK_EQUAL(token.use_count(), 1);  // the callable was destroyed
  BOOST_CHECK_EQUAL(destroyed.load(), 1);
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK(f.wait_for(0ms) == std::future_status::ready);
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);

  BOOST_CHECK(!f.cancel());  // already done
  BOOST_CHECK(!f.cancel(true));
  // A copy sees the same state.
  auto copy = f;
  BOOST_CHECK(copy.cancelled());
  BOOST_CHECK(!copy.cancel());
  BOOST_CHECK_EQUAL(ran.load(), 0);
  BOOST_CHECK_EQUAL(destroyed.load(), 1);
}

BOOST_AUTO_TEST_CASE(cancelled_due_task_never_runs) {
  // The task is due but the only thread is busy: cancel must still win.
  gate g;
  std::atomic<int> ran{0};
  scheduled_thread_pool pool(1);
  gate_opener opener(g);
  auto blocker = pool.submit([&] { return g.wait(); });
  auto f = pool.submit([&] { ran.fetch_add(1); });
  auto h = pool.submit([&](std::stop_token) { ran.fetch_add(1); });
  BOOST_CHECK(f.cancel());
  BOOST_CHECK(h.cancel(true));
  auto after = pool.submit([] { return 1; });
  g.open();
  require_ready(after);
  BOOST_CHECK(blocker.get());
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  BOOST_CHECK_THROW(h.get(), task_cancelled);
  BOOST_CHECK_EQUAL(ran.load(), 0);
}

BOOST_AUTO_TEST_CASE(cancel_completed_or_failed_returns_false) {
  scheduled_thread_pool pool(1);
  auto ok = pool.submit([] { return 5; });
  auto bad = pool.submit([]() -> int { throw std::domain_error("bad"); });
  require_ready(ok);
  require_ready(bad);
  BOOST_CHECK(!ok.cancel());
  BOOST_CHECK(!ok.cancel(true));
  BOOST_CHECK(!ok.cancelled());
  BOOST_CHECK_EQUAL(ok.get(), 5);
  BOOST_CHECK(!bad.cancel(true));
  BOOST_CHECK(!bad.cancelled());
  BOOST_CHECK_THROW((void)bad.get(), std::domain_error);
}

BOOST_AUTO_TEST_CASE(cancel_true_interrupts_running_task) {
  gate started;
  std::atomic<bool> saw_stop{false};
  std::atomic<bool> finished{false};
  scheduled_thread_pool pool(1);
  auto f = pool.submit([&](std::stop_token st) {
    started.open();
    const auto end = steady::now() + wait_limit;
    while (!st.stop_requested() && steady::now() < end) std::this_thread::sleep_for(1ms);
    saw_stop = st.stop_requested();
    finished = true;
    return 42;
  });
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel(true));
  BOOST_CHECK(f.cancelled());  // at once, while the run may still be going
  BOOST_CHECK(f.done());
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);
  BOOST_REQUIRE(eventually([&] { return finished.load(); }));
  BOOST_CHECK(saw_stop.load());
  // The run's result is discarded.
  BOOST_CHECK(f.cancelled());
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);
  BOOST_CHECK(!f.cancel(true));
  // The worker is free again.
  auto next = pool.submit([] { return 1; });
  require_ready(next);
  BOOST_CHECK_EQUAL(next.get(), 1);
}

BOOST_AUTO_TEST_CASE(cancel_false_lets_running_task_finish) {
  gate started;
  gate release;
  std::atomic<bool> finished{false};
  std::atomic<bool> stop_seen{true};
  auto token = std::make_shared<int>(0);
  scheduled_thread_pool pool(1);
  gate_opener opener(release);
  auto f = pool.submit([&, token](std::stop_token st) {
    started.open();
    (void)release.wait();
    stop_seen = st.stop_requested();
    finished = true;
    return 7;
  });
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(f.cancel(false));
  BOOST_CHECK(f.cancelled());
  // Waiters see the cancellation at once, before the run ends.
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);
  BOOST_CHECK(!finished.load());
  release.open();
  BOOST_REQUIRE(eventually([&] { return finished.load(); }));
  BOOST_CHECK(!stop_seen.load());  // cancel(false) does not request stop
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);
  // The runner releases the callable once the run is over.
  BOOST_CHECK(eventually([&] { return token.use_count() == 1; }));
}

BOOST_AUTO_TEST_CASE(task_cancelling_itself) {
  gate handle_ready;
  std::promise<scheduled_future<int>> holder;
  auto holder_future = holder.get_future().share();
  std::atomic<int> outcome{0};  // 1: cancel true and stop seen
  scheduled_thread_pool pool(1);
  gate_opener opener(handle_ready);
  auto f = pool.submit([&, holder_future](std::stop_token st) {
    if (!handle_ready.wait()) return 0;
    auto self = holder_future.get();
    if (self.cancel(true) && st.stop_requested() && self.cancelled()) outcome = 1;
    return 3;
  });
  holder.set_value(f);
  handle_ready.open();
  require_ready(f);
  BOOST_CHECK_THROW((void)f.get(), task_cancelled);
  BOOST_CHECK(eventually([&] { return outcome.load() == 1; }));
}

BOOST_AUTO_TEST_CASE(blocked_waiters_wake_on_cancel) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(1h, [] { return 1; });
  constexpr int waiters = 3;
  std::atomic<int> entered{0};
  std::atomic<int> returned{0};
  std::atomic<int> got_cancelled{0};
  std::vector<std::promise<void>> done(waiters);
  std::vector<std::future<void>> done_f;
  std::vector<std::thread> threads;
  for (auto& d : done) done_f.push_back(d.get_future());
  for (int i = 0; i < waiters; ++i) {
    threads.emplace_back([&, i, f] {  // each thread holds its own copy
      entered.fetch_add(1);
      try {
        if (i == 0) {
          f.wait();
        } else {
          (void)f.get();
        }
        if (i == 0 && f.cancelled()) got_cancelled.fetch_add(1);
      } catch (const task_cancelled&) {
        got_cancelled.fetch_add(1);
      } catch (...) {
      }
      returned.fetch_add(1);
      done[static_cast<std::size_t>(i)].set_value();
    });
  }
  BOOST_REQUIRE(eventually([&] { return entered.load() == waiters; }));
  std::this_thread::sleep_for(20ms);  // let them block
  BOOST_CHECK_EQUAL(returned.load(), 0);  // nobody returned before cancel
  BOOST_CHECK(f.cancel());
  bool all_woke = true;
  for (auto& d : done_f) all_woke = all_woke && d.wait_for(wait_limit) == std::future_status::ready;
  BOOST_CHECK(all_woke);
  if (all_woke) {
    for (auto& t : threads) t.join();
  } else {
    for (auto& t : threads) t.detach();  // never leave the test hanging
  }
  BOOST_CHECK_EQUAL(got_cancelled.load(), waiters);
}

BOOST_AUTO_TEST_CASE(dropping_handles_does_not_cancel) {
  std::promise<int> ran;
  auto ran_f = ran.get_future();
  std::atomic<int> ticks{0};
  scheduled_thread_pool pool(2);
  {
    auto f = pool.schedule(20ms, [&] { ran.set_value(1); });
    auto copy = f;
  }  // every handle dropped before the deadline
  (void)pool.schedule_at_fixed_rate(0ms, 5ms, [&] { ticks.fetch_add(1); });  // dropped at once
  BOOST_REQUIRE(ran_f.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK_EQUAL(ran_f.get(), 1);
  BOOST_CHECK(eventually([&] { return ticks.load() >= 3; }));
  // The periodic task ends with the pool (its destructor cancels it).
}

BOOST_AUTO_TEST_CASE(remove_queued_task) {
  std::atomic<int> ran{0};
  auto token = std::make_shared<int>(0);
  scheduled_thread_pool pool(1);
  auto f = pool.schedule(1h, [&ran, token] { ran.fetch_add(1); });
  auto other = pool.schedule(1h, [&ran] { ran.fetch_add(1); });
  BOOST_REQUIRE_EQUAL(pool.queued_count(), 2U);
  BOOST_CHECK(pool.remove(f));
  BOOST_CHECK(f.cancelled());
  BOOST_CHECK(f.done());
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  BOOST_CHECK_EQUAL(token.use_count(), 1);
  BOOST_CHECK(!pool.remove(f));  // no longer queued
  BOOST_CHECK(!other.done());    // the other task is untouched
  BOOST_CHECK(other.cancel());
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(ran.load(), 0);
}

BOOST_AUTO_TEST_CASE(remove_running_done_or_foreign_task_returns_false) {
  gate started;
  gate release;
  scheduled_thread_pool pool(1);
  scheduled_thread_pool other_pool(1);
  gate_opener opener(release);
  auto running = pool.submit([&] {
    started.open();
    (void)release.wait();
    return 11;
  });
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(!pool.remove(running));
  BOOST_CHECK(!running.cancelled());
  release.open();
  require_ready(running);
  BOOST_CHECK_EQUAL(running.get(), 11);  // not cancelled by the failed remove
  BOOST_CHECK(!pool.remove(running));    // done

  BOOST_CHECK(!pool.remove(scheduled_future<int>{}));  // no task

  auto foreign = other_pool.schedule(1h, [] {});
  BOOST_CHECK(!pool.remove(foreign));  // queued, but in another pool
  BOOST_CHECK(!foreign.done());
  BOOST_CHECK_EQUAL(other_pool.queued_count(), 1U);
  BOOST_CHECK(other_pool.remove(foreign));
  BOOST_CHECK_EQUAL(other_pool.queued_count(), 0U);
}

BOOST_AUTO_TEST_CASE(remove_on_cancel_off_keeps_entries_until_purge) {
  chronopool::scheduled_thread_pool_options opts;
  opts.core_pool_size = 1;
  opts.remove_on_cancel = false;
  std::atomic<int> ran{0};
  auto token = std::make_shared<int>(0);
  scheduled_thread_pool pool(opts);
  BOOST_CHECK(!pool.remove_on_cancel());
  auto a = pool.schedule(1h, [&ran, token] { ran.fetch_add(1); });
  auto b = pool.schedule(2h, [&ran, token] { ran.fetch_add(1); });
  auto keep = pool.schedule(3h, [&ran] { ran.fetch_add(1); });
  BOOST_REQUIRE_EQUAL(pool.queued_count(), 3U);
  BOOST_REQUIRE_EQUAL(token.use_count(), 3);
  BOOST_CHECK(a.cancel());
  BOOST_CHECK(b.cancel(true));
  BOOST_CHECK(a.cancelled());
  BOOST_CHECK_THROW(a.get(), task_cancelled);
  // Still queued, but the callables are released at cancel() either way.
  BOOST_CHECK_EQUAL(pool.queued_count(), 3U);
  BOOST_CHECK_EQUAL(token.use_count(), 1);
  BOOST_CHECK_EQUAL(pool.purge(), 2U);
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  BOOST_CHECK_EQUAL(pool.purge(), 0U);
  BOOST_CHECK(!keep.done());
  // Switching it back on applies to later cancellations.
  pool.set_remove_on_cancel(true);
  BOOST_CHECK(pool.remove_on_cancel());
  BOOST_CHECK(keep.cancel());
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(ran.load(), 0);
}

BOOST_AUTO_TEST_CASE(remove_on_cancel_off_entry_leaves_at_its_deadline) {
  chronopool::scheduled_thread_pool_options opts;
  opts.core_pool_size = 1;
  opts.remove_on_cancel = false;
  std::atomic<int> ran{0};
  scheduled_thread_pool pool(opts);
  auto f = pool.schedule(20ms, [&] { ran.fetch_add(1); });
  BOOST_CHECK(f.cancel());
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  // At its deadline the cancelled entry is dropped without running.
  BOOST_CHECK(eventually([&] { return pool.queued_count() == 0; }));
  auto after = pool.submit([] { return 2; });
  require_ready(after);
  BOOST_CHECK_EQUAL(ran.load(), 0);
  BOOST_CHECK_EQUAL(pool.purge(), 0U);
}

BOOST_AUTO_TEST_CASE(remove_on_cancel_default_is_on) {
  scheduled_thread_pool pool(1);
  BOOST_CHECK(pool.remove_on_cancel());
  BOOST_CHECK_EQUAL(pool.purge(), 0U);
}

BOOST_AUTO_TEST_CASE(concurrent_cancel_has_one_winner) {
  scheduled_thread_pool pool(1);
  for (int round = 0; round < 20; ++round) {
    auto f = pool.schedule(1h, [] {});
    std::atomic<int> winners{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i) {
      ts.emplace_back([&winners, &go, i, mine = f]() mutable {  // each thread its own handle
        while (!go.load()) std::this_thread::yield();
        if (mine.cancel(i % 2 == 0)) winners.fetch_add(1);
      });
    }
    go = true;
    for (auto& t : ts) t.join();
    BOOST_CHECK_EQUAL(winners.load(), 1);
    BOOST_CHECK(f.cancelled());
  }
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
}

BOOST_AUTO_TEST_CASE(cancel_racing_with_runs_is_consistent) {
  // Cancel tasks while the pool runs them: whatever wins, the future's state
  // matches what cancel() returned, and a task that was not cancelled ran.
  scheduled_thread_pool pool(2);
  constexpr int n = 300;
  std::vector<std::atomic<int>> ran(n);
  std::vector<scheduled_future<int>> fs;
  fs.reserve(n);
  for (int i = 0; i < n; ++i) {
    fs.push_back(pool.submit([&ran, i] {
      ran[static_cast<std::size_t>(i)].fetch_add(1);
      return i;
    }));
  }
  std::vector<bool> cancel_result(n);
  for (int i = 0; i < n; ++i) cancel_result[static_cast<std::size_t>(i)] = fs[static_cast<std::size_t>(i)].cancel(i % 3 == 0);
  int cancelled = 0;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    auto& f = fs[k];
    require_ready(f);
    BOOST_CHECK_EQUAL(cancel_result[k], f.cancelled());
    if (cancel_result[k]) {
      ++cancelled;
      BOOST_CHECK_THROW((void)f.get(), task_cancelled);
    } else {
      BOOST_CHECK_EQUAL(f.get(), i);
      BOOST_CHECK_EQUAL(ran[k].load(), 1);
    }
  }
  // Wait for runs that were cancelled mid-way before the counters go away.
  pool.join();
  for (auto& r : ran) BOOST_CHECK_LE(r.load(), 1);
  BOOST_TEST_MESSAGE("cancelled " << cancelled << " of " << n);
}

BOOST_AUTO_TEST_SUITE_END()

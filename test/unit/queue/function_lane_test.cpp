// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The function lane of delayed_work_queue under concurrent posters.
//
// While the queue is open a poster pushes without the lock and takes it only
// to wake an idle taker. What that must keep: every function offered is
// taken exactly once (or refused, or drained, once the queue closes), one
// poster's functions keep their order, and a taker asleep or spinning when a
// function arrives is woken for it (a lost wake-up would leave it asleep
// with the function queued).
#include "queue_test_support.hpp"

#include <chronopool/detail/pool/queued_function.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstddef>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace queue_test;
using mode = cpd::delayed_work_queue::mode;
using wait_status = cpd::delayed_work_queue::wait_status;

/// Where each function of a run ended: counted by the function itself when
/// it runs, and by its guard when it is destroyed unrun.
struct ledger {
  explicit ledger(std::size_t n) : ran(n), destroyed_unrun(n) {}
  std::vector<std::atomic<int>> ran;
  std::vector<std::atomic<int>> destroyed_unrun;
};

/// Counts its function as destroyed unrun unless the function disarmed it.
struct unrun_guard {
  ledger* l;
  std::size_t id;
  std::shared_ptr<bool> armed = std::make_shared<bool>(true);
  unrun_guard(ledger* l_, std::size_t id_) : l(l_), id(id_) {}
  unrun_guard(unrun_guard&& o) noexcept = default;
  ~unrun_guard() {
    if (armed && *armed) l->destroyed_unrun[id].fetch_add(1);
  }
};

cpd::queued_function* counted_function(ledger& l, std::size_t id, std::vector<std::size_t>* order = nullptr) {
  return cpd::make_queued_function(
      [g = unrun_guard(&l, id), order]() mutable {
        *g.armed = false;
        g.l->ran[g.id].fetch_add(1);
        if (order != nullptr) order->push_back(g.id);
      },
      std::allocator<void>());
}

/// Takes and runs functions until @p stop is set and nothing is left.
void take_until(cpd::delayed_work_queue& q, const std::atomic<bool>& stop) {
  for (;;) {
    auto r = q.wait_for_task(clock::now() + std::chrono::milliseconds(2));
    if (r.status == wait_status::function) {
      r.function->run();
    } else if (r.status == wait_status::closed || (stop.load() && q.empty())) {
      return;
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(function_lane)

BOOST_AUTO_TEST_CASE(every_function_posted_from_many_threads_is_taken_once_in_each_posters_order) {
  constexpr std::size_t posters = 4, per_poster = 20'000;
  cpd::delayed_work_queue q;
  ledger l(posters * per_poster);
  // One taker, so that a poster's functions run in the order they were
  // taken: its order must be the poster's own.
  std::vector<std::size_t> order;
  order.reserve(posters * per_poster);
  std::atomic<bool> stop{false};
  std::thread taker([&] {
    for (;;) {
      auto r = q.wait_for_task(clock::now() + std::chrono::milliseconds(2));
      if (r.status == wait_status::function) {
        r.function->run();
      } else if (stop.load() && q.empty()) {
        return;
      }
    }
  });
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < posters; ++p) {
    threads.emplace_back([&, p] {
      // Bursts and pauses, so that the taker runs dry and sleeps between them.
      std::minstd_rand rng(static_cast<unsigned>(p) + 1);
      for (std::size_t i = 0; i < per_poster; ++i) {
        // The slot makes each poster's ids increase in its posting order.
        const std::size_t id = i * posters + p;
        // The order vector is the taker's alone: only it runs functions.
        cpd::queued_function* f = counted_function(l, id, &order);
        if (!q.offer_function(f)) {
          refused.fetch_add(1);
          f->destroy();
        }
        if (rng() % 512 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
      }
    });
  }
  for (auto& t : threads) t.join();
  stop.store(true);
  taker.join();

  BOOST_TEST(refused.load() == 0);  // an open queue refuses nothing
  std::size_t not_once = 0;
  for (std::size_t id = 0; id < l.ran.size(); ++id) not_once += (l.ran[id].load() == 1 && l.destroyed_unrun[id].load() == 0) ? 0 : 1;
  BOOST_TEST(not_once == 0u);
  BOOST_TEST(order.size() == posters * per_poster);
  std::vector<std::size_t> last_of(posters, 0);
  std::vector<bool> seen(posters, false);
  std::size_t out_of_order = 0;
  for (std::size_t id : order) {
    const std::size_t p = id % posters;
    if (seen[p] && id <= last_of[p]) ++out_of_order;
    seen[p] = true;
    last_of[p] = id;
  }
  BOOST_TEST(out_of_order == 0u);
}

BOOST_AUTO_TEST_CASE(a_sleeping_taker_is_woken_for_every_function) {
  // One function at a time, each posted once the taker has gone idle (or is
  // on its way there): a missed wake-up leaves the taker asleep until its
  // limit, an hour away, and the bounded wait fails.
  cpd::delayed_work_queue q;
  std::minstd_rand rng(7);
  for (int round = 0; round < 300; ++round) {
    auto f = std::async(std::launch::async, [&q] { return q.wait_for_task(clock::now() + 1h); });
    // Sometimes at once, sometimes after the taker has had time to sleep.
    if (rng() % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
    std::atomic<int> ran{0};
    BOOST_TEST_REQUIRE(q.offer_function(cpd::make_queued_function([&ran] { ran.fetch_add(1); }, std::allocator<void>())));
    if (f.wait_for(hang_limit) != std::future_status::ready) {
      q.set_mode(mode::closed);
      BOOST_FAIL("round " << round << ": the taker was not woken for a posted function");
    }
    auto r = f.get();
    BOOST_TEST_REQUIRE((r.status == wait_status::function));
    r.function->run();
    BOOST_TEST_REQUIRE(ran.load() == 1);
  }
}

BOOST_AUTO_TEST_CASE(posts_racing_the_close_are_taken_refused_or_drained_exactly_once) {
  // Posters push while two takers take; then the queue drains and closes.
  // Each function ends exactly once: run by a taker, refused (the poster
  // destroys it), or drained (destroyed unrun by whoever drains).
  std::minstd_rand seeds(11);
  for (int round = 0; round < 40; ++round) {
    constexpr std::size_t posters = 3, per_poster = 3'000;
    std::optional<cpd::delayed_work_queue> queue;
    cpd::delayed_work_queue& q = queue.emplace();
    ledger l(posters * per_poster);
    std::atomic<bool> stop{false};
    std::thread t1([&] { take_until(q, stop); });
    std::thread t2([&] { take_until(q, stop); });
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < posters; ++p) {
      threads.emplace_back([&, p] {
        for (std::size_t i = 0; i < per_poster; ++i) {
          cpd::queued_function* f = counted_function(l, i * posters + p);
          if (!q.offer_function(f)) f->destroy();
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(seeds() % 2'000));
    q.set_mode(mode::draining);
    std::this_thread::sleep_for(std::chrono::microseconds(seeds() % 500));
    q.set_mode(mode::closed);
    auto drained = q.drain_functions();
    while (!drained.empty()) drained.pop_front()->destroy();
    for (auto& t : threads) t.join();
    stop.store(true);
    t1.join();
    t2.join();
    // Nothing should be left, but whatever is (a function the drain missed)
    // is destroyed with the queue and counted once, not lost.
    BOOST_TEST(q.size() == 0u);
    queue.reset();

    std::size_t not_once = 0;
    for (std::size_t id = 0; id < l.ran.size(); ++id) not_once += (l.ran[id].load() + l.destroyed_unrun[id].load() == 1) ? 0 : 1;
    BOOST_TEST_REQUIRE(not_once == 0u, "round " << round);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// delayed_work_queue hands tasks out in (deadline, sequence) order.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace queue_test;

std::vector<cpd::task_base*> sorted_raw(const std::vector<cpd::task_ptr>& tasks) {
  std::vector<cpd::task_base*> out;
  out.reserve(tasks.size());
  for (const auto& t : tasks) out.push_back(t.get());
  std::sort(out.begin(), out.end(), [](const cpd::task_base* a, const cpd::task_base* b) { return runs_before(*a, *b); });
  return out;
}

/// Random deadlines: due, far future and "never", with plenty of ties.
std::vector<cpd::task_ptr> random_tasks(std::size_t n, std::uint64_t seed, time_point base) {
  std::mt19937_64 rng(seed);
  std::vector<cpd::task_ptr> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int pick = std::uniform_int_distribution<int>(0, 9)(rng);
    const auto ms = std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 20)(rng));
    time_point d = pick < 4 ? base - ms : pick < 8 ? base + 1h + ms : time_point::max();
    out.push_back(make_noop(d, i));
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ordering)

BOOST_AUTO_TEST_CASE(hundred_thousand_due_tasks_poll_in_deadline_sequence_order) {
  constexpr std::size_t n = 100'000;
  const time_point base = clock::now();
  std::mt19937_64 rng(42);
  std::vector<cpd::task_ptr> tasks;
  tasks.reserve(n);
  // Deadlines within the last 50 ms at microsecond grain: about half the
  // tasks share their deadline with another one.
  std::uniform_int_distribution<long> us(0, 50'000);
  for (std::size_t i = 0; i < n; ++i) tasks.push_back(make_noop(base - std::chrono::microseconds(us(rng)), i));
  const std::vector<cpd::task_base*> expected = sorted_raw(tasks);

  cpd::delayed_work_queue q;
  for (const auto& t : tasks) BOOST_TEST_REQUIRE(q.offer(t));
  BOOST_TEST(q.size() == n);
  BOOST_TEST(q.check_invariants());
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(expected.front()->deadline()));

  std::size_t out = 0;
  std::size_t mismatches = 0;
  const cpd::task_base* prev = nullptr;
  while (cpd::task_ptr t = q.poll()) {
    BOOST_TEST_REQUIRE(out < n);
    if (t.get() != expected[out]) ++mismatches;
    if (prev != nullptr && !runs_before(*prev, *t)) ++mismatches;
    BOOST_TEST_REQUIRE(t->heap_index == cpd::task_base::not_queued);
    prev = t.get();
    ++out;
  }
  BOOST_TEST(out == n);
  BOOST_TEST(mismatches == 0u);
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(equal_deadlines_are_fifo_by_sequence) {
  const time_point due = clock::now() - 1ms;
  const time_point later = clock::now() + 1h;
  constexpr std::uint64_t n = 1000;

  // Offered in submission order.
  {
    cpd::delayed_work_queue q;
    for (std::uint64_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(q.offer(make_noop(due, i)));
    for (std::uint64_t i = 0; i < n; ++i) {
      cpd::task_ptr t = q.poll();
      BOOST_TEST_REQUIRE(static_cast<bool>(t));
      BOOST_TEST_REQUIRE(t->sequence() == i);
    }
    BOOST_TEST(!q.poll());
  }
  // Offered in a shuffled order (a periodic re-arm is offered after newer
  // tasks): still sequence order, for a not-yet-due deadline too.
  for (time_point d : {due, later}) {
    std::vector<std::uint64_t> seqs(n);
    std::iota(seqs.begin(), seqs.end(), std::uint64_t{0});
    std::shuffle(seqs.begin(), seqs.end(), std::mt19937_64(7));
    cpd::delayed_work_queue q;
    for (std::uint64_t s : seqs) BOOST_TEST_REQUIRE(q.offer(make_noop(d, s)));
    BOOST_TEST_REQUIRE(q.check_invariants());
    for (std::uint64_t i = 0; i < n; ++i) {
      cpd::task_ptr t = q.pop_head();
      BOOST_TEST_REQUIRE(static_cast<bool>(t));
      BOOST_TEST_REQUIRE(t->sequence() == i);
    }
    BOOST_TEST(q.empty());
  }
}

// Java's DelayOverflow: a task delayed by Long.MAX_VALUE once compared as
// earlier than short delays (overflowing subtraction in compareTo).
BOOST_AUTO_TEST_CASE(never_task_does_not_overtake_finite_ones) {
  const time_point now = clock::now();
  const time_point never = cpd::deadline_after(now, cpd::saturating_duration(std::chrono::hours::max()));
  BOOST_TEST_REQUIRE(cpd::is_never(never));

  cpd::delayed_work_queue q;
  cpd::task_ptr n0 = make_noop(never, 0);
  BOOST_TEST_REQUIRE(q.offer(n0));
  BOOST_TEST(!q.poll());  // never is never due

  cpd::task_ptr due1 = make_noop(now - 1ms, 1);
  BOOST_TEST_REQUIRE(q.offer(due1));
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(due1->deadline()));
  BOOST_TEST(q.poll().get() == due1.get());
  BOOST_TEST(!q.poll());
  BOOST_TEST(q.size() == 1u);

  // Finite deadlines on both sides of the never task, down to one
  // nanosecond before it, plus a second never task offered later.
  std::vector<cpd::task_ptr> tasks = {
      make_noop(time_point::max() - std::chrono::nanoseconds(1), 2),
      make_noop(cpd::deadline_after(clock::now(), std::chrono::hours(24 * 365 * 200)), 3),
      make_noop(now, 4),
      make_noop(time_point::min(), 5),
      make_noop(cpd::deadline_after(clock::now(), cpd::duration::max()), 6),  // never again
      make_noop(now + 1h, 7),
      make_noop(time_point::max() - 1h, 8),
  };
  for (const auto& t : tasks) BOOST_TEST_REQUIRE(q.offer(t));
  BOOST_TEST_REQUIRE(q.check_invariants());

  // Due ones first via poll(), in order; the never tasks stay queued.
  BOOST_TEST(q.poll().get() == tasks[3].get());  // time_point::min()
  BOOST_TEST(q.poll().get() == tasks[2].get());  // now
  BOOST_TEST(!q.poll());
  const std::uint64_t rest[] = {7, 3, 8, 2, 0, 6};  // never tasks last, in sequence order
  for (std::uint64_t s : rest) {
    cpd::task_ptr t = q.pop_head();
    BOOST_TEST_REQUIRE(static_cast<bool>(t));
    BOOST_TEST(t->sequence() == s);
    BOOST_TEST(q.check_invariants());
  }
  BOOST_TEST(q.empty());
}

BOOST_AUTO_TEST_CASE(drain_returns_everything_in_deadline_order) {
  const time_point base = clock::now();
  std::vector<cpd::task_ptr> tasks = random_tasks(3000, 99, base);
  const std::vector<cpd::task_base*> expected = sorted_raw(tasks);

  cpd::delayed_work_queue q;
  for (const auto& t : tasks) BOOST_TEST_REQUIRE(q.offer(t));
  std::vector<cpd::task_ptr> out = q.drain();
  BOOST_TEST_REQUIRE(out.size() == expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    BOOST_TEST_REQUIRE(out[i].get() == expected[i]);
    BOOST_TEST_REQUIRE(out[i]->heap_index == cpd::task_base::not_queued);
    BOOST_TEST_REQUIRE(out[i]->status() == cpd::task_status::pending);  // drained, not cancelled
  }
  BOOST_TEST(q.empty());
  BOOST_TEST(!q.head_deadline().has_value());
  BOOST_TEST(q.check_invariants());
  BOOST_TEST(q.drain().empty());

  // The queue is usable again and the drained tasks can be re-offered.
  for (const auto& t : out) BOOST_TEST_REQUIRE(q.offer(t));
  BOOST_TEST(q.size() == out.size());
  BOOST_TEST(q.check_invariants());
  BOOST_TEST(q.pop_head().get() == out.front().get());
}

BOOST_AUTO_TEST_CASE(remove_if_returns_matches_in_order_and_keeps_heap_valid) {
  const time_point base = clock::now();
  std::vector<cpd::task_ptr> tasks = random_tasks(3000, 1234, base);
  cpd::delayed_work_queue q;
  for (const auto& t : tasks) BOOST_TEST_REQUIRE(q.offer(t));

  // No match: nothing changes.
  BOOST_TEST(q.remove_if([](const cpd::task_base&) { return false; }).empty());
  BOOST_TEST(q.size() == tasks.size());
  BOOST_TEST(q.check_invariants());

  std::vector<cpd::task_ptr> matching, kept;
  for (const auto& t : tasks) (t->sequence() % 3 == 0 ? matching : kept).push_back(t);
  const auto expected_removed = sorted_raw(matching);
  const auto expected_kept = sorted_raw(kept);

  std::vector<cpd::task_ptr> removed = q.remove_if([](const cpd::task_base& t) { return t.sequence() % 3 == 0; });
  BOOST_TEST_REQUIRE(removed.size() == expected_removed.size());
  for (std::size_t i = 0; i < removed.size(); ++i) {
    BOOST_TEST_REQUIRE(removed[i].get() == expected_removed[i]);
    BOOST_TEST_REQUIRE(removed[i]->heap_index == cpd::task_base::not_queued);
    BOOST_TEST_REQUIRE(!q.remove(*removed[i]));
  }
  BOOST_TEST(q.size() == expected_kept.size());
  BOOST_TEST_REQUIRE(q.check_invariants());
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(expected_kept.front()->deadline()));

  // remove() still works on the rebuilt heap (heap_index was refreshed).
  cpd::task_base* victim = expected_kept[expected_kept.size() / 2];
  BOOST_TEST(q.remove(*victim));
  BOOST_TEST_REQUIRE(q.check_invariants());

  for (cpd::task_base* e : expected_kept) {
    if (e == victim) continue;
    cpd::task_ptr t = q.pop_head();
    BOOST_TEST_REQUIRE(t.get() == e);
  }
  BOOST_TEST(q.empty());

  // Removing everything through remove_if.
  for (const auto& t : kept) BOOST_TEST_REQUIRE(q.offer(t));
  BOOST_TEST(q.remove_if([](const cpd::task_base&) { return true; }).size() == kept.size());
  BOOST_TEST(q.empty());
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_CASE(remove_returns_false_for_tasks_not_queued_here) {
  const time_point base = clock::now();
  cpd::delayed_work_queue q;
  cpd::delayed_work_queue other;

  cpd::task_ptr never_queued = make_noop(base, 100);
  BOOST_TEST(!q.remove(*never_queued));

  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 5; ++i) {
    tasks.push_back(make_noop(base - std::chrono::milliseconds(10 - i), i));
    BOOST_TEST_REQUIRE(q.offer(tasks.back()));
  }
  // Queued elsewhere, at a slot index that is valid here too.
  cpd::task_ptr elsewhere = make_noop(base, 200);
  BOOST_TEST_REQUIRE(other.offer(elsewhere));
  BOOST_TEST_REQUIRE(elsewhere->heap_index == tasks[0]->heap_index);
  BOOST_TEST(!q.remove(*elsewhere));
  BOOST_TEST(other.size() == 1u);
  BOOST_TEST(q.size() == 5u);

  BOOST_TEST(q.remove(*tasks[2]));
  BOOST_TEST(!q.remove(*tasks[2]));  // already removed
  BOOST_TEST(q.poll().get() == tasks[0].get());
  BOOST_TEST(!q.remove(*tasks[0]));  // taken by poll
  BOOST_TEST(q.pop_head().get() == tasks[1].get());
  BOOST_TEST(!q.remove(*tasks[1]));  // taken by pop_head
  BOOST_TEST(q.size() == 2u);
  BOOST_TEST(q.check_invariants());
  q.drain();
  BOOST_TEST(!q.remove(*tasks[3]));  // drained
  BOOST_TEST(!q.remove(*tasks[4]));
  BOOST_TEST(other.remove(*elsewhere));
}

BOOST_AUTO_TEST_CASE(remove_releases_the_queue_reference) {
  std::atomic<int> destroyed{0};
  cpd::delayed_work_queue q;
  cpd::task_ptr keep = make_probe(destroyed, clock::now() + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(keep));
  cpd::task_ptr t = make_probe(destroyed, clock::now() + 1h, 1);
  cpd::task_base* raw = t.get();
  BOOST_TEST_REQUIRE(q.offer(std::move(t)));  // the queue holds the only reference
  BOOST_TEST(destroyed.load() == 0);
  BOOST_TEST(q.remove(*raw));
  BOOST_TEST(destroyed.load() == 1);
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(keep->status() == cpd::task_status::pending);
}

BOOST_AUTO_TEST_CASE(offer_of_cancelled_task_is_refused) {
  const time_point base = clock::now();
  cpd::delayed_work_queue q;
  cpd::task_ptr queued = make_noop(base + 1h, 0);
  BOOST_TEST_REQUIRE(q.offer(queued));

  cpd::task_ptr c = make_noop(base - 1ms, 1);
  BOOST_TEST_REQUIRE(c->cancel(false));
  BOOST_TEST(!q.offer(c));
  BOOST_TEST(c->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(q.size() == 1u);
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(queued->deadline()));
  BOOST_TEST(!q.poll());
  BOOST_TEST(!q.remove(*c));
  BOOST_TEST(q.check_invariants());

  // The refused task's reference is dropped, not leaked.
  std::atomic<int> destroyed{0};
  cpd::task_ptr p = make_probe(destroyed, base, 2);
  BOOST_TEST_REQUIRE(p->cancel(true));
  BOOST_TEST(!q.offer(std::move(p)));
  BOOST_TEST(destroyed.load() == 1);
  BOOST_TEST(q.size() == 1u);
}

BOOST_AUTO_TEST_CASE(destructor_releases_queued_tasks_without_cancelling) {
  std::atomic<int> destroyed{0};
  cpd::task_ptr kept = make_probe(destroyed, clock::now(), 0);
  {
    cpd::delayed_work_queue q;
    BOOST_TEST_REQUIRE(q.offer(kept));
    for (std::uint64_t i = 1; i <= 10; ++i) BOOST_TEST_REQUIRE(q.offer(make_probe(destroyed, clock::now(), i)));
  }
  BOOST_TEST(destroyed.load() == 10);
  BOOST_TEST(kept->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(kept->status() == cpd::task_status::pending);
}

BOOST_AUTO_TEST_CASE(offer_within_refuses_beyond_the_bound) {
  using offer_status = cpd::delayed_work_queue::offer_status;
  const time_point base = clock::now();
  cpd::delayed_work_queue q;
  BOOST_TEST(q.offer_within(make_noop(base, 0), 0) == offer_status::full);
  BOOST_TEST(q.empty());

  std::vector<cpd::task_ptr> tasks;
  for (std::uint64_t i = 0; i < 3; ++i) {
    tasks.push_back(make_noop(base + std::chrono::milliseconds(10 * (3 - i)), i));
    BOOST_TEST(q.offer_within(tasks.back(), 3) == offer_status::queued);
  }
  BOOST_TEST(q.size() == 3u);

  // Full: refused and not inserted, even when it would be the new head; its
  // reference is dropped.
  std::atomic<int> freed{0};
  cpd::task_ptr extra = make_probe(freed, base - 1h, 3);
  cpd::task_base* extra_raw = extra.get();
  BOOST_TEST(q.offer_within(extra, 3) == offer_status::full);
  BOOST_TEST(extra->heap_index == cpd::task_base::not_queued);
  BOOST_TEST(!q.remove(*extra_raw));
  BOOST_TEST(q.size() == 3u);
  BOOST_TEST(ticks(q.head_deadline().value()) == ticks(tasks[2]->deadline()));
  BOOST_TEST(q.check_invariants());
  BOOST_TEST(q.offer_within(std::move(extra), 3) == offer_status::full);
  BOOST_TEST(freed.load() == 1);

  // A larger bound admits it; a cancelled task is refused as cancelled.
  cpd::task_ptr c = make_noop(base, 4);
  BOOST_TEST_REQUIRE(c->cancel(false));
  BOOST_TEST(q.offer_within(c, 3) == offer_status::cancelled);
  BOOST_TEST(q.offer_within(c, 100) == offer_status::cancelled);
  BOOST_TEST(q.size() == 3u);
  cpd::task_ptr fourth = make_noop(base - 1h, 5);
  BOOST_TEST(q.offer_within(fourth, 4) == offer_status::queued);
  BOOST_TEST(q.poll().get() == fourth.get());
  // Room again after a task left.
  BOOST_TEST(q.offer_within(make_noop(base + 1h, 6), 4) == offer_status::queued);
  BOOST_TEST(q.size() == 4u);
  BOOST_TEST(q.check_invariants());
}

// The bound is checked under the queue's lock: concurrent producers never
// overshoot it, and exactly `bound` offers succeed.
BOOST_AUTO_TEST_CASE(offer_within_bound_is_exact_under_concurrency) {
  using offer_status = cpd::delayed_work_queue::offer_status;
  constexpr std::size_t bound = 250;
  constexpr int producers = 6;
  constexpr int per_producer = 100;
  cpd::delayed_work_queue q;
  std::atomic<int> queued{0}, full{0};
  std::atomic<bool> overshoot{false};
  std::atomic<std::uint64_t> seq{0};
  const time_point base = clock::now();
  {
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < per_producer; ++i) {
          auto r = q.offer_within(make_noop(base + std::chrono::milliseconds(i % 7), seq.fetch_add(1)), bound);
          (r == offer_status::queued ? queued : full).fetch_add(1);
          if (q.size() > bound) overshoot.store(true);  // Boost.Test is not thread-safe: record
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  BOOST_TEST(!overshoot.load());
  BOOST_TEST(queued.load() == static_cast<int>(bound));
  BOOST_TEST(full.load() == producers * per_producer - static_cast<int>(bound));
  BOOST_TEST(q.size() == bound);
  BOOST_TEST(q.check_invariants());
}

BOOST_AUTO_TEST_SUITE_END()

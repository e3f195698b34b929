// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Property test of delayed_work_queue's indexed heap: random operation
// sequences checked against a trivially correct model after every step.
#include "queue_test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace {

using namespace queue_test;
using key = std::pair<time_point::rep, std::uint64_t>;  // (deadline, sequence)

key key_of(const cpd::task_base& t) { return {t.deadline().time_since_epoch().count(), t.sequence()}; }

enum class profile { mixed, ties, never_heavy };

/// Deadlines are either at or before `base` (due: poll() returns them) or an
/// hour or more after it (not due), so "is the head due" never depends on how
/// fast the test runs.
class deadline_source {
 public:
  deadline_source(profile p, time_point base) : profile_(p), base_(base) {}

  time_point operator()(std::mt19937_64& rng) {
    const int pick = std::uniform_int_distribution<int>(0, 99)(rng);
    const auto small = std::uniform_int_distribution<int>(0, 7)(rng);
    switch (profile_) {
      case profile::ties:  // three distinct deadlines only: nearly every key ties
        if (pick < 45) return base_ - 1ms;
        if (pick < 75) return base_ + 1h;
        return time_point::max();
      case profile::never_heavy:
        if (pick < 50) return time_point::max();
        if (pick < 60) return time_point::max() - std::chrono::nanoseconds(1 + small);  // finite, just before never
        if (pick < 80) return base_ - std::chrono::milliseconds(small);
        return base_ + 1h + std::chrono::milliseconds(small);
      case profile::mixed:
        break;
    }
    if (pick < 35) return base_ - std::chrono::milliseconds(small);  // due, many ties
    if (pick < 45) return base_ - std::chrono::nanoseconds(std::uniform_int_distribution<long>(0, 1'000'000'000)(rng));
    if (pick < 50) return time_point::min() + std::chrono::nanoseconds(small);  // extreme past
    if (pick < 80) return base_ + 1h + std::chrono::milliseconds(small);        // not due, ties
    if (pick < 95) return time_point::max();                                    // never
    return time_point::max() - std::chrono::nanoseconds(1 + small);
  }

 private:
  profile profile_;
  time_point base_;
};

enum class op { offer, poll, remove_queued, remove_not_queued, remove_foreign, pop_head, remove_if, offer_cancelled };

op pick_op(std::mt19937_64& rng, bool growing) {
  // Growing phases build heaps of a few hundred tasks; shrinking ones empty them.
  const int offer_weight = growing ? 90 : 20;
  const int weights[] = {offer_weight, 15, 15, 6, 3, 15, 1, 2};
  std::discrete_distribution<int> dist(std::begin(weights), std::end(weights));
  return static_cast<op>(dist(rng));
}

const char* op_name(op o) {
  switch (o) {
    case op::offer: return "offer";
    case op::poll: return "poll";
    case op::remove_queued: return "remove_queued";
    case op::remove_not_queued: return "remove_not_queued";
    case op::remove_foreign: return "remove_foreign";
    case op::pop_head: return "pop_head";
    case op::remove_if: return "remove_if";
    case op::offer_cancelled: return "offer_cancelled";
  }
  return "?";
}

void run_property(profile prof, std::uint64_t seed, int steps) {
  BOOST_TEST_CONTEXT("seed " << seed << ", profile " << static_cast<int>(prof)) {
    std::mt19937_64 rng(seed);
    const time_point base = clock::now();
    deadline_source next_deadline(prof, base);
    life_counter callables;
    std::uint64_t next_seq = 0;
    std::size_t max_size = 0;
    long checked_outputs = 0;

    {
      cpd::delayed_work_queue q;
      std::map<key, cpd::task_ptr> model;  // what the queue must hold
      std::vector<cpd::task_ptr> graveyard;  // tasks that were queued and left

      // Tasks queued in a different queue: their heap_index is valid there,
      // and small enough to be a valid slot here too.
      cpd::delayed_work_queue other;
      std::vector<cpd::task_ptr> foreign;
      for (std::uint64_t i = 0; i < 4; ++i) {
        foreign.push_back(make_tracked(callables, base + 2h, 1'000'000'000 + i));
        BOOST_TEST_REQUIRE(other.offer(foreign.back()));
      }

      auto bury = [&](cpd::task_ptr t) {
        if (graveyard.size() < 64) {
          graveyard.push_back(std::move(t));
        } else {
          graveyard[std::uniform_int_distribution<std::size_t>(0, graveyard.size() - 1)(rng)] = std::move(t);
        }
      };
      // The model's head when it must come out of the queue, checking identity.
      auto expect_head = [&](const cpd::task_ptr& got, bool must_be_due) {
        const bool head_due = !model.empty() && model.begin()->first.first <= base.time_since_epoch().count();
        if (model.empty() || (must_be_due && !head_due)) {
          BOOST_TEST_REQUIRE(!got);
          return;
        }
        BOOST_TEST_REQUIRE(static_cast<bool>(got));
        BOOST_TEST_REQUIRE(got.get() == model.begin()->second.get());
        BOOST_TEST_REQUIRE(got->heap_index == cpd::task_base::not_queued);
        ++checked_outputs;
        bury(std::move(model.begin()->second));
        model.erase(model.begin());
      };

      for (int step = 0; step < steps; ++step) {
        const bool growing = (step / 400) % 2 == 0;
        const op o = pick_op(rng, growing);
        BOOST_TEST_INFO_SCOPE("step " << step << " op " << op_name(o) << " size " << model.size());
        switch (o) {
          case op::offer: {
            cpd::task_ptr t = make_tracked(callables, next_deadline(rng), next_seq++);
            BOOST_TEST_REQUIRE(q.offer(t));
            BOOST_TEST_REQUIRE(t->heap_index != cpd::task_base::not_queued);
            model.emplace(key_of(*t), std::move(t));
            break;
          }
          case op::poll:
            expect_head(q.poll(), /*must_be_due=*/true);
            break;
          case op::pop_head:
            expect_head(q.pop_head(), /*must_be_due=*/false);
            break;
          case op::remove_queued: {
            if (model.empty()) {
              BOOST_TEST_REQUIRE(!q.pop_head());
              break;
            }
            auto it = std::next(model.begin(),
                                std::uniform_int_distribution<std::ptrdiff_t>(
                                    0, static_cast<std::ptrdiff_t>(model.size()) - 1)(rng));
            cpd::task_ptr t = std::move(it->second);
            model.erase(it);
            BOOST_TEST_REQUIRE(q.remove(*t));
            BOOST_TEST_REQUIRE(t->heap_index == cpd::task_base::not_queued);
            BOOST_TEST_REQUIRE(!q.remove(*t));  // a second remove finds nothing
            bury(std::move(t));
            break;
          }
          case op::remove_not_queued: {
            if (!graveyard.empty() && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
              const auto& t = graveyard[std::uniform_int_distribution<std::size_t>(0, graveyard.size() - 1)(rng)];
              BOOST_TEST_REQUIRE(!q.remove(*t));
            } else {
              cpd::task_ptr never_queued = make_tracked(callables, next_deadline(rng), next_seq++);
              BOOST_TEST_REQUIRE(!q.remove(*never_queued));
            }
            break;
          }
          case op::remove_foreign: {
            const auto& t = foreign[std::uniform_int_distribution<std::size_t>(0, foreign.size() - 1)(rng)];
            BOOST_TEST_REQUIRE(!q.remove(*t));
            BOOST_TEST_REQUIRE(other.size() == foreign.size());
            BOOST_TEST_REQUIRE(other.check_invariants());
            break;
          }
          case op::remove_if: {
            const std::uint64_t m = std::uniform_int_distribution<std::uint64_t>(2, 5)(rng);
            const std::uint64_t r = std::uniform_int_distribution<std::uint64_t>(0, m - 1)(rng);
            std::vector<cpd::task_base*> expected;
            for (const auto& [k, t] : model)
              if (k.second % m == r) expected.push_back(t.get());
            auto got = q.remove_if([&](const cpd::task_base& t) { return t.sequence() % m == r; });
            BOOST_TEST_REQUIRE(got.size() == expected.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
              BOOST_TEST_REQUIRE(got[i].get() == expected[i]);
              BOOST_TEST_REQUIRE(got[i]->heap_index == cpd::task_base::not_queued);
              model.erase(key_of(*got[i]));
              bury(std::move(got[i]));
            }
            break;
          }
          case op::offer_cancelled: {
            cpd::task_ptr t = make_tracked(callables, next_deadline(rng), next_seq++);
            BOOST_TEST_REQUIRE(t->cancel(false));
            BOOST_TEST_REQUIRE(!q.offer(t));
            BOOST_TEST_REQUIRE(t->heap_index == cpd::task_base::not_queued);
            break;
          }
        }

        // The properties, after every single step.
        BOOST_TEST_REQUIRE(q.check_invariants());
        BOOST_TEST_REQUIRE(q.size() == model.size());
        const auto head = q.head_deadline();
        BOOST_TEST_REQUIRE(head.has_value() == !model.empty());
        if (head) BOOST_TEST_REQUIRE(head->time_since_epoch().count() == model.begin()->first.first);
        if (model.size() > max_size) max_size = model.size();
      }

      // Everything left comes out in model order; a second queue built from
      // the same tasks is left to its destructor.
      BOOST_TEST_REQUIRE(other.check_invariants());
      std::vector<cpd::task_ptr> rest = q.drain();
      BOOST_TEST_REQUIRE(rest.size() == model.size());
      std::size_t i = 0;
      for (const auto& [k, t] : model) {
        BOOST_TEST_REQUIRE(rest[i].get() == t.get());
        BOOST_TEST_REQUIRE(rest[i]->heap_index == cpd::task_base::not_queued);
        ++i;
      }
      BOOST_TEST_REQUIRE(q.empty());
      BOOST_TEST_REQUIRE(q.check_invariants());
      for (auto& t : rest) BOOST_TEST_REQUIRE(q.offer(std::move(t)));  // queue dies holding them
      BOOST_TEST_REQUIRE(q.size() == model.size());
    }
    // The queues released every reference they held: all callables are gone.
    BOOST_TEST(callables.live.load() == 0);
    // The sequences really exercised the heap (guards against a vacuous run).
    BOOST_TEST_MESSAGE("max heap size " << max_size << ", outputs checked " << checked_outputs);
    BOOST_TEST(max_size >= 50u);
    BOOST_TEST(checked_outputs >= steps / 10);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(heap_property)

BOOST_AUTO_TEST_CASE(mixed_deadlines_match_model) {
  for (std::uint64_t seed : {1u, 2u, 3u, 0xC0FFEEu}) run_property(profile::mixed, seed, 6000);
}

BOOST_AUTO_TEST_CASE(many_equal_deadlines_match_model) {
  for (std::uint64_t seed : {11u, 12u, 13u}) run_property(profile::ties, seed, 5000);
}

BOOST_AUTO_TEST_CASE(never_deadlines_mixed_with_finite_match_model) {
  for (std::uint64_t seed : {21u, 22u, 23u}) run_property(profile::never_heavy, seed, 5000);
}

// Removing from every slot of heaps of every small size, including the last
// slot and the root, keeps the heap and every task's index valid. (The
// first task goes on the run's end, the rest, each due before the last,
// into the heap: a victim in every heap slot, then the run's.)
BOOST_AUTO_TEST_CASE(remove_from_every_slot) {
  const time_point base = clock::now();
  for (std::size_t n = 1; n <= 33; ++n) {
    for (std::size_t victim = 0; victim < n; ++victim) {
      BOOST_TEST_CONTEXT("n " << n << " victim " << victim) {
        cpd::delayed_work_queue q;
        std::vector<cpd::task_ptr> tasks;
        // Reverse-sorted keys, some deadlines tied, give varied heap shapes
        // (all due already: later ones would wait in the wheel).
        for (std::size_t i = 0; i < n; ++i) {
          tasks.push_back(make_noop(base - std::chrono::milliseconds(1 + i / 2), n - i));
          BOOST_TEST_REQUIRE(q.offer(tasks.back()));
        }
        BOOST_TEST_REQUIRE(q.check_invariants());
        // Heap slots 0 to n - 2, then the run's one task.
        cpd::task_base* in_slot = victim + 1 == n ? tasks[0].get() : nullptr;
        for (const auto& t : tasks)
          if (victim + 1 < n && t->heap_index == victim) in_slot = t.get();
        BOOST_TEST_REQUIRE(in_slot != nullptr);
        BOOST_TEST_REQUIRE(q.remove(*in_slot));
        BOOST_TEST_REQUIRE(q.check_invariants());
        BOOST_TEST_REQUIRE(q.size() == n - 1);
        // The rest pops in (deadline, sequence) order.
        std::vector<cpd::task_base*> expected;
        for (const auto& t : tasks)
          if (t.get() != in_slot) expected.push_back(t.get());
        std::sort(expected.begin(), expected.end(),
                  [](const cpd::task_base* a, const cpd::task_base* b) { return runs_before(*a, *b); });
        for (cpd::task_base* e : expected) {
          cpd::task_ptr h = q.pop_head();
          BOOST_TEST_REQUIRE(h.get() == e);
          BOOST_TEST_REQUIRE(q.check_invariants());
        }
        BOOST_TEST_REQUIRE(q.empty());
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

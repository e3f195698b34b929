// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Rejection policies: at the max_queued bound and after shutdown.
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using chronopool::rejected_execution;
using chronopool::rejection_policy;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;
using pool_test::long_wait;
using pool_test::ready_within;

namespace bdata = boost::unit_test::data;

namespace {

/// A 1-thread pool whose thread is held by a running task, with its queue
/// filled to the bound (3) by far-future tasks queued in the order 2h, 1h,
/// 3h: the queue's head is fillers[1].
class bounded_pool {
 public:
  static constexpr std::size_t bound = 3;

  explicit bounded_pool(rejection_policy policy) {
    scheduled_thread_pool_options o;
    o.core_pool_size = 1;
    o.max_queued = bound;
    o.rejection = policy;
    pool_ = std::make_unique<scheduled_thread_pool>(o);
    BOOST_TEST((pool_->get_rejection_policy() == policy));
    blocker_ = pool_->submit([this] {
      started_.bump();
      return release_.wait();
    });
    BOOST_REQUIRE(started_.wait_for_at_least(1));
    for (const auto delay : {2h, 1h, 3h}) fillers.push_back(pool_->schedule(delay, [this] { return runs.fetch_add(1); }));
    BOOST_REQUIRE(pool_->queued_count() == bound);
  }
  ~bounded_pool() {
    release_.open();
    pool_.reset();
  }

  scheduled_thread_pool& pool() { return *pool_; }
  void release() { release_.open(); }
  const scheduled_future<bool>& blocker() const { return blocker_; }

  std::atomic<int> runs{0};  // runs of the fillers
  std::vector<scheduled_future<int>> fillers;

 private:
  pool_test::gate release_;
  pool_test::counter started_;
  std::unique_ptr<scheduled_thread_pool> pool_;
  scheduled_future<bool> blocker_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(rejection)

BOOST_AUTO_TEST_CASE(abort_at_bound_throws_and_queues_nothing) {
  bounded_pool b(rejection_policy::abort);
  auto& pool = b.pool();
  std::atomic<int> runs{0};
  auto payload = std::make_shared<int>(0);
  BOOST_CHECK_THROW(pool.submit([&runs, payload] { return runs.fetch_add(1); }), rejected_execution);
  BOOST_TEST(payload.use_count() == 1, "the rejected callable must be destroyed");
  BOOST_CHECK_THROW(pool.schedule(1ms, [&] { runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_at(std::chrono::steady_clock::now(), [&] { runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.execute([&] { runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [&] { runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 1ms, [&] { runs.fetch_add(1); }), rejected_execution);
  BOOST_TEST(pool.queued_count() == bounded_pool::bound);
  for (const auto& f : b.fillers) BOOST_TEST(!f.done());

  // The bound counts queued tasks only: one removed makes room for one.
  BOOST_TEST(b.fillers[2].cancel());
  BOOST_TEST(pool.queued_count() == bounded_pool::bound - 1);
  auto accepted = pool.submit([&] { return runs.fetch_add(1) + 100; });
  BOOST_TEST(pool.queued_count() == bounded_pool::bound);
  BOOST_CHECK_THROW(pool.submit([&] { return runs.fetch_add(1); }), rejected_execution);

  // The policy can be changed at run time.
  pool.set_rejection_policy(rejection_policy::discard);
  BOOST_TEST((pool.get_rejection_policy() == rejection_policy::discard));
  auto discarded = pool.submit([&] { return runs.fetch_add(1); });
  BOOST_TEST(discarded.cancelled());

  b.release();
  BOOST_REQUIRE(ready_within(accepted));
  BOOST_TEST(accepted.get() == 100);
  BOOST_REQUIRE(ready_within(b.blocker()));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(runs.load() == 1);  // only the accepted one
  BOOST_TEST(b.runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(discard_at_bound_returns_a_cancelled_future) {
  bounded_pool b(rejection_policy::discard);
  auto& pool = b.pool();
  std::atomic<int> runs{0};
  auto payload = std::make_shared<int>(0);
  auto f = pool.submit([&runs, payload] { return runs.fetch_add(1); });
  BOOST_TEST(payload.use_count() == 1, "the discarded callable must be destroyed");
  BOOST_TEST(f.valid());
  BOOST_TEST(f.done());
  BOOST_TEST(f.cancelled());
  if (f.done()) BOOST_CHECK_THROW(f.get(), task_cancelled);
  auto d = pool.schedule(1ms, [&] { runs.fetch_add(1); });
  BOOST_TEST(d.cancelled());
  auto p = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { runs.fetch_add(1); });
  BOOST_TEST(p.cancelled());
  BOOST_CHECK_NO_THROW(pool.execute([&] { runs.fetch_add(1); }));
  BOOST_TEST(pool.queued_count() == bounded_pool::bound);
  for (const auto& filler : b.fillers) BOOST_TEST(!filler.done());

  b.release();
  BOOST_REQUIRE(ready_within(b.blocker()));
  std::this_thread::sleep_for(20ms);
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(discard_oldest_at_bound_drops_the_head) {
  bounded_pool b(rejection_policy::discard_oldest);
  auto& pool = b.pool();
  auto first = pool.submit([] { return 41; });  // drops fillers[1] (1h), the head
  BOOST_TEST(b.fillers[1].cancelled());
  BOOST_TEST(!b.fillers[0].done());
  BOOST_TEST(!b.fillers[2].done());
  BOOST_TEST(!first.done());
  BOOST_TEST(pool.queued_count() == bounded_pool::bound);

  auto second = pool.submit([] { return 42; });  // now `first` (due now) is the head
  BOOST_TEST(first.cancelled());
  BOOST_TEST(!second.done());
  BOOST_TEST(!b.fillers[0].done());
  BOOST_TEST(!b.fillers[2].done());
  BOOST_TEST(pool.queued_count() == bounded_pool::bound);

  b.release();
  BOOST_REQUIRE(ready_within(second));
  BOOST_TEST(second.get() == 42);
  BOOST_REQUIRE(first.done());
  BOOST_CHECK_THROW(first.get(), task_cancelled);
  BOOST_TEST(b.runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(caller_runs_at_bound_runs_on_the_calling_thread) {
  bounded_pool b(rejection_policy::caller_runs);
  auto& pool = b.pool();
  const auto me = std::this_thread::get_id();

  auto f = pool.submit([] { return std::this_thread::get_id(); });
  BOOST_REQUIRE(f.done());  // ready when the call returns
  BOOST_TEST(!f.cancelled());
  BOOST_TEST((f.get() == me));

  // A delayed task runs at once too: the delay is ignored.
  const auto before = std::chrono::steady_clock::now();
  auto delayed = pool.schedule(1h, [] { return std::this_thread::get_id(); });
  BOOST_REQUIRE(delayed.done());
  BOOST_TEST((delayed.get() == me));
  BOOST_TEST((std::chrono::steady_clock::now() - before < 10s));

  std::atomic<std::thread::id> executed_on{};
  pool.execute([&] { executed_on.store(std::this_thread::get_id()); });
  BOOST_TEST((executed_on.load() == me));

  // The task's exception goes to its future, not to the submitter.
  scheduled_future<void> failing;
  BOOST_CHECK_NO_THROW(failing = pool.submit([] { throw std::runtime_error("boom"); }));
  BOOST_REQUIRE(failing.done());
  BOOST_TEST(!failing.cancelled());
  BOOST_CHECK_THROW(failing.get(), std::runtime_error);

  // A periodic task cannot run in its caller: rejected as by abort.
  std::atomic<int> periodic_runs{0};
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [&] { periodic_runs.fetch_add(1); }), rejected_execution);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 1ms, [&] { periodic_runs.fetch_add(1); }), rejected_execution);

  BOOST_TEST(pool.queued_count() == bounded_pool::bound);
  for (const auto& filler : b.fillers) BOOST_TEST(!filler.done());
  BOOST_TEST(!b.blocker().done());
  b.release();
  BOOST_REQUIRE(ready_within(b.blocker()));
  std::this_thread::sleep_for(10ms);
  BOOST_TEST(periodic_runs.load() == 0);
  BOOST_TEST(b.runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(zero_bound) {
  {
    scheduled_thread_pool_options o;
    o.max_queued = 0;
    scheduled_thread_pool pool(o);
    BOOST_CHECK_THROW(pool.submit([] { return 1; }), rejected_execution);
  }
  {
    scheduled_thread_pool_options o;
    o.max_queued = 0;
    o.rejection = rejection_policy::caller_runs;
    scheduled_thread_pool pool(o);
    auto f = pool.submit([] { return std::this_thread::get_id(); });
    BOOST_REQUIRE(f.done());
    BOOST_TEST((f.get() == std::this_thread::get_id()));
  }
  {
    scheduled_thread_pool_options o;
    o.max_queued = 0;
    o.rejection = rejection_policy::discard_oldest;  // nothing to drop: discarded
    scheduled_thread_pool pool(o);
    auto f = pool.submit([] { return 1; });
    BOOST_TEST(f.cancelled());
  }
}

static_assert(static_cast<int>(rejection_policy::abort) == 0 && static_cast<int>(rejection_policy::caller_runs) == 1 &&
              static_cast<int>(rejection_policy::discard) == 2 && static_cast<int>(rejection_policy::discard_oldest) == 3);

// policy_index: 0 abort, 1 caller_runs, 2 discard, 3 discard_oldest.
BOOST_DATA_TEST_CASE(after_shutdown, bdata::make({0, 1, 2, 3}), policy_index) {
  const rejection_policy policy = static_cast<rejection_policy>(policy_index);
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.rejection = policy;
  scheduled_thread_pool pool(o);
  std::atomic<int> filler_runs{0};
  auto filler = pool.schedule(1h, [&] { filler_runs.fetch_add(1); });  // stays queued after shutdown()
  pool.shutdown();
  BOOST_REQUIRE(pool.queued_count() == 1u);

  std::atomic<int> runs{0};
  auto payload = std::make_shared<int>(0);
  if (policy == rejection_policy::abort) {
    BOOST_CHECK_THROW(pool.submit([&runs, payload] { runs.fetch_add(1); }), rejected_execution);
    BOOST_CHECK_THROW(pool.schedule(1ms, [&] { runs.fetch_add(1); }), rejected_execution);
    BOOST_CHECK_THROW(pool.execute([&] { runs.fetch_add(1); }), rejected_execution);
    BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [&] { runs.fetch_add(1); }), rejected_execution);
  } else {
    // Discarded: a cancelled future, never run (caller_runs too, as in Java).
    scheduled_future<void> f;
    BOOST_CHECK_NO_THROW(f = pool.submit([&runs, payload] { runs.fetch_add(1); }));
    BOOST_TEST(f.cancelled());
    scheduled_future<void> d;
    BOOST_CHECK_NO_THROW(d = pool.schedule(1ms, [&] { runs.fetch_add(1); }));
    BOOST_TEST(d.cancelled());
    BOOST_CHECK_NO_THROW(pool.execute([&] { runs.fetch_add(1); }));
    if (policy != rejection_policy::caller_runs) {
      scheduled_future<void> p;
      BOOST_CHECK_NO_THROW(p = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { runs.fetch_add(1); }));
      BOOST_TEST(p.cancelled());
    }
  }
  BOOST_TEST(payload.use_count() == 1, "the refused callable must be destroyed");
  BOOST_TEST(runs.load() == 0);
  // discard_oldest after shutdown must not drop the queued task.
  BOOST_TEST(!filler.done());
  BOOST_TEST(pool.queued_count() == 1u);

  auto pending = pool.shutdown_now();
  BOOST_REQUIRE(pending.size() == 1u);
  BOOST_TEST(pending[0].belongs_to(filler));
  pending.clear();
  BOOST_REQUIRE(pool.wait_for_termination(long_wait));
  BOOST_TEST(runs.load() == 0);
  BOOST_TEST(filler_runs.load() == 0);
}

// Re-arming a periodic task is never refused, even with the queue at its
// bound; new submissions still are.
BOOST_DATA_TEST_CASE(periodic_rearm_is_never_rejected_at_the_bound, bdata::make({false, true}), fixed_rate) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.max_queued = 1;
  pool_test::counter in_first_run;
  pool_test::gate filled;
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(o);
  auto body = [&] {
    if (runs.fetch_add(1) == 0) {
      in_first_run.bump();
      filled.wait();
    }
  };
  auto periodic = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 1ms, body) : pool.schedule_with_fixed_delay(0ms, 1ms, body);
  BOOST_REQUIRE(in_first_run.wait_for_at_least(1));
  // The periodic task is running, so the queue is empty: fill it to the bound.
  auto filler = pool.schedule(1h, [] {});
  BOOST_REQUIRE(pool.queued_count() == 1u);
  BOOST_CHECK_THROW(pool.submit([] {}), rejected_execution);
  filled.open();  // the run ends and the task re-arms with the queue full

  BOOST_TEST(pool_test::eventually([&] { return runs.load() >= 4; }));
  BOOST_TEST(!periodic.done());
  BOOST_TEST(!filler.done());
  BOOST_TEST(periodic.cancel());
  BOOST_REQUIRE(ready_within(periodic));
  BOOST_TEST(periodic.cancelled());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Rejections that say why (rejected_execution::reason()) and a user's
// rejection handler (rejected_task).
#include "pool_test_support.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/rejected_task.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using chronopool::rejected_execution;
using chronopool::rejected_task;
using chronopool::rejection_policy;
using chronopool::rejection_reason;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::long_wait;
using pool_test::ready_within;

namespace {

/// A 1-thread pool whose thread is held by a running task and whose queue
/// is at its bound of 1 (a far-future filler): the next submission is refused
/// with queue_full.
class full_pool {
 public:
  explicit full_pool(std::function<void(rejected_task&)> handler = {},
                     rejection_policy policy = rejection_policy::abort) {
    scheduled_thread_pool_options o;
    o.core_pool_size = 1;
    o.max_queued = 1;
    o.rejection = policy;
    o.rejection_handler = std::move(handler);
    o.error_handler = [this](std::exception_ptr, const chronopool::task_view*) { errors.bump(); };
    pool_ = std::make_unique<scheduled_thread_pool>(o);
    pool_->execute([this] {
      started_.bump();
      release_.wait();
    });
    BOOST_REQUIRE(started_.wait_for_at_least(1));
    filler_ = pool_->schedule(1h, [] {});
    BOOST_REQUIRE(pool_->queued_count() == 1u);
  }
  ~full_pool() {
    release_.open();
    pool_.reset();
  }
  scheduled_thread_pool& pool() { return *pool_; }
  pool_test::counter errors;

 private:
  pool_test::gate release_;
  pool_test::counter started_;
  std::unique_ptr<scheduled_thread_pool> pool_;
  scheduled_future<void> filler_;
};

struct handler_error : std::runtime_error {
  handler_error() : std::runtime_error("from the handler") {}
};

}  // namespace

BOOST_AUTO_TEST_SUITE(rejection_handler)

BOOST_AUTO_TEST_CASE(rejected_execution_carries_the_reason) {
  {
    full_pool b;
    try {
      b.pool().submit([] { return 1; });
      BOOST_ERROR("not rejected");
    } catch (const rejected_execution& e) {
      BOOST_TEST((e.reason() == rejection_reason::queue_full));
      const std::string what = e.what();
      BOOST_TEST(what.find("submit") != std::string::npos);
      BOOST_TEST(what.find("max_queued") != std::string::npos);
    }
  }
  scheduled_thread_pool pool(1);
  pool.shutdown();
  try {
    pool.schedule(1ms, [] {});
    BOOST_ERROR("not rejected");
  } catch (const rejected_execution& e) {
    BOOST_TEST((e.reason() == rejection_reason::shutdown));
    const std::string what = e.what();
    BOOST_TEST(what.find("schedule") != std::string::npos);
    BOOST_TEST(what.find("shut down") != std::string::npos);
  }
  BOOST_TEST(to_string(rejection_reason::queue_full) == "queue_full");
  BOOST_TEST(to_string(rejection_reason::shutdown) == "shutdown");
}

// A handler replaces the policy (abort here): one that leaves the task drops
// it, its future is cancelled and its callable destroyed; it is told why and
// by which call.
BOOST_AUTO_TEST_CASE(a_handler_that_leaves_the_task_drops_it) {
  int calls = 0;
  rejection_reason seen_reason = rejection_reason::shutdown;
  std::string seen_call;
  bool seen_periodic = true;
  full_pool b([&](rejected_task& r) {
    ++calls;
    seen_reason = r.reason();
    seen_call = r.call();
    seen_periodic = r.is_periodic();
    BOOST_TEST(!r.done());
    BOOST_TEST((r.exception().reason() == rejection_reason::queue_full));
    BOOST_TEST(std::string(r.exception().what()).find("submit") != std::string::npos);
  });
  BOOST_TEST(b.pool().has_rejection_handler());
  auto payload = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  scheduled_future<void> f;
  BOOST_CHECK_NO_THROW(f = b.pool().submit([&runs, payload] { runs.fetch_add(1); }));
  BOOST_TEST(calls == 1);
  BOOST_TEST((seen_reason == rejection_reason::queue_full));
  BOOST_TEST(seen_call == "submit");
  BOOST_TEST(!seen_periodic);
  BOOST_TEST(f.cancelled());
  BOOST_TEST(payload.use_count() == 1, "the dropped callable must be destroyed");
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(a_handler_may_run_the_task_on_the_submitting_thread) {
  full_pool b([](rejected_task& r) {
    r.run();
    BOOST_TEST(r.done());
    r.run();  // a second run does nothing
    r.discard();  // nor does dropping it afterwards
  });
  std::atomic<int> runs{0};
  std::thread::id ran_on;
  auto f = b.pool().submit([&] {
    ran_on = std::this_thread::get_id();
    runs.fetch_add(1);
    return 7;
  });
  BOOST_REQUIRE(f.done());
  BOOST_TEST(f.get() == 7);
  BOOST_TEST(runs.load() == 1);
  BOOST_TEST((ran_on == std::this_thread::get_id()));
  // execute()d work run by the handler reports its error to the error handler.
  b.pool().execute([] { throw std::runtime_error("x"); });
  BOOST_TEST(b.errors.value() == 1u);
}

BOOST_AUTO_TEST_CASE(an_exception_from_the_handler_propagates_and_drops_the_task) {
  full_pool b([](rejected_task&) { throw handler_error(); });
  auto payload = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  BOOST_CHECK_THROW(b.pool().submit([&runs, payload] { runs.fetch_add(1); }), handler_error);
  BOOST_CHECK_THROW(b.pool().execute_after(1ms, [&runs, payload] { runs.fetch_add(1); }), handler_error);
  BOOST_TEST(payload.use_count() == 1, "the dropped callable must be destroyed");
  BOOST_TEST(runs.load() == 0);
  BOOST_TEST(b.pool().queued_count() == 1u);  // only the filler
}

BOOST_AUTO_TEST_CASE(a_handler_that_runs_the_task_then_throws_ran_it_once) {
  full_pool b([](rejected_task& r) {
    r.run();
    throw handler_error();
  });
  std::atomic<int> runs{0};
  BOOST_CHECK_THROW(b.pool().execute([&] { runs.fetch_add(1); }), handler_error);
  BOOST_TEST(runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_periodic_task_cannot_run_on_the_submitting_thread) {
  full_pool b([](rejected_task& r) {
    BOOST_TEST(r.is_periodic());
    r.run();
  });
  auto payload = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  BOOST_CHECK_THROW(b.pool().schedule_at_fixed_rate(0ms, 1ms, [&runs, payload] { runs.fetch_add(1); }),
                    std::logic_error);
  BOOST_TEST(payload.use_count() == 1);
  BOOST_TEST(runs.load() == 0);
}

BOOST_AUTO_TEST_CASE(after_shutdown_the_handler_is_told_and_may_still_run_it) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  rejection_reason seen = rejection_reason::queue_full;
  o.rejection_handler = [&](rejected_task& r) {
    seen = r.reason();
    r.run();
  };
  scheduled_thread_pool pool(o);
  pool.shutdown();
  auto f = pool.schedule(1h, [] { return 3; });
  BOOST_TEST((seen == rejection_reason::shutdown));
  BOOST_REQUIRE(f.done());
  BOOST_TEST(f.get() == 3);
  BOOST_TEST(pool.wait_for_termination(long_wait));
}

BOOST_AUTO_TEST_CASE(the_setter_replaces_and_resets_the_handler) {
  full_pool b;  // abort, no handler
  BOOST_TEST(!b.pool().has_rejection_handler());
  BOOST_CHECK_THROW(b.pool().submit([] {}), rejected_execution);
  int calls = 0;
  b.pool().set_rejection_handler([&](rejected_task&) { ++calls; });
  BOOST_TEST(b.pool().has_rejection_handler());
  auto f = b.pool().submit([] {});
  BOOST_TEST(calls == 1);
  BOOST_TEST(f.cancelled());
  b.pool().set_rejection_handler({});
  BOOST_TEST(!b.pool().has_rejection_handler());
  BOOST_CHECK_THROW(b.pool().submit([] {}), rejected_execution);
  BOOST_TEST(calls == 1);
}

BOOST_AUTO_TEST_SUITE_END()

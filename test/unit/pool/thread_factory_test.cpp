// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The thread factory: the pool's threads are the factory's, and a factory
// that fails loses no task and leaves the pool usable.
#include "pool_test_support.hpp"

#include <chronopool/detail/platform/thread_naming.hpp>
#include <chronopool/pool_thread.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using chronopool::pool_thread;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using pool_test::long_wait;
using pool_test::ready_within;

namespace {

struct factory_failure : std::runtime_error {
  factory_failure() : std::runtime_error("the factory failed on purpose") {}
};

std::string this_thread_name() { return chronopool::detail::platform::current_thread_name(); }

/// @p name as the system keeps it: cut to its limit (empty where threads
/// have no names, detail/platform/thread_naming.hpp).
std::string as_kept(const std::string& name) {
  return name.substr(0, chronopool::detail::platform::max_thread_name_length());
}

/// A thread type of the user's own (stands in for a native handle made with
/// a stack size): anything with joinable(), join() and detach() will do.
class my_thread {
 public:
  explicit my_thread(std::function<void()> f) : t_(std::move(f)) {}
  bool joinable() const noexcept { return t_.joinable(); }
  void join() {
    joins->fetch_add(1);
    t_.join();
  }
  void detach() { t_.detach(); }
  std::shared_ptr<std::atomic<int>> joins = std::make_shared<std::atomic<int>>(0);

 private:
  std::thread t_;
};

/// Collects what the pool's error handler is given.
struct error_log {
  std::mutex m;
  std::vector<std::string> messages;
  pool_test::counter count;
  void install(scheduled_thread_pool_options& o) {
    o.error_handler = [this](std::exception_ptr e, const chronopool::task_view*) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::lock_guard lock(m);
        messages.emplace_back(ex.what());
      }
      count.bump();
    };
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(thread_factory)

BOOST_AUTO_TEST_CASE(the_factory_makes_every_thread_with_its_index) {
  std::mutex m;
  std::vector<std::size_t> indexes;
  std::set<std::thread::id> made;
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.thread_factory = [&](std::size_t index, std::function<void()> body) -> pool_thread {
    std::lock_guard lock(m);
    indexes.push_back(index);
    std::thread t([index, body = std::move(body)] {
      const std::string name = "mine-" + std::to_string(index);
      chronopool::detail::platform::set_current_thread_name(name);
      body();
    });
    made.insert(t.get_id());
    return pool_thread(std::move(t));
  };
  {
    scheduled_thread_pool pool(o);
    BOOST_TEST(pool.prestart_core_threads() == 3u);
    {
      std::lock_guard lock(m);
      BOOST_TEST((indexes == std::vector<std::size_t>{0, 1, 2}));
    }
    // Work runs on the factory's threads, which keep the names it gave them.
    std::vector<scheduled_future<std::pair<std::thread::id, std::string>>> runs;
    for (int i = 0; i < 30; ++i)
      runs.push_back(pool.submit([] { return std::make_pair(std::this_thread::get_id(), this_thread_name()); }));
    for (auto& f : runs) {
      BOOST_REQUIRE(ready_within(f));
      const auto [id, name] = f.get();
      std::lock_guard lock(m);
      BOOST_TEST(made.count(id) == 1u);
      BOOST_TEST(name.rfind(as_kept("mine-"), 0) == 0u, name);
    }
  }
  BOOST_TEST(indexes.size() == 3u);
}

BOOST_AUTO_TEST_CASE(the_factory_may_return_any_joinable_thread) {
  auto joins = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> jthreads{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.thread_factory = [&](std::size_t index, std::function<void()> body) -> pool_thread {
    if (index == 0) {
      my_thread t(std::move(body));
      t.joins = joins;
      return pool_thread(std::move(t));
    }
    jthreads.fetch_add(1);
    return std::jthread(std::move(body));
  };
  {
    scheduled_thread_pool pool(o);
    BOOST_TEST(pool.prestart_core_threads() == 2u);
    auto f = pool.submit([] { return 1; });
    BOOST_REQUIRE(ready_within(f));
    pool.join();
  }
  BOOST_TEST(joins->load() == 1, "the pool joins the thread it was given");
  BOOST_TEST(jthreads.load() == 1);
}

// The default factory still names threads prefix-index.
BOOST_AUTO_TEST_CASE(the_default_factory_names_threads_from_the_prefix) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.thread_name_prefix = "dflt";
  scheduled_thread_pool pool(o);
  auto f = pool.submit([] { return this_thread_name(); });
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == as_kept("dflt-0"));
}

// A factory that fails every other call (from its first) loses nothing: a
// submission either throws (no thread ran, its task was not queued) or its
// task runs exactly once.
BOOST_AUTO_TEST_CASE(a_flaky_factory_loses_no_task) {
  std::atomic<int> calls{0};
  error_log errors;
  scheduled_thread_pool_options o;
  o.core_pool_size = 4;
  o.keep_alive = 1ms;
  o.allow_core_thread_timeout = true;  // threads come and go: the factory is called often
  errors.install(o);
  // A factory may return a std::thread as it is (it converts to pool_thread).
  o.thread_factory = [&](std::size_t, std::function<void()> body) {
    if (calls.fetch_add(1) % 2 == 0) throw factory_failure();
    return std::thread(std::move(body));
  };
  constexpr int n = 400;
  std::vector<std::atomic<int>> runs(n);
  std::vector<char> accepted(n, 0);
  pool_test::counter ran;
  {
    scheduled_thread_pool pool(o);
    for (int i = 0; i < n; ++i) {
      auto task = [&, i] {
        runs[static_cast<std::size_t>(i)].fetch_add(1);
        ran.bump();
      };
      try {
        if (i % 3 == 0) {
          pool.execute(task);
        } else if (i % 3 == 1) {
          pool.execute_after(std::chrono::microseconds(i % 7), task);
        } else {
          (void)pool.submit(task);
        }
        accepted[static_cast<std::size_t>(i)] = 1;
      } catch (const factory_failure&) {
      }
      if (i % 50 == 0) std::this_thread::sleep_for(3ms);  // let the threads time out: fresh starts later
    }
    const auto n_accepted = static_cast<std::size_t>(std::count(accepted.begin(), accepted.end(), 1));
    BOOST_TEST_MESSAGE(n_accepted << " of " << n << " accepted, " << calls.load() << " factory calls, "
                                  << errors.count.value() << " failures reported");
    BOOST_TEST(n_accepted > 0u);
    BOOST_REQUIRE(ran.wait_for_at_least(n_accepted));
    pool.join();
  }
  for (int i = 0; i < n; ++i)
    BOOST_TEST(runs[static_cast<std::size_t>(i)].load() == static_cast<int>(accepted[static_cast<std::size_t>(i)]),
               "task " << i);
  BOOST_TEST(calls.load() > 1);
}

// With a thread running, a failed start is reported and the task waits for
// the running thread.
BOOST_AUTO_TEST_CASE(with_a_thread_running_a_failure_is_reported_and_the_task_kept) {
  std::atomic<int> calls{0};
  error_log errors;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  errors.install(o);
  o.thread_factory = [&](std::size_t, std::function<void()> body) -> pool_thread {
    if (calls.fetch_add(1) > 0) throw factory_failure();
    return std::thread(std::move(body));
  };
  scheduled_thread_pool pool(o);
  pool_test::gate release;
  pool_test::counter started;
  pool.execute([&] {
    started.bump();
    release.wait();
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));
  scheduled_future<int> f;
  BOOST_REQUIRE_NO_THROW(f = pool.submit([] { return 5; }));  // the second thread fails to start
  BOOST_TEST(errors.count.wait_for_at_least(1));
  {
    std::lock_guard lock(errors.m);
    BOOST_TEST(errors.messages.size() == 1u);
    if (!errors.messages.empty()) BOOST_TEST(errors.messages.front() == "the factory failed on purpose");
  }
  BOOST_TEST(pool.pool_size() == 1u);
  release.open();
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == 5);
}

// A factory that never makes a thread: every submission throws its error and
// queues nothing; shutdown_now() has nothing stranded; destruction returns;
// once the factory works again, so does the pool.
BOOST_AUTO_TEST_CASE(a_pool_whose_factory_always_fails_stays_usable) {
  std::atomic<bool> working{false};
  std::atomic<int> calls{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.thread_factory = [&](std::size_t, std::function<void()> body) -> pool_thread {
    calls.fetch_add(1);
    if (!working.load()) throw factory_failure();
    return std::thread(std::move(body));
  };
  {
    scheduled_thread_pool pool(o);
    auto payload = std::make_shared<int>(0);
    BOOST_CHECK_THROW(pool.submit([payload] { return 1; }), factory_failure);
    BOOST_CHECK_THROW(pool.execute([payload] {}), factory_failure);
    BOOST_CHECK_THROW(pool.execute_after(1h, [payload] {}), factory_failure);
    BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [payload] {}), factory_failure);
    BOOST_CHECK_THROW(pool.prestart_core_thread(), factory_failure);
    BOOST_TEST(payload.use_count() == 1, "refused callables are destroyed");
    BOOST_TEST(pool.queued_count() == 0u);
    BOOST_TEST(pool.pool_size() == 0u);
    BOOST_TEST(calls.load() == 5);
    working.store(true);
    auto f = pool.submit([] { return 2; });
    BOOST_REQUIRE(ready_within(f));
    BOOST_TEST(f.get() == 2);
  }
  // Destruction of a pool that never had a thread returns, and shutdown_now()
  // finds nothing stranded.
  working.store(false);
  auto done = std::async(std::launch::async, [&] {
    scheduled_thread_pool pool(o);
    try {
      pool.execute([] {});
    } catch (const factory_failure&) {
    }
    const bool nothing = pool.shutdown_now().empty();
    const bool terminated = pool.wait_for_termination(long_wait);
    return nothing && terminated;
  });
  BOOST_REQUIRE((done.wait_for(long_wait) == std::future_status::ready));
  BOOST_TEST(done.get());
}

// A periodic task re-armed by its own thread stays scheduled when the extra
// core thread its re-arm tries to start cannot start (the failure is reported).
BOOST_AUTO_TEST_CASE(a_periodic_rearm_survives_a_failed_thread_start) {
  std::atomic<int> calls{0};
  error_log errors;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  errors.install(o);
  o.thread_factory = [&](std::size_t, std::function<void()> body) -> pool_thread {
    if (calls.fetch_add(1) > 0) throw factory_failure();
    return std::thread(std::move(body));
  };
  scheduled_thread_pool pool(o);
  pool_test::counter ticks;
  auto f = pool.schedule_at_fixed_rate(0ms, 1ms, [&] { ticks.bump(); });
  BOOST_TEST(ticks.wait_for_at_least(5));
  BOOST_TEST(!f.done(), "the periodic task must still be scheduled");
  BOOST_TEST(errors.count.value() >= 1u);
  BOOST_TEST(pool.pool_size() == 1u);
  f.cancel();
}

// discard_oldest makes room and queues the new task; when the thread it then
// tries to start fails while another runs, the new task stays queued (the
// failure is reported) and runs; the submission does not throw.
BOOST_AUTO_TEST_CASE(discard_oldest_keeps_its_task_when_a_thread_start_fails) {
  std::atomic<int> calls{0};
  error_log errors;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.max_queued = 1;
  o.rejection = chronopool::rejection_policy::discard_oldest;
  errors.install(o);
  o.thread_factory = [&](std::size_t, std::function<void()> body) -> pool_thread {
    if (calls.fetch_add(1) > 0) throw factory_failure();
    return std::thread(std::move(body));
  };
  scheduled_thread_pool pool(o);
  pool_test::gate release;
  pool_test::counter started;
  pool.execute([&] {
    started.bump();
    release.wait();
  });
  BOOST_REQUIRE(started.wait_for_at_least(1));
  auto filler = pool.schedule(1h, [] { return 0; });  // its start fails too: reported
  scheduled_future<int> f;
  BOOST_REQUIRE_NO_THROW(f = pool.submit([] { return 9; }));
  BOOST_TEST(filler.cancelled(), "discard_oldest dropped the head");
  BOOST_TEST(pool.queued_count() == 1u);
  release.open();
  BOOST_REQUIRE(ready_within(f));
  BOOST_TEST(f.get() == 9);
  BOOST_TEST(errors.count.value() >= 2u);
}

BOOST_AUTO_TEST_CASE(a_factory_that_returns_no_thread_fails_with_system_error) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.thread_factory = [](std::size_t, std::function<void()>) { return pool_thread(); };
  scheduled_thread_pool pool(o);
  try {
    pool.execute([] {});
    BOOST_ERROR("accepted with no thread to run it");
  } catch (const std::system_error& e) {
    BOOST_TEST((e.code() == std::errc::resource_unavailable_try_again));
    BOOST_TEST(std::string(e.what()).find("thread factory") != std::string::npos);
  }
  BOOST_TEST(pool.queued_count() == 0u);
}

// The body runs at most once: a factory that calls it again after the
// thread's body returned (or a copy kept by the factory) does nothing.
BOOST_AUTO_TEST_CASE(the_body_runs_at_most_once) {
  std::atomic<int> starts{0};
  std::function<void()> kept;
  std::mutex m;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.on_thread_start = [&](std::size_t) { starts.fetch_add(1); };
  o.thread_factory = [&](std::size_t, std::function<void()> body) -> pool_thread {
    {
      std::lock_guard lock(m);
      kept = body;
    }
    return std::thread(std::move(body));
  };
  {
    scheduled_thread_pool pool(o);
    auto f = pool.submit([] { return 1; });
    BOOST_REQUIRE(ready_within(f));
    pool.join();
  }
  std::lock_guard lock(m);
  kept();  // the pool is gone; the body's second call must not run a worker
  BOOST_TEST(starts.load() == 1);
  kept = nullptr;
}

BOOST_AUTO_TEST_SUITE_END()

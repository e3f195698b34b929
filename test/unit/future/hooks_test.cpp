// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The pool's hooks (before/after_execute, error_handler, task_decorator,
// thread start/stop, terminated), thread names, and stats().
#include "future_test_util.hpp"

#include <chronopool/detail/platform/thread_naming.hpp>
#include <chronopool/detail/platform/timer_slack.hpp>
#include <chronopool/errors.hpp>
#include <chronopool/pool_stats.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;
using chronopool::task_id;
using chronopool::task_view;

namespace {

/// What a hook saw of a task.
struct seen_view {
  task_id id;
  std::uint64_t sequence = 0;
  bool periodic = false;
  steady::duration period{};
  chronopool::schedule_kind kind = chronopool::schedule_kind::one_shot;
  bool error = false;
  std::string what;

  static seen_view of(const task_view& v) {
    return seen_view{v.id(), v.sequence(), v.is_periodic(), v.period(), v.kind(), false, {}};
  }
};

std::string message_of(std::exception_ptr e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "<non-standard>";
  }
}

std::vector<seen_view> for_task(const std::vector<seen_view>& all, task_id id) {
  std::vector<seen_view> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const seen_view& s) { return s.id == id; });
  return out;
}

std::string current_thread_name() { return chronopool::detail::platform::current_thread_name(); }

/// @p name as the system keeps it: cut to its limit (empty where threads
/// have no names, detail/platform/thread_naming.hpp).
std::string as_kept(const std::string& name) {
  return name.substr(0, chronopool::detail::platform::max_thread_name_length());
}

void swallow_errors(scheduled_thread_pool_options& o) {
  o.error_handler = [](std::exception_ptr, const task_view*) {};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(hooks)

BOOST_AUTO_TEST_CASE(before_and_after_execute_once_per_run) {
  recorder<seen_view> before;
  recorder<seen_view> after;
  recorder<std::string> events;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.before_execute = [&](const task_view& v) {
    before.push(seen_view::of(v));
    if (!v.is_periodic()) events.push("before");
  };
  o.after_execute = [&](const task_view& v, std::exception_ptr e) {
    auto s = seen_view::of(v);
    s.error = static_cast<bool>(e);
    after.push(s);
    if (!v.is_periodic()) events.push("after");
  };
  std::atomic<int> periodic_runs{0};
  scheduled_thread_pool pool(o);
  auto f = pool.submit([&] {
    events.push("run");
    return 1;
  });
  auto g = pool.schedule_with_fixed_delay(0ms, 2ms, [&] { periodic_runs.fetch_add(1); });
  require_ready(f);
  BOOST_REQUIRE(eventually([&] { return periodic_runs.load() >= 3; }));
  BOOST_CHECK(g.cancel());
  pool.join();

  const auto b = before.snapshot();
  const auto a = after.snapshot();
  const auto fb = for_task(b, f.id());
  const auto fa = for_task(a, f.id());
  BOOST_REQUIRE_EQUAL(fb.size(), 1U);
  BOOST_REQUIRE_EQUAL(fa.size(), 1U);
  BOOST_CHECK(!fb[0].periodic);
  BOOST_CHECK(fb[0].period == steady::duration::zero());
  BOOST_CHECK(fb[0].kind == chronopool::schedule_kind::one_shot);
  BOOST_CHECK(!fa[0].error);
  BOOST_CHECK(events.snapshot() == (std::vector<std::string>{"before", "run", "after"}));

  const auto gb = for_task(b, g.id());
  const auto ga = for_task(a, g.id());
  BOOST_CHECK_EQUAL(gb.size(), static_cast<std::size_t>(periodic_runs.load()));
  BOOST_CHECK_EQUAL(ga.size(), static_cast<std::size_t>(periodic_runs.load()));
  for (const auto& s : gb) {
    BOOST_CHECK(s.periodic);
    BOOST_CHECK(s.period == steady::duration(2ms));
    BOOST_CHECK(s.kind == chronopool::schedule_kind::fixed_delay);
    BOOST_CHECK_GT(s.sequence, fb[0].sequence);  // submitted after f
  }
  for (const auto& s : ga) BOOST_CHECK(!s.error);
  BOOST_CHECK_EQUAL(b.size(), fb.size() + gb.size());  // no calls for anything else
}

BOOST_AUTO_TEST_CASE(after_execute_receives_the_error) {
  recorder<seen_view> after;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  swallow_errors(o);
  o.after_execute = [&](const task_view& v, std::exception_ptr e) {
    auto s = seen_view::of(v);
    s.error = static_cast<bool>(e);
    s.what = message_of(e);
    after.push(s);
  };
  scheduled_thread_pool pool(o);
  auto f = pool.submit([]() -> int { throw std::runtime_error("submitted boom"); });
  pool.execute([] { throw std::runtime_error("executed boom"); });
  auto ok = pool.submit([] {});
  require_ready(f);
  require_ready(ok);
  BOOST_REQUIRE(eventually([&] { return after.size() == 3; }));
  const auto a = after.snapshot();
  const auto fa = for_task(a, f.id());
  BOOST_REQUIRE_EQUAL(fa.size(), 1U);
  BOOST_CHECK(fa[0].error);
  BOOST_CHECK_EQUAL(fa[0].what, "submitted boom");
  // FIFO on one thread: the execute()d task ran second.
  BOOST_CHECK(a[1].error);
  BOOST_CHECK_EQUAL(a[1].what, "executed boom");
  BOOST_CHECK(!for_task(a, ok.id()).at(0).error);
  BOOST_CHECK_THROW(f.get(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(error_handler_gets_execute_errors_not_submit_errors) {
  recorder<std::string> handled;
  recorder<std::string> after;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  std::atomic<int> with_view{0};
  o.error_handler = [&](std::exception_ptr e, const task_view* v) {
    if (v != nullptr && v->kind() == chronopool::schedule_kind::one_shot) with_view.fetch_add(1);
    handled.push(message_of(e));
  };
  o.after_execute = [&](const task_view&, std::exception_ptr e) { after.push(message_of(e)); };
  scheduled_thread_pool pool(o);
  pool.execute([] { throw std::runtime_error("from execute"); });
  auto f = pool.submit([] { throw std::runtime_error("from submit"); });
  auto s = pool.schedule(1ms, []() -> int { throw std::runtime_error("from schedule"); });
  require_ready(f);
  require_ready(s);
  BOOST_REQUIRE(eventually([&] { return after.size() == 3; }));
  BOOST_CHECK(handled.snapshot() == (std::vector<std::string>{"from execute"}));
  BOOST_CHECK_EQUAL(with_view.load(), 1);  // an execute()d task is a queued task: its view is given
  BOOST_CHECK(after.snapshot() == (std::vector<std::string>{"from execute", "from submit", "from schedule"}));
  BOOST_CHECK_THROW(f.get(), std::runtime_error);
  BOOST_CHECK_THROW((void)s.get(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(throwing_after_execute_goes_to_error_handler) {
  recorder<std::string> handled;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.error_handler = [&](std::exception_ptr e, const task_view*) { handled.push(message_of(e)); };
  o.after_execute = [](const task_view&, std::exception_ptr) { throw std::runtime_error("after hook"); };
  scheduled_thread_pool pool(o);
  auto f = pool.submit([] { return 4; });
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), 4);  // the task itself succeeded
  BOOST_CHECK(eventually([&] { return handled.size() == 1; }));
  BOOST_CHECK(handled.snapshot() == (std::vector<std::string>{"after hook"}));
}

BOOST_AUTO_TEST_CASE(throwing_before_execute_fails_the_run) {
  std::atomic<bool> armed{false};
  std::atomic<int> invoked{0};
  recorder<std::string> handled;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.error_handler = [&](std::exception_ptr e, const task_view*) { handled.push(message_of(e)); };
  o.before_execute = [&](const task_view&) {
    if (armed.load()) throw std::logic_error("before hook");
  };
  scheduled_thread_pool pool(o);
  armed = true;
  auto f = pool.submit([&] {
    invoked.fetch_add(1);
    return 1;
  });
  require_ready(f);
  try {
    (void)f.get();
    BOOST_ERROR("get() did not throw");
  } catch (const std::logic_error& e) {
    BOOST_CHECK_EQUAL(std::string(e.what()), "before hook");
  }
  BOOST_CHECK(!f.cancelled());
  BOOST_CHECK(handled.snapshot().empty());  // a submitted task's error is the future's
  // execute(): the same error goes to the error handler instead.
  pool.execute([&] { invoked.fetch_add(1); });
  BOOST_CHECK(eventually([&] { return handled.size() == 1; }));
  armed = false;
  auto ok = pool.submit([&] {
    invoked.fetch_add(1);
    return 2;
  });
  require_ready(ok);
  BOOST_CHECK_EQUAL(ok.get(), 2);
  BOOST_CHECK_EQUAL(invoked.load(), 1);  // only the last one ran
  BOOST_CHECK(handled.snapshot() == (std::vector<std::string>{"before hook"}));
}

BOOST_AUTO_TEST_CASE(throwing_before_execute_stops_a_periodic_task) {
  std::atomic<int> calls{0};
  std::atomic<int> invoked{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.before_execute = [&](const task_view&) {
    if (calls.fetch_add(1) + 1 == 3) throw std::logic_error("third");
  };
  scheduled_thread_pool pool(o);
  auto f = pool.schedule_at_fixed_rate(0ms, 2ms, [&] { invoked.fetch_add(1); });
  require_ready(f);
  BOOST_CHECK_THROW(f.get(), std::logic_error);
  BOOST_CHECK_EQUAL(invoked.load(), 2);
  std::this_thread::sleep_for(20ms);
  BOOST_CHECK_EQUAL(calls.load(), 3);
}

BOOST_AUTO_TEST_CASE(task_decorator_wraps_each_run) {
  recorder<std::string> events;
  recorder<task_id> decorated;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.task_decorator = [&](const task_view& v, chronopool::task_body body) {
    decorated.push(v.id());
    events.push("before");
    body();
    events.push("after");
  };
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(o);
  auto f = pool.submit([&] {
    events.push("body");
    return 10;
  });
  require_ready(f);
  BOOST_CHECK_EQUAL(f.get(), 10);
  BOOST_REQUIRE(eventually([&] { return events.size() == 3; }));
  BOOST_CHECK(events.snapshot() == (std::vector<std::string>{"before", "body", "after"}));
  BOOST_CHECK(decorated.snapshot() == std::vector<task_id>{f.id()});

  auto g = pool.schedule_with_fixed_delay(0ms, 1ms, [&] {
    events.push("body");
    runs.fetch_add(1);
  });
  BOOST_REQUIRE(eventually([&] { return runs.load() >= 3; }));
  BOOST_CHECK(g.cancel());
  pool.join();
  const auto e = events.snapshot();
  BOOST_REQUIRE_EQUAL(e.size(), 3U * static_cast<std::size_t>(runs.load() + 1));
  for (std::size_t i = 0; i < e.size(); i += 3) {
    BOOST_CHECK_EQUAL(e[i], "before");
    BOOST_CHECK_EQUAL(e[i + 1], "body");
    BOOST_CHECK_EQUAL(e[i + 2], "after");
  }
}

BOOST_AUTO_TEST_CASE(task_decorator_not_calling_body_fails_the_run) {
  std::atomic<int> invoked{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.task_decorator = [](const task_view&, chronopool::task_body) {};
  scheduled_thread_pool pool(o);
  auto f = pool.submit([&] {
    invoked.fetch_add(1);
    return 1;
  });
  require_ready(f);
  BOOST_CHECK(!f.cancelled());
  bool threw = false;
  try {
    (void)f.get();
  } catch (const task_cancelled&) {
    BOOST_ERROR("a skipped body is an error, not a cancellation");
  } catch (const std::exception& e) {
    threw = true;
    BOOST_TEST_MESSAGE("skipped body: " << e.what());
  }
  BOOST_CHECK(threw);
  BOOST_CHECK_EQUAL(invoked.load(), 0);
}

BOOST_AUTO_TEST_CASE(task_decorator_edge_cases) {
  // A decorator that calls body twice runs the task once; one that swallows
  // the body's exception does not hide it; one that throws on its own fails
  // the run.
  std::atomic<int> mode{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.task_decorator = [&](const task_view&, chronopool::task_body body) {
    switch (mode.load()) {
      case 0:
        body();
        body();
        break;
      case 1:
        try {
          body();
        } catch (...) {
        }
        break;
      default: throw std::invalid_argument("decorator");
    }
  };
  std::atomic<int> invoked{0};
  scheduled_thread_pool pool(o);
  auto twice = pool.submit([&] { return invoked.fetch_add(1) + 1; });
  require_ready(twice);
  BOOST_CHECK_EQUAL(twice.get(), 1);
  BOOST_CHECK_EQUAL(invoked.load(), 1);

  mode = 1;
  auto swallowed = pool.submit([]() -> int { throw std::out_of_range("body"); });
  require_ready(swallowed);
  BOOST_CHECK_THROW((void)swallowed.get(), std::out_of_range);

  mode = 2;
  auto failing = pool.submit([&] { return invoked.fetch_add(1); });
  require_ready(failing);
  BOOST_CHECK_THROW((void)failing.get(), std::invalid_argument);
  BOOST_CHECK_EQUAL(invoked.load(), 1);
}

BOOST_AUTO_TEST_CASE(thread_start_and_stop_hooks) {
  recorder<std::size_t> started;
  recorder<std::size_t> stopped;
  recorder<std::thread::id> start_threads;
  scheduled_thread_pool_options o;
  o.core_pool_size = 3;
  o.on_thread_start = [&](std::size_t i) {
    started.push(i);
    start_threads.push(std::this_thread::get_id());
  };
  o.on_thread_stop = [&](std::size_t i) { stopped.push(i); };
  {
    scheduled_thread_pool pool(o);
    BOOST_CHECK_EQUAL(pool.prestart_core_threads(), 3U);
    BOOST_CHECK(eventually([&] { return started.size() == 3; }));
    BOOST_CHECK_EQUAL(pool.pool_size(), 3U);
    BOOST_CHECK(stopped.size() == 0);
    pool.join();
  }
  auto s = started.snapshot();
  auto t = stopped.snapshot();
  BOOST_REQUIRE_EQUAL(s.size(), 3U);
  BOOST_REQUIRE_EQUAL(t.size(), 3U);
  std::sort(s.begin(), s.end());
  std::sort(t.begin(), t.end());
  BOOST_CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());  // distinct indices
  BOOST_CHECK(s == t);                                             // each thread stopped once
  const auto th = start_threads.snapshot();
  const std::set<std::thread::id> distinct(th.begin(), th.end());
  BOOST_CHECK_EQUAL(distinct.size(), 3U);
  BOOST_CHECK(distinct.count(std::this_thread::get_id()) == 0);  // called on the pool threads
}

BOOST_AUTO_TEST_CASE(thread_names_use_the_prefix) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  o.thread_name_prefix = "cpfut";
  scheduled_thread_pool pool(o);
  auto a = pool.submit([] { return current_thread_name(); });
  auto b = pool.schedule(1ms, [] { return current_thread_name(); });
  require_ready(a);
  require_ready(b);
  BOOST_TEST_MESSAGE("thread names: " << a.get() << ", " << b.get());
  BOOST_CHECK_EQUAL(a.get().rfind(as_kept("cpfut-"), 0), 0U);
  BOOST_CHECK_EQUAL(b.get().rfind(as_kept("cpfut-"), 0), 0U);

  // Linux keeps 15 bytes of a name.
  scheduled_thread_pool_options lo;
  lo.core_pool_size = 1;
  lo.thread_name_prefix = "a-rather-long-thread-prefix";
  scheduled_thread_pool long_pool(lo);
  auto c = long_pool.submit([] { return current_thread_name(); });
  require_ready(c);
  BOOST_CHECK_EQUAL(c.get(), as_kept("a-rather-long-thread-prefix"));
  if (chronopool::detail::platform::max_thread_name_length() != 0) BOOST_CHECK_EQUAL(c.get().size(), 15U);
}

BOOST_AUTO_TEST_CASE(workers_sleep_with_the_minimum_timer_slack) {
  // A worker's timed sleep ends at the head deadline; the default 50 us slack
  // would be added to every task's lateness.
  scheduled_thread_pool pool(1);
  // Where the slack cannot be read (detail/platform/timer_slack.hpp), -1.
  const bool readable = chronopool::detail::platform::current_timer_slack_ns() >= 0;
  auto slack = pool.schedule(1ms, [] { return chronopool::detail::platform::current_timer_slack_ns(); });
  require_ready(slack);
  BOOST_TEST(slack.get() == (readable ? 1 : -1));
}

BOOST_AUTO_TEST_CASE(terminated_hook_runs_once_after_join) {
  std::atomic<int> terminated{0};
  std::atomic<int> work_done{0};
  std::atomic<bool> work_done_at_termination{false};
  {
    scheduled_thread_pool_options o;
    o.core_pool_size = 2;
    o.terminated = [&] {
      terminated.fetch_add(1);
      work_done_at_termination = work_done.load() == 3;
    };
    scheduled_thread_pool pool(o);
    for (int i = 0; i < 3; ++i) {
      (void)pool.schedule(std::chrono::milliseconds(5 * i), [&] { work_done.fetch_add(1); });
    }
    BOOST_CHECK_EQUAL(terminated.load(), 0);
    pool.join();
    BOOST_CHECK_EQUAL(terminated.load(), 1);
    BOOST_CHECK(work_done_at_termination.load());
    BOOST_CHECK(pool.is_terminated());
    BOOST_CHECK(pool.state() == chronopool::run_state::terminated);
    pool.join();  // idempotent
    BOOST_CHECK(pool.wait_for_termination(0ms));
  }
  BOOST_CHECK_EQUAL(terminated.load(), 1);  // not again from the destructor
}

BOOST_AUTO_TEST_CASE(stats_track_work) {
  gate hold;
  gate started;
  scheduled_thread_pool_options o;
  o.core_pool_size = 2;
  scheduled_thread_pool pool(o);
  gate_opener opener(hold);
  BOOST_CHECK_EQUAL(pool.completed_task_count(), 0U);
  BOOST_CHECK_EQUAL(pool.stats().lateness.count, 0U);

  constexpr int n = 10;
  std::vector<scheduled_future<int>> fs;
  for (int i = 0; i < n; ++i) fs.push_back(pool.submit([i] { return i; }));
  for (auto& f : fs) require_ready(f);
  BOOST_REQUIRE(eventually([&] { return pool.completed_task_count() == n && pool.active_count() == 0; }));
  auto s = pool.stats();
  BOOST_CHECK(s.state == chronopool::run_state::running);
  BOOST_CHECK_EQUAL(s.completed_task_count, static_cast<std::uint64_t>(n));
  BOOST_CHECK_EQUAL(s.task_count, static_cast<std::uint64_t>(n));
  BOOST_CHECK_EQUAL(s.queued_count, 0U);
  BOOST_CHECK_EQUAL(s.active_count, 0U);
  BOOST_CHECK_EQUAL(s.core_pool_size, 2U);
  BOOST_CHECK_GE(s.largest_pool_size, 1U);
  BOOST_CHECK_LE(s.largest_pool_size, 2U);
  BOOST_CHECK_GE(s.largest_pool_size, s.pool_size);
  BOOST_CHECK_EQUAL(s.lateness.count, static_cast<std::uint64_t>(n));
  BOOST_CHECK_GE(s.lateness.window, 1U);
  BOOST_CHECK_LE(s.lateness.window, static_cast<std::size_t>(n));
  BOOST_CHECK(s.lateness.p50 >= 0ns);
  BOOST_CHECK(s.lateness.p50 <= s.lateness.p99);
  BOOST_CHECK(s.lateness.p99 <= s.lateness.max);

  // One task running, one queued.
  auto running = pool.submit([&] {
    started.open();
    return hold.wait();
  });
  auto queued = pool.schedule(1h, [] {});
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(eventually([&] { return pool.active_count() == 1; }));
  s = pool.stats();
  BOOST_CHECK_EQUAL(s.active_count, 1U);
  BOOST_CHECK_EQUAL(s.queued_count, 1U);
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  BOOST_CHECK_EQUAL(s.completed_task_count, static_cast<std::uint64_t>(n));
  BOOST_CHECK_EQUAL(s.task_count, static_cast<std::uint64_t>(n + 2));
  BOOST_CHECK_EQUAL(pool.task_count(), static_cast<std::uint64_t>(n + 2));
  const std::string line = fmt::format("{}", s);
  BOOST_TEST_MESSAGE("stats: " << line);
  BOOST_CHECK(line.find("running") != std::string::npos);
  BOOST_CHECK(line.find("queued=1") != std::string::npos);
  BOOST_CHECK_EQUAL(line, chronopool::to_string(s));

  hold.open();
  require_ready(running);
  BOOST_CHECK(queued.cancel());
  BOOST_REQUIRE(eventually([&] { return pool.completed_task_count() == n + 1 && pool.active_count() == 0; }));
  BOOST_CHECK_EQUAL(pool.task_count(), static_cast<std::uint64_t>(n + 1));
  BOOST_CHECK_EQUAL(pool.stats().lateness.count, static_cast<std::uint64_t>(n + 1));

  // Each periodic run counts as one completed task.
  std::atomic<int> runs{0};
  auto p = pool.schedule_with_fixed_delay(0ms, 1ms, [&] { runs.fetch_add(1); });
  BOOST_REQUIRE(eventually([&] { return runs.load() >= 3; }));
  BOOST_CHECK(p.cancel());
  pool.join();
  BOOST_CHECK_EQUAL(pool.completed_task_count(), static_cast<std::uint64_t>(n + 1 + runs.load()));
  const auto end = pool.stats();
  BOOST_CHECK_EQUAL(end.lateness.count, static_cast<std::uint64_t>(n + 1 + runs.load()));
  BOOST_CHECK(end.lateness.p50 <= end.lateness.p99);
  BOOST_CHECK(end.lateness.p99 <= end.lateness.max);
  BOOST_CHECK(fmt::format("{}", end).find("terminated") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(stats_format_line) {
  scheduled_thread_pool pool(1);
  const std::string line = fmt::format("{}", pool.stats());
  BOOST_TEST_MESSAGE("stats: " << line);
  BOOST_CHECK(line.find("running") != std::string::npos);
  BOOST_CHECK(line.find("queued=0") != std::string::npos);
  BOOST_CHECK_EQUAL(line.find('\n'), std::string::npos);  // one line
}

BOOST_AUTO_TEST_CASE(worker_survives_task_exceptions) {
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  swallow_errors(o);
  scheduled_thread_pool pool(o);
  auto first = pool.submit([] { return std::this_thread::get_id(); });
  require_ready(first);
  BOOST_CHECK_EQUAL(pool.pool_size(), 1U);
  for (int i = 0; i < 5; ++i) {
    pool.execute([] { throw std::runtime_error("execute"); });
    auto f = pool.submit([] { throw 42; });  // not even a std::exception
    require_ready(f);
    BOOST_CHECK_THROW(f.get(), int);
  }
  auto later = pool.submit([] { return std::this_thread::get_id(); });
  require_ready(later);
  BOOST_CHECK(later.get() == first.get());  // the same worker kept going
  BOOST_CHECK_EQUAL(pool.pool_size(), 1U);
  BOOST_CHECK_EQUAL(pool.largest_pool_size(), 1U);
}

BOOST_AUTO_TEST_SUITE_END()

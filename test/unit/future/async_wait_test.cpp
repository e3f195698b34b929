// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_future::async_wait: every completion token, completion on the
// handler's executor and never inside the initiating call, the task's
// outcome as an exception_ptr, and per-operation cancellation of the wait.
#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

using namespace chronopool_test;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;

namespace {

/// What a callback received, and where.
template <class T>
struct outcome {
  int calls = 0;
  std::exception_ptr error;
  T value{};
  std::thread::id thread;
};

bool is_aborted(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const sys_ns::system_error& se) {
    return se.code() == asio::error::operation_aborted;
  } catch (...) {
    return false;
  }
}

template <class E>
bool holds(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
}

/// Counts what an allocator handed out and took back.
struct allocation_counts {
  std::atomic<int> allocated{0};
  std::atomic<int> freed{0};
};

template <class T>
struct counting_allocator {
  using value_type = T;
  allocation_counts* counts;
  explicit counting_allocator(allocation_counts* c) noexcept : counts(c) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : counts(o.counts) {}
  T* allocate(std::size_t n) {
    counts->allocated.fetch_add(1);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    counts->freed.fetch_add(1);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept {
    return counts == o.counts;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(async_wait)

BOOST_AUTO_TEST_CASE(a_callback_receives_the_value_on_its_executor) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  gate g;
  gate_opener opener(g);
  auto f = pool.submit([&] {
    g.wait();
    return 42;
  });
  outcome<int> got;
  f.async_wait(asio::bind_executor(io, [&](std::exception_ptr e, int v) {
    ++got.calls;
    got.error = e;
    got.value = v;
    got.thread = std::this_thread::get_id();
  }));
  g.open();
  // The pending wait holds work on io: run() returns once the handler ran.
  io.run_for(wait_limit);
  BOOST_TEST(got.calls == 1);
  BOOST_TEST(!got.error);
  BOOST_TEST(got.value == 42);
  BOOST_TEST((got.thread == std::this_thread::get_id()));  // on io's thread, not the pool's
}

BOOST_AUTO_TEST_CASE(a_wait_on_a_done_task_completes_through_the_executor_not_inside_the_call) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto f = pool.submit([] { return std::string("done"); });
  require_ready(f);
  outcome<std::string> got;
  f.async_wait(asio::bind_executor(io, [&](std::exception_ptr e, std::string v) {
    ++got.calls;
    got.error = e;
    got.value = std::move(v);
  }));
  BOOST_TEST(got.calls == 0);  // not inline
  io.run_for(wait_limit);
  BOOST_TEST(got.calls == 1);
  BOOST_TEST(!got.error);
  BOOST_TEST(got.value == "done");
  BOOST_TEST(f.get() == "done");  // a copyable value is copied, not taken
}

BOOST_AUTO_TEST_CASE(a_handler_without_an_executor_runs_on_another_thread_not_inline) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return 5; });
  require_ready(f);
  std::promise<std::thread::id> where;
  f.async_wait([&](std::exception_ptr, int) { where.set_value(std::this_thread::get_id()); });
  auto w = where.get_future();
  BOOST_REQUIRE(w.wait_for(wait_limit) == std::future_status::ready);
  BOOST_TEST((w.get() != std::this_thread::get_id()));
}

BOOST_AUTO_TEST_CASE(the_tasks_exception_and_cancellation_arrive_as_exception_ptrs) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto failing = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  auto far = pool.schedule(1h, [] { return 1; });
  outcome<int> failed;
  outcome<int> cancelled;
  failing.async_wait(asio::bind_executor(io, [&](std::exception_ptr e, int) {
    ++failed.calls;
    failed.error = e;
  }));
  far.async_wait(asio::bind_executor(io, [&](std::exception_ptr e, int) {
    ++cancelled.calls;
    cancelled.error = e;
  }));
  BOOST_REQUIRE(far.cancel());
  io.run_for(wait_limit);
  BOOST_TEST(failed.calls == 1);
  BOOST_TEST(holds<std::runtime_error>(failed.error));
  BOOST_TEST(cancelled.calls == 1);
  BOOST_TEST(holds<chronopool::task_cancelled>(cancelled.error));
}

BOOST_AUTO_TEST_CASE(use_future_and_deferred_work) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return 7; });
  std::future<int> r = f.async_wait(asio::use_future);
  BOOST_REQUIRE(r.wait_for(wait_limit) == std::future_status::ready);
  BOOST_TEST(r.get() == 7);

  auto failing = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  std::future<int> rf = failing.async_wait(asio::use_future);
  BOOST_REQUIRE(rf.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK_THROW(rf.get(), std::runtime_error);

  asio::io_context io;
  auto op = f.async_wait(asio_compat::deferred);  // nothing started yet
  int value = 0;
  std::move(op)(asio::bind_executor(io, [&](std::exception_ptr, int v) { value = v; }));
  io.run_for(wait_limit);
  BOOST_TEST(value == 7);
}

BOOST_AUTO_TEST_CASE(a_coroutine_co_awaits_the_value_or_the_exception) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  auto ok = pool.schedule(5ms, [] { return std::vector<int>(3, 9); });
  auto failing = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  auto periodic = pool.schedule_at_fixed_rate(0ms, 1ms, [] {});
  std::vector<int> value;
  bool rethrown = false;
  bool periodic_cancelled = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        value = co_await ok.async_wait(asio::use_awaitable);
        try {
          (void)co_await failing.async_wait(asio::use_awaitable);
        } catch (const std::runtime_error&) {
          rethrown = true;
        }
        periodic.cancel();
        try {
          co_await periodic.async_wait(asio::use_awaitable);
        } catch (const chronopool::task_cancelled&) {
          periodic_cancelled = true;
        }
      },
      asio::detached);
  io.run_for(wait_limit);
  BOOST_TEST(value == std::vector<int>(3, 9));
  BOOST_TEST(rethrown);
  BOOST_TEST(periodic_cancelled);
}

BOOST_AUTO_TEST_CASE(a_coroutine_on_the_pool_itself_awaits_another_task_without_blocking_a_thread) {
  scheduled_thread_pool pool(1);  // one thread: a blocking get() inside would deadlock
  auto result = asio::co_spawn(
      pool.get_executor(),
      [&]() -> asio::awaitable<int> {
        auto inner = pool.submit([] { return 20; });
        const int a = co_await inner.async_wait(asio::use_awaitable);
        auto later = pool.schedule(2ms, [] { return 22; });
        const int b = co_await later.async_wait(asio::use_awaitable);
        co_return a + b;
      },
      asio::use_future);
  BOOST_REQUIRE(result.wait_for(wait_limit) == std::future_status::ready);
  BOOST_TEST(result.get() == 42);
}

BOOST_AUTO_TEST_CASE(awaiting_with_a_timeout_through_awaitable_operators_leaves_the_task_alone) {
  using namespace asio::experimental::awaitable_operators;
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto far = pool.schedule(1h, [] { return 1; });
  auto soon = pool.submit([] { return 2; });
  int far_winner = -1;
  int soon_winner = -1;
  int soon_value = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io, 20ms);
        auto r = co_await (far.async_wait(asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
        far_winner = static_cast<int>(r.index());
        asio::steady_timer long_timer(io, 1h);
        auto r2 = co_await (soon.async_wait(asio::use_awaitable) || long_timer.async_wait(asio::use_awaitable));
        soon_winner = static_cast<int>(r2.index());
        if (r2.index() == 0) soon_value = std::get<0>(r2);
      },
      asio::detached);
  io.run_for(wait_limit);
  BOOST_TEST(far_winner == 1);  // the timer
  BOOST_TEST(!far.done());  // only the wait was cancelled
  BOOST_TEST(!far.cancelled());
  BOOST_TEST(soon_winner == 0);
  BOOST_TEST(soon_value == 2);
  BOOST_TEST(far.cancel());
}

BOOST_AUTO_TEST_CASE(every_cancellation_type_aborts_the_wait_exactly_once) {
  scheduled_thread_pool pool(1);
  for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                    asio::cancellation_type::total}) {
    asio::io_context io;
    asio::cancellation_signal signal;
    auto far = pool.schedule(1h, [] { return 1; });
    outcome<int> got;
    far.async_wait(asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](std::exception_ptr e, int) {
                                                  ++got.calls;
                                                  got.error = e;
                                                })));
    signal.emit(type);
    signal.emit(type);  // after the wait left: finds nothing
    io.run_for(wait_limit);
    BOOST_TEST(got.calls == 1);
    BOOST_TEST(is_aborted(got.error));
    BOOST_TEST(!far.done());
    // The task completing later does not complete the aborted wait again.
    BOOST_TEST(far.cancel());
    io.restart();
    io.poll();
    BOOST_TEST(got.calls == 1);
  }
}

BOOST_AUTO_TEST_CASE(a_signal_emitted_after_completion_changes_nothing) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  asio::cancellation_signal signal;
  auto f = pool.submit([] { return 3; });
  outcome<int> got;
  f.async_wait(asio::bind_cancellation_slot(signal.slot(), asio::bind_executor(io, [&](std::exception_ptr e, int v) {
                                              ++got.calls;
                                              got.error = e;
                                              got.value = v;
                                            })));
  io.run_for(wait_limit);
  signal.emit(asio::cancellation_type::terminal);
  io.restart();
  io.poll();
  BOOST_TEST(got.calls == 1);
  BOOST_TEST(!got.error);
  BOOST_TEST(got.value == 3);
}

BOOST_AUTO_TEST_CASE(a_move_only_result_is_moved_to_the_first_waiter_only) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto f = pool.submit([] { return std::make_unique<int>(11); });
  std::unique_ptr<int> first;
  std::exception_ptr second;
  int calls = 0;
  f.async_wait(asio::bind_executor(io, [&](std::exception_ptr, std::unique_ptr<int> p) {
    ++calls;
    first = std::move(p);
  }));
  io.run_for(wait_limit);
  f.async_wait(asio::bind_executor(io, [&](std::exception_ptr e, std::unique_ptr<int> p) {
    ++calls;
    second = e;
    BOOST_CHECK(!p);
  }));
  io.restart();
  io.run_for(wait_limit);
  BOOST_TEST(calls == 2);
  BOOST_REQUIRE(first);
  BOOST_TEST(*first == 11);
  BOOST_TEST(holds<std::future_error>(second));
  BOOST_CHECK_THROW(f.get(), std::future_error);
}

BOOST_AUTO_TEST_CASE(a_copyable_but_not_assignable_result_is_handed_over) {
  struct fixed {
    const int v = 0;  // copyable, not assignable
  };
  static_assert(!std::is_copy_assignable_v<fixed>);
  scheduled_thread_pool pool(1);
  asio::io_context io;
  auto f = pool.submit([] { return fixed{5}; });
  int got = 0;
  f.async_wait(asio::bind_executor(io, [&](std::exception_ptr, fixed v) { got = v.v; }));
  io.run_for(wait_limit);
  BOOST_TEST(got == 5);
}

BOOST_AUTO_TEST_CASE(a_pending_wait_keeps_its_executor_busy_and_its_task_alive) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  gate g;
  gate_opener opener(g);
  int value = 0;
  {
    auto f = pool.submit([&] {
      g.wait();
      return 8;
    });
    f.async_wait(asio::bind_executor(io, [&](std::exception_ptr, int v) { value = v; }));
  }  // the last handle is gone: the wait holds the task
  auto ran = std::async(std::launch::async, [&] { io.run(); });
  // Tracked work: run() must not return while the wait is pending (a lower bound).
  BOOST_TEST((ran.wait_for(30ms) == std::future_status::timeout));
  g.open();
  BOOST_REQUIRE(ran.wait_for(wait_limit) == std::future_status::ready);
  BOOST_TEST(value == 8);
}

BOOST_AUTO_TEST_CASE(many_waits_on_one_task_all_complete) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  gate g;
  gate_opener opener(g);
  auto f = pool.submit([&] {
    g.wait();
    return 4;
  });
  int sum = 0;
  for (int i = 0; i < 20; ++i) {
    auto copy = f;
    copy.async_wait(asio::bind_executor(io, [&](std::exception_ptr, int v) { sum += v; }));
  }
  g.open();
  io.run_for(wait_limit);
  BOOST_TEST(sum == 80);
}

BOOST_AUTO_TEST_CASE(the_wait_uses_the_handlers_allocator_and_frees_before_the_handler_runs) {
  scheduled_thread_pool pool(1);
  asio::io_context io;
  allocation_counts counts;
  auto f = pool.submit([] { return 1; });
  int freed_when_called = -1;
  f.async_wait(asio::bind_allocator(counting_allocator<int>(&counts),
                                    asio::bind_executor(io, [&](std::exception_ptr, int) {
                                      freed_when_called = counts.freed.load();
                                    })));
  io.run_for(wait_limit);
  BOOST_TEST(counts.allocated.load() >= 1);
  BOOST_TEST(freed_when_called >= 1);
  BOOST_TEST(counts.freed.load() == counts.allocated.load());
}

BOOST_AUTO_TEST_CASE(racing_completion_and_cancellation_complete_each_wait_once) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  constexpr int rounds = 200;
  std::atomic<int> calls{0};
  std::vector<asio::cancellation_signal> signals(rounds);
  std::vector<scheduled_future<int>> futures;
  for (int i = 0; i < rounds; ++i) {
    futures.push_back(pool.submit([i] { return i; }));
    futures.back().async_wait(asio::bind_cancellation_slot(
        signals[static_cast<std::size_t>(i)].slot(),
        asio::bind_executor(io, [&](std::exception_ptr, int) { calls.fetch_add(1); })));
  }
  for (auto& s : signals) s.emit(asio::cancellation_type::terminal);
  io.run_for(wait_limit);
  BOOST_TEST(calls.load() == rounds);
}

BOOST_AUTO_TEST_SUITE_END()

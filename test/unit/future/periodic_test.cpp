// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic tasks: fixed rate, fixed delay, no overlap, ending a schedule from
// a run, errors, cancellation, and a period too long to come round.
#include "periodic_test_support.hpp"

BOOST_AUTO_TEST_SUITE(periodic)

BOOST_AUTO_TEST_CASE(fixed_rate_sequence) {
  constexpr auto period = 20ms;
  run_log log;
  deadline_pool p(2);
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] {
    log.starts.push(steady::now());
    log.ends.push(steady::now());
  });
  const auto t_after = steady::now();
  BOOST_CHECK(f.is_periodic());
  std::this_thread::sleep_for(300ms);
  // Running normally, a periodic future is never done.
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.wait_for(1ms) == std::future_status::timeout);
  BOOST_CHECK(f.cancel());
  const auto t_cancel = steady::now();
  BOOST_CHECK(f.done());
  BOOST_CHECK(f.cancelled());
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  p.pool.join();

  const auto starts = log.starts.snapshot();
  const auto ends = log.ends.snapshot();
  const auto deadlines = p.deadlines.snapshot();
  BOOST_TEST_MESSAGE("fixed rate: " << starts.size() << " runs in " << ms(t_cancel - t_before) << " ms");
  BOOST_REQUIRE_GE(starts.size(), 5U);  // ideal: 15
  BOOST_REQUIRE_EQUAL(ends.size(), starts.size());
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  // A run never starts before its deadline, so at most one run per elapsed period.
  BOOST_CHECK_LE(starts.size(), static_cast<std::size_t>((t_cancel - t_before) / period) + 1);
  // The first ideal deadline is the submission instant.
  BOOST_CHECK(deadlines[0] >= t_before);
  BOOST_CHECK(deadlines[0] <= t_after);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) {
      // The schedule is exact: deadline k = first + k × period (no drift).
      BOOST_CHECK(deadlines[k] == deadlines[0] + period * static_cast<int>(k));
      BOOST_CHECK(starts[k] >= deadlines[k]);
      BOOST_CHECK(starts[k] - t_before >= period * static_cast<int>(k));
      if (k > 0) BOOST_CHECK(starts[k] >= ends[k - 1]);  // monotonic, no overlap
    }
  }
}

BOOST_AUTO_TEST_CASE(fixed_delay_spacing) {
  constexpr auto delay = 10ms;
  run_log log;
  deadline_pool p(2);
  const auto t0 = steady::now();
  auto f = p.pool.schedule_with_fixed_delay(25ms, delay, [&] {
    log.starts.push(steady::now());
    std::this_thread::sleep_for(15ms);
    log.ends.push(steady::now());
  });
  BOOST_CHECK(f.is_periodic());
  BOOST_REQUIRE(eventually([&] { return log.ends.size() >= 5; }));
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto starts = log.starts.snapshot();
  const auto ends = log.ends.snapshot();
  const auto deadlines = p.deadlines.snapshot();
  BOOST_REQUIRE_GE(ends.size(), 5U);
  BOOST_REQUIRE_EQUAL(starts.size(), ends.size());
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  BOOST_CHECK(starts[0] - t0 >= 25ms);  // initial delay
  for (std::size_t k = 1; k < starts.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k << ": gap " << ms(starts[k] - ends[k - 1]) << " ms") {
      BOOST_CHECK(starts[k] >= ends[k - 1] + delay);
      BOOST_CHECK(deadlines[k] >= ends[k - 1] + delay);  // measured from the end of the run
      BOOST_CHECK(starts[k] >= deadlines[k]);
    }
  }
}

BOOST_AUTO_TEST_CASE(runs_never_overlap_with_many_threads) {
  // Each run takes far longer than the period, and four threads are idle:
  // still only one run at a time, for both kinds.
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<int> rate_runs{0};
  std::atomic<int> delay_runs{0};
  auto body = [&](std::atomic<int>& runs) {
    const int now_inside = inside.fetch_add(1) + 1;
    int seen = max_inside.load();
    while (now_inside > seen && !max_inside.compare_exchange_weak(seen, now_inside)) {
    }
    std::this_thread::sleep_for(12ms);
    runs.fetch_add(1);
    inside.fetch_sub(1);
  };
  std::atomic<int> rate_inside{0};
  std::atomic<int> rate_max{0};
  scheduled_thread_pool pool(4);
  BOOST_CHECK_EQUAL(pool.prestart_core_threads(), 4U);
  auto rate = pool.schedule_at_fixed_rate(0ms, 1ms, [&] {
    const int n = rate_inside.fetch_add(1) + 1;
    int seen = rate_max.load();
    while (n > seen && !rate_max.compare_exchange_weak(seen, n)) {
    }
    std::this_thread::sleep_for(12ms);
    rate_runs.fetch_add(1);
    rate_inside.fetch_sub(1);
  });
  auto fixed = pool.schedule_with_fixed_delay(0ms, 1ns, [&] { body(delay_runs); });
  BOOST_REQUIRE(eventually([&] { return rate_runs.load() >= 6 && delay_runs.load() >= 6; }));
  BOOST_CHECK(rate.cancel());
  BOOST_CHECK(fixed.cancel());
  pool.join();
  BOOST_CHECK_EQUAL(rate_max.load(), 1);
  BOOST_CHECK_EQUAL(max_inside.load(), 1);
}

BOOST_AUTO_TEST_CASE(a_run_that_returns_stop_ends_the_schedule_and_completes_the_future) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      scheduled_thread_pool pool(2);
      std::atomic<int> runs{0};
      auto body = [&] {
        return runs.fetch_add(1) + 1 == 3 ? chronopool::periodic_control::stop : chronopool::periodic_control::keep;
      };
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 1ms, body) : pool.schedule_with_fixed_delay(0ms, 1ms, body);
      require_ready(f);
      BOOST_CHECK_NO_THROW(f.get());  // completes normally
      BOOST_TEST(f.done());
      BOOST_TEST(!f.cancelled());
      BOOST_TEST(!f.cancel());  // already done
      std::this_thread::sleep_for(20ms);
      BOOST_TEST(runs.load() == 3);  // no run after the one that ended it
      pool.join();
      BOOST_TEST(pool.completed_task_count() == 3u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_one_shot_task_may_return_periodic_control_as_a_value) {
  scheduled_thread_pool pool(1);
  auto f = pool.submit([] { return chronopool::periodic_control::stop; });
  BOOST_TEST((f.get() == chronopool::periodic_control::stop));
  pool.join();
}

BOOST_AUTO_TEST_CASE(a_pool_task_refuses_a_periodic_error_handler) {
  scheduled_thread_pool pool(1);
  periodic_options o;
  o.error_handler = [](std::exception_ptr) {};
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, [] {}, o), std::invalid_argument);
  BOOST_TEST(pool.queued_count() == 0u);
  pool.join();
}

BOOST_AUTO_TEST_CASE(exception_stops_periodic_task) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      std::atomic<int> runs{0};
      std::atomic<int> handled{0};
      scheduled_thread_pool_options o;
      o.core_pool_size = 2;
      o.error_handler = [&](std::exception_ptr, const chronopool::task_view*) { handled.fetch_add(1); };
      scheduled_thread_pool pool(o);
      auto body = [&] {
        const int n = runs.fetch_add(1) + 1;
        if (n == 3) throw tick_error(n);
      };
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 5ms, body) : pool.schedule_with_fixed_delay(0ms, 5ms, body);
      BOOST_REQUIRE(f.wait_for(wait_limit) == std::future_status::ready);
      BOOST_CHECK(f.done());
      BOOST_CHECK(!f.cancelled());
      try {
        f.get();
        BOOST_ERROR("get() did not rethrow the run's exception");
      } catch (const tick_error& e) {
        BOOST_CHECK_EQUAL(e.run, 3);
      }
      std::this_thread::sleep_for(40ms);  // 8 more periods: no further run
      BOOST_CHECK_EQUAL(runs.load(), 3);
      BOOST_CHECK(!f.cancel());           // already done
      BOOST_CHECK_EQUAL(handled.load(), 0);  // the future reports it, not the handler
      BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
    }
  }
}

BOOST_AUTO_TEST_CASE(continue_after_error_keeps_running) {
  std::atomic<int> runs{0};
  recorder<int> handled;  // run numbers seen by the error handler
  recorder<chronopool::task_id> handled_ids;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.error_handler = [&](std::exception_ptr e, const chronopool::task_view* v) {
    handled_ids.push(v != nullptr ? v->id() : chronopool::task_id{});
    try {
      std::rethrow_exception(e);
    } catch (const tick_error& t) {
      handled.push(t.run);
    } catch (...) {
      handled.push(-1);
    }
  };
  scheduled_thread_pool pool(o);
  periodic_options po;
  po.continue_after_error = true;
  auto f = pool.schedule_at_fixed_rate(0ms, 3ms, [&] {
    const int n = runs.fetch_add(1) + 1;
    if (n % 2 == 1) throw tick_error(n);
  }, po);
  BOOST_REQUIRE(eventually([&] { return runs.load() >= 7 && handled.size() >= 3; }));
  BOOST_CHECK(!f.done());
  BOOST_CHECK(f.cancel());
  BOOST_CHECK_THROW(f.get(), task_cancelled);  // cancelled, not failed
  pool.join();
  const auto seen = handled.snapshot();
  BOOST_REQUIRE_GE(seen.size(), 3U);
  for (std::size_t i = 0; i < seen.size(); ++i) BOOST_CHECK_EQUAL(seen[i], static_cast<int>(2 * i + 1));
  for (const auto& id : handled_ids.snapshot()) BOOST_CHECK(id == f.id());
  BOOST_CHECK_EQUAL(seen.size(), static_cast<std::size_t>((runs.load() + 1) / 2));
}

BOOST_AUTO_TEST_CASE(cancel_stops_later_runs) {
  for (bool fixed_rate : {true, false}) {
    BOOST_TEST_CONTEXT("fixed_rate=" << fixed_rate) {
      std::atomic<int> runs{0};
      auto token = std::make_shared<int>(0);
      scheduled_thread_pool pool(2);
      auto body = [&runs, token] { runs.fetch_add(1); };
      // Moved in: the task must hold the only copy of the token.
      auto f = fixed_rate ? pool.schedule_at_fixed_rate(0ms, 2ms, std::move(body))
                          : pool.schedule_with_fixed_delay(0ms, 2ms, std::move(body));
      BOOST_CHECK_EQUAL(token.use_count(), 2);
      BOOST_REQUIRE(eventually([&] { return runs.load() >= 3; }));
      BOOST_CHECK(f.cancel());
      BOOST_CHECK(f.cancelled());
      BOOST_CHECK(f.done());
      BOOST_CHECK_THROW(f.get(), task_cancelled);
      const int at_cancel = runs.load();
      std::this_thread::sleep_for(30ms);
      const int later = runs.load();
      BOOST_CHECK_LE(later, at_cancel + 1);  // at most the run in progress
      std::this_thread::sleep_for(30ms);
      BOOST_CHECK_EQUAL(runs.load(), later);
      BOOST_CHECK(!f.cancel());
      BOOST_CHECK(eventually([&] { return token.use_count() == 1; }));  // callable released
      BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
    }
  }
}

BOOST_AUTO_TEST_CASE(cancel_queued_periodic_releases_callable) {
  auto token = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_at_fixed_rate(1h, 1s, [&runs, token] { runs.fetch_add(1); });
  BOOST_CHECK_EQUAL(pool.queued_count(), 1U);
  BOOST_CHECK(f.delay() > 59min);
  BOOST_CHECK(f.cancel());
  BOOST_CHECK_EQUAL(token.use_count(), 1);
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(runs.load(), 0);
}

BOOST_AUTO_TEST_CASE(cancel_true_interrupts_running_periodic) {
  gate started;
  std::atomic<bool> saw_stop{false};
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_with_fixed_delay(0ms, 1ms, [&](std::stop_token st) {
    if (runs.fetch_add(1) + 1 < 2) return;
    started.open();
    const auto end = steady::now() + wait_limit;
    while (!st.stop_requested() && steady::now() < end) std::this_thread::sleep_for(1ms);
    saw_stop = st.stop_requested();
  });
  BOOST_REQUIRE(started.wait());
  BOOST_CHECK(f.cancel(true));
  BOOST_CHECK_THROW(f.get(), task_cancelled);
  BOOST_CHECK(eventually([&] { return saw_stop.load(); }));
  pool.join();
  BOOST_CHECK_EQUAL(runs.load(), 2);
}

BOOST_AUTO_TEST_CASE(dropped_periodic_handle_keeps_running) {
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  {
    auto f = pool.schedule_with_fixed_delay(0ms, 1ms, [&] { runs.fetch_add(1); });
  }
  BOOST_CHECK(eventually([&] { return runs.load() >= 5; }));
}

BOOST_AUTO_TEST_CASE(huge_period_runs_once) {
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(1);
  auto rate = pool.schedule_at_fixed_rate(0ms, std::chrono::hours::max(), [&] { runs.fetch_add(1); });
  auto fixed = pool.schedule_with_fixed_delay(0ms, std::chrono::days::max(), [&] { runs.fetch_add(1); });
  BOOST_REQUIRE(eventually([&] { return runs.load() == 2 && pool.queued_count() == 2; }));
  // Re-armed for "never": still pending, not done.
  BOOST_CHECK(rate.delay() == steady::duration::max());
  BOOST_CHECK(fixed.delay() == steady::duration::max());
  BOOST_CHECK(!rate.done());
  BOOST_CHECK(!fixed.done());
  // Other work is not disturbed.
  auto g = pool.schedule(5ms, [] { return 1; });
  BOOST_REQUIRE(g.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK_EQUAL(runs.load(), 2);
}

BOOST_AUTO_TEST_CASE(initial_delay_respected_and_periodic_view) {
  recorder<chronopool::schedule_kind> kinds;
  recorder<steady::duration> periods;
  scheduled_thread_pool_options o;
  o.core_pool_size = 1;
  o.before_execute = [&](const chronopool::task_view& v) {
    kinds.push(v.kind());
    periods.push(v.period());
  };
  std::promise<steady::time_point> first_run;
  auto first = first_run.get_future();
  std::atomic<int> runs{0};
  scheduled_thread_pool pool(o);
  const auto t0 = steady::now();
  auto f = pool.schedule_at_fixed_rate(std::chrono::duration<double, std::milli>(30.0), 7ms, [&] {
    if (runs.fetch_add(1) == 0) first_run.set_value(steady::now());
  });
  BOOST_REQUIRE(first.wait_for(wait_limit) == std::future_status::ready);
  BOOST_CHECK(first.get() - t0 >= 30ms);
  BOOST_CHECK(f.cancel());
  pool.join();
  for (auto k : kinds.snapshot()) BOOST_CHECK(k == chronopool::schedule_kind::fixed_rate);
  for (auto d : periods.snapshot()) BOOST_CHECK(d == steady::duration(7ms));
}

BOOST_AUTO_TEST_SUITE_END()

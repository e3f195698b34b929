// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Periodic tasks' jitter and leeway: deadlines move, the schedule does not
// drift; and the argument checks of periods, jitter and leeway.
#include "periodic_test_support.hpp"

BOOST_AUTO_TEST_SUITE(periodic)

BOOST_AUTO_TEST_CASE(jitter_offsets_runs_without_drift) {
  constexpr auto period = 20ms;
  constexpr auto max_offset = 10ms;  // jitter 0.5 × period
  run_log log;
  deadline_pool p(2);
  periodic_options o;
  o.jitter = 0.5;
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] { log.starts.push(steady::now()); }, o);
  const auto t_after = steady::now();
  std::this_thread::sleep_for(400ms);
  const auto count = log.starts.size();
  const auto t_read = steady::now();
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto deadlines = p.deadlines.snapshot();
  const auto starts = log.starts.snapshot();
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  BOOST_TEST_MESSAGE("jitter: " << count << " runs in " << ms(t_read - t_before) << " ms");
  // No drift: about 20 runs in 400 ms; never more than the ideal instants passed.
  BOOST_CHECK_GE(count, 14U);
  BOOST_CHECK_LE(count, static_cast<std::size_t>((t_read - t_before) / period) + 1);
  steady::duration min_off = steady::duration::max();
  steady::duration max_off = steady::duration::min();
  for (std::size_t k = 0; k < deadlines.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k << " offset " << ms(deadlines[k] - (t_before + period * static_cast<int>(k))) << " ms") {
      // Ideal instant k lies in [t_before, t_after] + k × period; the jittered
      // deadline is never before it and less than max_offset after it.
      BOOST_CHECK(deadlines[k] >= t_before + period * static_cast<int>(k));
      BOOST_CHECK(deadlines[k] < t_after + period * static_cast<int>(k) + max_offset);
      BOOST_CHECK(starts[k] >= deadlines[k]);
      if (k > 0) BOOST_CHECK(starts[k] >= starts[k - 1]);
    }
    const auto off = deadlines[k] - (t_before + period * static_cast<int>(k));
    min_off = std::min(min_off, off);
    max_off = std::max(max_off, off);
  }
  // The offsets really vary (uniform over 10 ms: a spread under 1 ms is astronomically unlikely).
  BOOST_CHECK(max_off - min_off > 1ms);
}

BOOST_AUTO_TEST_CASE(jitter_applies_to_fixed_delay) {
  deadline_pool p(1);
  run_log log;
  periodic_options o;
  o.jitter = 0.9;
  auto f = p.pool.schedule_with_fixed_delay(0ms, 5ms, [&] { log.ends.push(steady::now()); }, o);
  BOOST_REQUIRE(eventually([&] { return log.ends.size() >= 8; }));
  BOOST_CHECK(f.cancel());
  p.pool.join();
  const auto d = p.deadlines.snapshot();
  const auto ends = log.ends.snapshot();
  BOOST_REQUIRE_GE(d.size(), 8U);
  bool some_offset = false;
  for (std::size_t k = 1; k < d.size(); ++k) {
    BOOST_CHECK(d[k] >= ends[k - 1] + 5ms);               // never before end + delay
    if (d[k] - ends[k - 1] > 5ms + 500us) some_offset = true;  // jitter observed at least once
  }
  BOOST_CHECK(some_offset);
}

BOOST_AUTO_TEST_CASE(leeway_moves_each_deadline_to_its_slot_end_without_drift) {
  constexpr auto period = 30ms;
  constexpr auto leeway = 10ms;
  run_log log;
  deadline_pool p(2);
  periodic_options o;
  o.leeway = leeway;
  const auto t_before = steady::now();
  auto f = p.pool.schedule_at_fixed_rate(0ms, period, [&] { log.starts.push(steady::now()); }, o);
  const auto t_after = steady::now();
  BOOST_REQUIRE(eventually([&] { return log.starts.size() >= 6; }));
  BOOST_CHECK(f.cancel());
  p.pool.join();

  const auto deadlines = p.deadlines.snapshot();
  const auto starts = log.starts.snapshot();
  BOOST_REQUIRE_EQUAL(deadlines.size(), starts.size());
  for (std::size_t k = 0; k < deadlines.size(); ++k) {
    BOOST_TEST_CONTEXT("run " << k) {
      // A slot end, at or after ideal instant k (in [t_before, t_after] + k
      // periods) and less than a leeway after it: no drift.
      BOOST_CHECK(deadlines[k].time_since_epoch() % leeway == steady::duration::zero());
      BOOST_CHECK(deadlines[k] >= t_before + period * static_cast<int>(k));
      BOOST_CHECK(deadlines[k] < t_after + period * static_cast<int>(k) + leeway);
      BOOST_CHECK(starts[k] >= deadlines[k]);
    }
  }
}

BOOST_AUTO_TEST_CASE(leeway_applies_to_the_first_deadline_and_fixed_delay) {
  scheduled_thread_pool pool(1);
  periodic_options o;
  o.leeway = 50ms;
  const auto t_before = steady::now();
  auto rate = pool.schedule_at_fixed_rate(1h, 2h, [] {}, o);
  auto delay = pool.schedule_with_fixed_delay(1h, 2h, [] {}, o);
  const auto t_after = steady::now();
  // shutdown_now() hands back both, with the deadlines they were queued for:
  // slot ends in [t + 1 h, t + 1 h + leeway).
  const auto pending = pool.shutdown_now();
  BOOST_REQUIRE_EQUAL(pending.size(), 2U);
  for (const auto& t : pending) {
    BOOST_CHECK(t.deadline().time_since_epoch() % 50ms == steady::duration::zero());
    BOOST_CHECK(t.deadline() >= t_before + 1h);
    BOOST_CHECK(t.deadline() < t_after + 1h + 50ms);
  }
}

BOOST_AUTO_TEST_CASE(invalid_leeway_throws) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  for (auto l : {std::chrono::nanoseconds(-1), std::chrono::nanoseconds(1s), std::chrono::nanoseconds(2s),
                 std::chrono::nanoseconds::min(), std::chrono::nanoseconds::max()}) {
    BOOST_TEST_CONTEXT("leeway " << l.count() << " ns") {
      periodic_options o;
      o.leeway = l;
      BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(1h, 1s, noop, o), std::invalid_argument);
      BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(1h, 1s, noop, o), std::invalid_argument);
    }
  }
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  // The bounds of the valid range are accepted.
  for (auto l : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(1s) - 1ns}) {
    periodic_options o;
    o.leeway = l;
    auto f = pool.schedule_at_fixed_rate(1h, 1s, noop, o);
    BOOST_CHECK(f.valid());
    BOOST_CHECK(f.cancel());
  }
}

BOOST_AUTO_TEST_CASE(invalid_periods_throw) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 0ms, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, -1ms, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::hours::min(), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::duration<double>(nan), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, std::chrono::duration<double>(1e-12), noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 0ns, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, -5s, noop), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, std::chrono::duration<double>(nan), noop), std::invalid_argument);
  // A NaN initial delay is rejected too.
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(std::chrono::duration<double>(nan), 1ms, noop), std::invalid_argument);
  // Empty callables.
  std::function<void()> empty;
  void (*null_fn)() = nullptr;
  BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(0ms, 1ms, empty), std::invalid_argument);
  BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(0ms, 1ms, null_fn), std::invalid_argument);
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  BOOST_CHECK_EQUAL(pool.task_count(), 0U);
}

BOOST_AUTO_TEST_CASE(invalid_jitter_throws) {
  scheduled_thread_pool pool(1);
  auto noop = [] {};
  for (double j : {-0.1, 1.0, 1.5, -std::numeric_limits<double>::min(), std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()}) {
    BOOST_TEST_CONTEXT("jitter " << j) {
      periodic_options o;
      o.jitter = j;
      BOOST_CHECK_THROW(pool.schedule_at_fixed_rate(1h, 1s, noop, o), std::invalid_argument);
      BOOST_CHECK_THROW(pool.schedule_with_fixed_delay(1h, 1s, noop, o), std::invalid_argument);
    }
  }
  BOOST_CHECK_EQUAL(pool.queued_count(), 0U);
  // The bounds of the valid range are accepted.
  for (double j : {0.0, 0.999}) {
    periodic_options o;
    o.jitter = j;
    auto f = pool.schedule_at_fixed_rate(1h, 1s, noop, o);
    BOOST_CHECK(f.valid());
    BOOST_CHECK(f.cancel());
  }
}

BOOST_AUTO_TEST_SUITE_END()

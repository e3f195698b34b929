// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the periodic-task suites share: a pool that records each periodic
// run's deadline, a log of runs, and an error a run throws.
//
// Timing is only checked as lower bounds (a run never starts before its
// deadline) or as exact schedule arithmetic read from task_view::deadline()
// in before_execute; never as "it ran within N ms".
#pragma once

#include "future_test_util.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using namespace chronopool_test;
using chronopool::missed_tick_policy;
using chronopool::periodic_options;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_cancelled;

namespace {

struct tick_error : std::runtime_error {
  explicit tick_error(int n) : std::runtime_error("tick failed"), run(n) {}
  int run;
};

/// A pool whose before_execute records the deadline of every periodic run.
struct deadline_pool {
  recorder<steady::time_point> deadlines;
  scheduled_thread_pool pool;

  explicit deadline_pool(std::size_t threads) : pool(options(threads, deadlines)) {}

  static scheduled_thread_pool_options options(std::size_t threads, recorder<steady::time_point>& d) {
    scheduled_thread_pool_options o;
    o.core_pool_size = threads;
    o.before_execute = [&d](const chronopool::task_view& v) {
      if (v.is_periodic()) d.push(v.deadline());
    };
    return o;
  }
};

/// Start and end of each run, as seen by the callable.
struct run_log {
  recorder<steady::time_point> starts;
  recorder<steady::time_point> ends;
};

inline bool is_multiple(steady::duration d, steady::duration period) { return d.count() % period.count() == 0; }

}  // namespace

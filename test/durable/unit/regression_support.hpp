// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Helpers shared by the durable scheduler's regression tests of issue 43
// (time rounding, namespaces, Redis refusals, leases_lost): quick scheduler
// options, a redis-server of the test's own, waiting for a result.
#pragma once

#include "../../support/quiet_use_future.hpp"  // first: see there

#include <boost/test/unit_test.hpp>

#include <chronopool/durable/detail/key_space.hpp>
#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "redis_server.hpp"
#include "test_redis.hpp"
#include "../../support/bounded_wait.hpp"

#include <chrono>
#include <future>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool::durable::test {

// As in scheduler_test.cpp: the error an operation completes with, waited
// for (and not through use_future, see there).
template <class Start>
boost::system::error_code error_of(Start start) {
  std::promise<boost::system::error_code> done;
  auto ec = done.get_future();
  start([done = std::move(done)](boost::system::error_code e, auto&&...) mutable { done.set_value(e); });
  return ec.get();
}

inline std::string unique_namespace() {
  static std::mt19937_64 rng{std::random_device{}()};
  return "defect-" + std::to_string(rng());
}

/// Short leases, polls and reconnection waits, so failures show quickly;
/// test_partitions() partitions (8 in CTest durable_on_cluster, else 1).
inline scheduler_options fast_options(const std::string& ns, redis_options redis) {
  using namespace std::chrono_literals;
  scheduler_options o;
  o.redis = std::move(redis);
  o.name_space = ns;
  o.partitions = test_partitions();
  o.lease = 2s;
  o.max_poll = 200ms;
  o.failure.initial_backoff = 50ms;
  o.failure.max_backoff = 50ms;
  o.stop_timeout = 2s;
  o.reconnect_min = 20ms;
  o.reconnect_max = 200ms;
  return o;
}

/// The keys of the partition schedule (or fire) @p id of the namespace of
/// @p o lives in: for tests that look at Redis beside the library, so
/// that they hold with partitions too.
inline detail::key_space keys_of(const scheduler_options& o, std::string_view id) {
  return detail::namespace_layout(o.name_space, o.partitions).of(id);
}

/// What constructing a scheduler with @p redis (and fast_options) throws as
/// std::invalid_argument, or "(accepted)" when the constructor takes it.
inline std::string construction_refusal(chronopool::scheduled_thread_pool& pool, const std::string& ns,
                                        redis_options redis) {
  try {
    scheduler s(pool.get_executor(), fast_options(ns, std::move(redis)));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  return test_support::eventually(pred, limit, std::chrono::milliseconds(5));
}

/// A redis-server of the test's own (password, maxmemory), not the shared one.
inline redis_server_options own_server_options() {
  redis_server_options o;
  o.executable = CHRONOPOOL_TEST_REDIS_SERVER;
  return o;
}

inline redis_options own_server_redis_options(const redis_server& server) {
  redis_options o;
  o.port = server.port();
  return o;
}

/// The namespace's dead letters (the first 100), waited for.
inline std::vector<dead_letter> dead_letters(scheduler& s) {
  return s.async_list_dead_letters(100, boost::asio::use_future).get();
}

/// A pool for the fires and a namespace of the test's own.
struct pool_fixture {
  std::string ns = unique_namespace();
  chronopool::scheduled_thread_pool pool{4};
  ~pool_fixture() {
    pool.shutdown();
    pool.join();
  }
};

}  // namespace chronopool::durable::test

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: payload and claim reply size limits. A payload above
// scheduler_options::max_payload_bytes is refused at creation with
// payload_too_large naming both sizes; a claim returns no more fires than
// fit in max_claim_reply_bytes, but always one, and the fires left out run
// at once after it, not a poll later.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <chronopool/durable/detail/function_calls.hpp>

#include "print_error.hpp"
#include "sync_redis.hpp"

#include <atomic>
#include <chrono>
#include <string>

namespace {

namespace size_limits_cd = chronopool::durable;
namespace size_limits_dt = chronopool::durable::test;

constexpr std::size_t size_limits_mib = std::size_t{1} << 20;

// n due one-shots with payloads of `bytes`, straight through the library.
void size_limits_put_due(size_limits_dt::sync_redis& redis, const size_limits_cd::detail::key_space& ks, int n,
                         std::size_t bytes) {
  for (int i = 0; i < n; ++i) {
    size_limits_cd::detail::put_request r;
    r.id = "big" + std::to_string(i);
    r.task = "job";
    r.payload = std::string(bytes, static_cast<char>('a' + i % 26));
    r.at_ms = 0;
    auto v = redis.exec(size_limits_cd::detail::put_call(ks, r));
    BOOST_TEST_REQUIRE(!v.is_error(), v.str);
  }
}

std::size_t size_limits_claim(size_limits_dt::sync_redis& redis, const size_limits_cd::detail::key_space& ks,
                              std::size_t max_bytes) {
  size_limits_cd::detail::claim_result r;
  auto ec = size_limits_cd::detail::parse_claim(
      redis.exec(size_limits_cd::detail::claim_call(ks, "w", 30000, 16, max_bytes)), r);
  BOOST_TEST_REQUIRE(!ec, ec.message());
  return r.fires.size();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(durable_size_limits)

BOOST_AUTO_TEST_CASE(a_claim_returns_the_fires_that_fit_in_its_byte_bound_and_always_one) {
  size_limits_dt::sync_redis redis{size_limits_dt::test_redis_options()};
  BOOST_TEST_REQUIRE(!redis.exec(size_limits_cd::detail::load_functions_call()).is_error());
  size_limits_cd::detail::key_space ks{size_limits_dt::unique_namespace()};
  size_limits_put_due(redis, ks, 6, size_limits_mib);
  // 2.5 MiB hold two payloads of 1 MiB (and their task names).
  BOOST_TEST(size_limits_claim(redis, ks, 5 * size_limits_mib / 2) == 2u);
  BOOST_TEST(size_limits_claim(redis, ks, 5 * size_limits_mib / 2) == 2u);
  // A bound below one payload still gives one fire: a big payload is slow, never stuck.
  BOOST_TEST(size_limits_claim(redis, ks, 1000) == 1u);
  // Without a bound, whatever is due (up to n).
  BOOST_TEST(size_limits_claim(redis, ks, 0) == 1u);
  BOOST_TEST(size_limits_claim(redis, ks, 0) == 0u);
  // Fires left out stayed due, with their state untouched: all six were
  // claimed once, with tokens in claim order.
  BOOST_TEST(redis.exec({"ZCARD", ks.prefix() + "inflight"}).integer == 6);
}

BOOST_AUTO_TEST_CASE(a_payload_over_the_limit_is_refused_naming_both_sizes_and_nothing_is_written) {
  chronopool::scheduled_thread_pool pool(1);
  auto o = size_limits_dt::fast_options(size_limits_dt::unique_namespace(), size_limits_dt::test_redis_options());
  o.max_payload_bytes = 1000;
  size_limits_cd::scheduler s(pool.get_executor(), o);
  const auto ec = size_limits_dt::error_of([&](auto h) {
    s.async_schedule("too-big", "job", std::string(1001, 'x'), std::chrono::hours(1), std::move(h));
  });
  BOOST_TEST(ec == size_limits_cd::error::payload_too_large);
  BOOST_TEST(ec.message().find("1001 bytes") != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("limit of 1000 bytes") != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("max_payload_bytes") != std::string::npos, ec.message());
  BOOST_TEST(size_limits_dt::error_of([&](auto h) { s.async_inspect("too-big", std::move(h)); }) ==
             size_limits_cd::error::no_such_schedule);
  // At the limit it is accepted.
  BOOST_TEST(!size_limits_dt::error_of([&](auto h) {
    s.async_schedule("at-limit", "job", std::string(1000, 'x'), std::chrono::hours(1), std::move(h));
  }));
  s.async_cancel("at-limit", boost::asio::use_future).get();
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_CASE(big_payloads_run_a_few_per_claim_without_waiting_for_a_poll) {
  chronopool::scheduled_thread_pool pool(2);
  auto o = size_limits_dt::fast_options(size_limits_dt::unique_namespace(), size_limits_dt::test_redis_options());
  o.max_payload_bytes = 4 * size_limits_mib;
  o.max_claim_reply_bytes = 4 * size_limits_mib;  // one or two of these per claim
  o.max_poll = std::chrono::minutes(10);          // fires left out must not wait for it
  o.claim_batch = 16;
  std::atomic<int> ran{0};
  std::atomic<std::size_t> bytes{0};
  size_limits_cd::scheduler s(pool.get_executor(), o);
  s.register_handler("job", [&](const size_limits_cd::fire_context& f) {
    bytes += f.payload.size();
    ++ran;
  });
  constexpr int fires = 16;
  for (int i = 0; i < fires; ++i)
    s.async_schedule("big" + std::to_string(i), "job", std::string(3 * size_limits_mib, 'p'),
                     std::chrono::milliseconds(0), boost::asio::use_future)
        .get();
  s.start();
  // Far below a poll, far above what 48 MiB take under a sanitizer on a
  // loaded machine.
  BOOST_TEST(size_limits_dt::wait_until([&] { return ran.load() == fires; }, std::chrono::seconds(120)),
             "ran " << ran.load());
  BOOST_TEST(bytes.load() == static_cast<std::size_t>(fires) * 3 * size_limits_mib);
  s.stop();
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_CASE(zero_limits_are_refused_naming_the_option) {
  chronopool::scheduled_thread_pool pool(1);
  auto o = size_limits_dt::fast_options(size_limits_dt::unique_namespace(), size_limits_dt::test_redis_options());
  o.max_payload_bytes = 0;
  BOOST_CHECK_EXCEPTION(size_limits_cd::scheduler(pool.get_executor(), o), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("max_payload_bytes must be positive") !=
                                 std::string::npos;
                        });
  o.max_payload_bytes = 1;
  o.max_claim_reply_bytes = 0;
  BOOST_CHECK_EXCEPTION(size_limits_cd::scheduler(pool.get_executor(), o), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("max_claim_reply_bytes must be positive") !=
                                 std::string::npos;
                        });
  pool.shutdown();
  pool.join();
}

BOOST_AUTO_TEST_SUITE_END()

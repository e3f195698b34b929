// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// sleep: one coroutine sleeping in a loop. A zero sleep measures the round
// trip through the timer machinery (arm, expire, resume); a 1 ms sleep
// measures how late the coroutine resumes. Both loops also report the
// process's CPU time per sleep: what the round trip costs all threads, and
// what waiting out a 1 ms sleep costs them (a poll or a spin shows there).
// chronopool: co_await chronopool::sleep_for(d). Asio's peer: a local
// steady_timer(ex, d) and co_await async_wait(use_awaitable), the usual way
// to sleep in Asio.
#include "../harness.hpp"
#include "../stats.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <chronopool/async_sleep.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

namespace bench {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto long_sleep = 1ms;

template <class Timer>
asio::awaitable<void> sleep_once(clock::duration d) {
  if constexpr (std::is_same_v<Timer, asio::steady_timer>) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
  } else {
    co_await chronopool::sleep_for(d);
  }
}

struct sleep_record {
  std::int64_t zero_total_ns = 0;
  std::vector<std::int64_t> lateness_ns;
  usage::meter zero_use;
  usage::meter long_use;
};

template <class Timer>
asio::awaitable<void> sleep_loop(std::size_t zero_loops, std::size_t long_loops, sleep_record& rec) {
  rec.zero_use.start();
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < zero_loops; ++i) co_await sleep_once<Timer>(0ns);
  rec.zero_total_ns = ns_between(t0, clock::now());
  rec.zero_use.stop();
  rec.long_use.start();
  for (std::size_t i = 0; i < long_loops; ++i) {
    const auto before = clock::now();
    co_await sleep_once<Timer>(long_sleep);
    rec.lateness_ns.push_back(ns_between(before + long_sleep, clock::now()));
  }
  rec.long_use.stop();
}

template <class Timer, class Runner>
run_result sleep_run(Runner& r, std::size_t zero_loops, std::size_t long_loops) {
  sleep_record rec;
  rec.lateness_ns.reserve(long_loops);
  countdown finished(1);
  std::exception_ptr error;
  asio::co_spawn(r.context(), sleep_loop<Timer>(zero_loops, long_loops, rec), [&](std::exception_ptr e) {
    error = e;
    finished.arrive();
  });
  finished.wait();
  r.finish();
  if (error) std::rethrow_exception(error);

  std::sort(rec.lateness_ns.begin(), rec.lateness_ns.end());
  auto us = [&](double q) { return static_cast<double>(quantile_sorted(rec.lateness_ns, q)) / 1e3; };
  run_result out;
  out.figures = {
      {"sleep(0) round trip ns", static_cast<double>(rec.zero_total_ns) / static_cast<double>(zero_loops)},
      {"sleep(1ms) lateness p50 us", us(0.50)},
      {"sleep(1ms) lateness p99 us", us(0.99)},
      rec.zero_use.cpu_ns_per("sleep(0)", zero_loops),
      rec.long_use.cpu_ns_per("sleep(1ms)", long_loops),
  };
  return out;
}

}  // namespace

std::vector<bench_case> sleep_cases(const options& o) {
  const std::size_t zero_loops = o.quick ? 5'000 : 200'000;
  const std::size_t long_loops = o.quick ? 50 : 1'000;
  const unsigned threads = o.threads;
  return {{"sleep", "loops=" + with_commas(zero_loops) + "x0 + " + with_commas(long_loops) + "x1ms", timing_variants,
           [=](variant v) {
             return with_variant(v, threads, [&]<class Timer>(auto& r) {
               return sleep_run<Timer>(r, zero_loops, long_loops);
             });
           }}};
}

}  // namespace bench

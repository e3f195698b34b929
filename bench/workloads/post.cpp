// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// post: T threads outside the pool post small functions into it, as
// producers hand work to a pool. Measures the caller's cost of post(), the
// end-to-end throughput until every function ran, and the process's CPU time
// (posters and pool) per function over the same span. Only the pools: on an
// io_context, chronopool does not touch post.
#include "../harness.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/asio/post.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace bench {
namespace {

struct alignas(64) producer {
  std::int64_t target = 0;
  std::atomic<std::int64_t> ran{0};  // functions may run on any pool thread
  std::int64_t post_ns = 0;
  countdown* all_ran = nullptr;
  void on_run() {
    if (ran.fetch_add(1, std::memory_order_relaxed) + 1 == target) all_ran->arrive();
  }
};

template <class Runner>
run_result post_run(Runner& r, std::size_t total, unsigned threads) {
  const std::size_t per_thread = total / threads;
  std::deque<producer> producers(threads);
  countdown all_ran(threads);
  std::atomic<bool> go{false};
  std::vector<std::thread> posters;
  for (auto& p : producers) {
    p.target = static_cast<std::int64_t>(per_thread);
    p.all_ran = &all_ran;
    posters.emplace_back([&r, &p, &go, per_thread] {
      go.wait(false);
      const auto t0 = clock::now();
      for (std::size_t i = 0; i < per_thread; ++i) boost::asio::post(r.context(), [&p] { p.on_run(); });
      p.post_ns = ns_between(t0, clock::now());
    });
  }
  usage::meter use;
  use.start();
  const auto t0 = clock::now();
  go.store(true);
  go.notify_all();
  all_ran.wait();
  const auto elapsed = ns_between(t0, clock::now());
  use.stop();
  for (auto& t : posters) t.join();
  r.finish();

  double post_ns = 0;
  for (const auto& p : producers) post_ns += static_cast<double>(p.post_ns) / static_cast<double>(per_thread);
  run_result out;
  out.figures = {
      {"post call ns", post_ns / static_cast<double>(threads)},
      {"end-to-end ns/op (wall/ops)", static_cast<double>(elapsed) / static_cast<double>(per_thread * threads)},
      use.cpu_ns_per("op", per_thread * threads),
  };
  return out;
}

}  // namespace

std::vector<bench_case> post_cases(const options& o) {
  const std::size_t total = o.quick ? 20'000 : 2'000'000;
  const unsigned threads = o.threads;
  return {{"post", "ops=" + with_commas(total), pool_variants, [=](variant v) {
             return with_variant(v, threads, [&]<class Timer>(auto& r) { return post_run(r, total, threads); });
           }}};
}

}  // namespace bench

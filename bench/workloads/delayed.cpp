// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// delayed: a server's many small delayed actions. One thread submits N
// fire-and-forget actions with delays spread over a short window, either
// with execute_after() (no future) or with schedule() whose future is
// dropped at once. Measures the submitting call and the time until every
// action ran. Only chronopool's pool: Asio has no delayed post to compare.
#include "../harness.hpp"
#include "../workloads.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bench {
namespace {

enum class delayed_call { execute_after, schedule_dropping_the_future };

run_result delayed_run(unsigned threads, delayed_call call, const std::vector<std::int64_t>& offsets_ns) {
  const std::size_t n = offsets_ns.size();
  countdown left(static_cast<std::int64_t>(n));
  cp_pool_runner r(threads);
  auto& pool = r.context();
  const auto t0 = clock::now();
  if (call == delayed_call::execute_after) {
    for (std::size_t i = 0; i < n; ++i)
      pool.execute_after(std::chrono::nanoseconds(offsets_ns[i]), [&left] { left.arrive(); });
  } else {
    for (std::size_t i = 0; i < n; ++i)
      (void)pool.schedule(std::chrono::nanoseconds(offsets_ns[i]), [&left] { left.arrive(); });
  }
  const auto submit_ns = ns_between(t0, clock::now());
  left.wait();
  const auto elapsed = ns_between(t0, clock::now());
  r.finish();
  run_result out;
  out.figures = {
      {"submit ns/op", static_cast<double>(submit_ns) / static_cast<double>(n)},
      {"all ran ms", static_cast<double>(elapsed) / 1e6},
  };
  return out;
}

}  // namespace

std::vector<bench_case> delayed_cases(const options& o) {
  const std::size_t n = o.quick ? 20'000 : 1'000'000;
  // The same offsets for both calls and every repetition (fixed seed), over 100 ms.
  auto offsets = std::make_shared<std::vector<std::int64_t>>(n);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> dist(0, 100'000'000);
  for (auto& x : *offsets) x = dist(rng);
  const unsigned threads = o.threads;
  auto make = [&](delayed_call call, const char* what) {
    return bench_case{"delayed", std::string(what) + " N=" + with_commas(n), {variant::cp_pool},
                      [=](variant) { return delayed_run(threads, call, *offsets); }};
  };
  return {make(delayed_call::execute_after, "execute_after"),
          make(delayed_call::schedule_dropping_the_future, "schedule, future dropped")};
}

}  // namespace bench

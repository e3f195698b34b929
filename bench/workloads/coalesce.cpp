// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// coalesce: N timers due at random over a window (heartbeats, idle timeouts)
// armed from one thread, each with expires_after(offset) or, for chronopool
// in the leeway cases, expires_after(offset, leeway). Counts the wake-ups it
// takes to complete them, as the process's voluntary context switches (a
// thread blocking until the next deadline, then woken), and the CPU time
// spent, beside how late each handler ran after the expiry it asked for.
// Asio's timer has no leeway: its rows are exact expiries in every case,
// which is what an Asio program gets.
#include "../harness.hpp"
#include "../stats.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace bench {
namespace {

template <class Timer, class Runner>
run_result coalesce_once(Runner& r, const std::vector<std::int64_t>& offsets_ns, clock::duration leeway) {
  const std::size_t n = offsets_ns.size();
  std::vector<clock::time_point> asked(n);
  std::vector<std::int64_t> lateness_ns(n, 0);
  countdown left(static_cast<std::int64_t>(n));  // outlives r.finish(): handlers refer to it
  usage::meter use;
  {
    std::vector<Timer> timers;
    timers.reserve(n);
    for (std::size_t i = 0; i < n; ++i) timers.emplace_back(r.context());
    use.start();
    for (std::size_t i = 0; i < n; ++i) {
      const auto offset = std::chrono::nanoseconds(offsets_ns[i]);
      asked[i] = clock::now() + offset;
      if constexpr (std::is_same_v<Timer, boost::asio::steady_timer>) {
        timers[i].expires_at(asked[i]);
      } else {
        timers[i].expires_at(asked[i], leeway);
      }
      timers[i].async_wait([&, i](const boost::system::error_code&) {
        lateness_ns[i] = ns_between(asked[i], clock::now());
        left.arrive();
      });
    }
    left.wait();
    use.stop();
  }
  r.finish();

  std::sort(lateness_ns.begin(), lateness_ns.end());
  auto us = [&](double q) { return static_cast<double>(quantile_sorted(lateness_ns, q)) / 1e3; };
  run_result out;
  out.figures = {
      {"wake-ups (voluntary switches)", static_cast<double>(use.voluntary_switches())},
      use.cpu_ms(),
      {"lateness p50 us", us(0.50)},
      {"lateness p99 us", us(0.99)},
  };
  return out;
}

bench_case make_case(const options& o, std::size_t n, std::chrono::milliseconds window,
                     std::chrono::milliseconds leeway) {
  auto offsets = std::make_shared<std::vector<std::int64_t>>(n);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> dist(0, std::chrono::nanoseconds(window).count());
  for (auto& x : *offsets) x = dist(rng);
  const unsigned threads = o.threads;
  return {"coalesce",
          "N=" + with_commas(n) + " window=" + std::to_string(window.count()) + "ms leeway=" +
              std::to_string(leeway.count()) + "ms",
          all_variants, [offsets, threads, leeway](variant v) {
            return with_variant(v, threads, [&]<class Timer>(auto& r) {
              return coalesce_once<Timer>(r, *offsets, std::chrono::duration_cast<clock::duration>(leeway));
            });
          }};
}

}  // namespace

std::vector<bench_case> coalesce_cases(const options& o) {
  using namespace std::chrono_literals;
  const std::size_t n = o.quick ? 1'000 : 10'000;
  const auto window = o.quick ? 100ms : 1000ms;
  return {make_case(o, n, window, 0ms), make_case(o, n, window, 1ms), make_case(o, n, window, 10ms)};
}

}  // namespace bench

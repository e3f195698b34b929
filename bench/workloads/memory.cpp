// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// memory: bytes per pending timer — the growth of N armed far-future timers
// (timer objects in a vector plus whatever each wait allocates), / N; as RSS
// (what the machine pays, pages included) and as heap in use (what was
// allocated, without the allocator's page-level slack). No CPU figure: the
// arming is cancel's arm phase, whose CPU time cancel reports.
#include "../harness.hpp"
#include "../rss.hpp"
#include "../workloads.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {
namespace {

using namespace std::chrono_literals;

template <class Timer, class Runner>
run_result memory_once(Runner& r, std::size_t n) {
  std::int64_t sink = 0;  // outlives r.finish(): the cancelled handlers write it
  rss::trim();
  const std::int64_t base = rss::current_bytes();
  const std::int64_t heap_base = rss::heap_in_use_bytes();
  std::int64_t grown = 0, heap_grown = 0;
  {
    std::vector<Timer> timers;
    timers.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      timers.emplace_back(r.context(), 1h);
      timers.back().async_wait([&sink](const boost::system::error_code& ec) {
        if (ec) do_not_optimize(sink);
      });
    }
    grown = rss::current_bytes() - base;
    heap_grown = rss::heap_in_use_bytes() - heap_base;
  }
  r.finish();

  run_result out;
  const auto per_timer = [n](std::int64_t b) { return static_cast<double>(b) / static_cast<double>(n); };
  out.figures = {{"RSS bytes/pending timer", per_timer(grown)}, {"heap bytes/pending timer", per_timer(heap_grown)}};
  return out;
}

}  // namespace

std::vector<bench_case> memory_cases(const options& o) {
  const std::size_t n = o.quick ? 10'000 : 1'000'000;
  const unsigned threads = o.threads;
  return {{"memory", "N=" + with_commas(n), all_variants, [=](variant v) {
             return with_variant(v, threads, [&]<class Timer>(auto& r) { return memory_once<Timer>(r, n); });
           }}};
}

}  // namespace bench

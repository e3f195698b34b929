// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// fire: N one-shot timers armed from one thread, deadlines uniform over a
// window starting at the moment each is armed; every handler records how late
// it started. Measures the submit path, the firing path under a deep heap,
// the memory a pending timer costs, and the process's CPU time from the first
// submission to the last handler, per timer.
//
// Two shapes: timers kept in a vector with a two-word handler (the shape that
// waits inline in a chronopool timer), and the shape servers often write, a
// timer allocated per operation and deleted by its own handler, whose
// handler holds three or four words (too large to wait inline).
#include "../harness.hpp"
#include "../rss.hpp"
#include "../stats.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bench {
namespace {

struct fire_state {
  explicit fire_state(std::size_t n) : deadline(n), lateness_ns(n, -1), left(static_cast<std::int64_t>(n)) {}
  std::vector<clock::time_point> deadline;  // written before the wait starts, read by its handler
  std::vector<std::int64_t> lateness_ns;    // written by the handler only
  countdown left;
};

double over_10us_pct(const std::vector<std::int64_t>& sorted) {
  const auto late = sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), std::int64_t{10'000});
  return 100.0 * static_cast<double>(late) / static_cast<double>(sorted.size());
}

/// How the timers are held and how large their handlers are.
enum class shape {
  vector_2w,  // std::vector<Timer>, handler [&s, i]
  heap_3w,    // new Timer per wait, deleted in the handler [&s, i, t]
  heap_4w,    // the same, the handler also carrying the deadline [&s, i, t, deadline]
};

const char* shape_name(shape sh) {
  switch (sh) {
    case shape::vector_2w: return "";
    case shape::heap_3w: return " timer=new, handler=3 words";
    case shape::heap_4w: return " timer=new, handler=4 words";
  }
  return "";
}

/// Arms timer @p i of @p n the way @p sh says. Heap timers are deleted by
/// their handler, after it ran (or was aborted).
template <class Timer, class Runner>
void arm_one(shape sh, Runner& r, fire_state& s, std::vector<Timer>& timers, std::size_t i,
             clock::time_point deadline) {
  switch (sh) {
    case shape::vector_2w:
      timers.emplace_back(r.context(), deadline);
      timers.back().async_wait([&s, i](const boost::system::error_code& ec) {
        const auto started = clock::now();
        if (!ec) s.lateness_ns[i] = ns_between(s.deadline[i], started);
        s.left.arrive();
      });
      return;
    case shape::heap_3w: {
      auto* t = new Timer(r.context(), deadline);
      t->async_wait([&s, i, t](const boost::system::error_code& ec) {
        const auto started = clock::now();
        if (!ec) s.lateness_ns[i] = ns_between(s.deadline[i], started);
        delete t;
        s.left.arrive();
      });
      return;
    }
    case shape::heap_4w: {
      // The fourth word: the deadline, carried by the handler itself.
      auto* t = new Timer(r.context(), deadline);
      t->async_wait([&s, i, t, deadline](const boost::system::error_code& ec) {
        const auto started = clock::now();
        if (!ec) s.lateness_ns[i] = ns_between(deadline, started);
        delete t;
        s.left.arrive();
      });
      return;
    }
  }
}

template <class Timer, class Runner>
run_result fire_once(Runner& r, const std::vector<std::int64_t>& offsets_ns, shape sh) {
  const std::size_t n = offsets_ns.size();
  fire_state s(n);  // outlives r.finish() below: handlers refer to it
  rss::trim();
  rss::reset_peak();
  const std::int64_t rss_base = rss::current_bytes();

  std::int64_t submit_ns = 0;
  std::int64_t peak = 0;
  clock::time_point t0;
  usage::meter use;
  {
    std::vector<Timer> timers;
    if (sh == shape::vector_2w) timers.reserve(n);
    use.start();
    t0 = clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      // What expires_after(offset) does, with the deadline kept for the handler.
      const auto deadline = clock::now() + std::chrono::nanoseconds(offsets_ns[i]);
      s.deadline[i] = deadline;
      arm_one<Timer>(sh, r, s, timers, i, deadline);
    }
    submit_ns = ns_between(t0, clock::now());
    s.left.wait();
    use.stop();
    peak = rss::peak_bytes();
  }
  r.finish();

  // The last handler's start, relative to the first submission.
  std::int64_t last_ns = 0;
  for (std::size_t i = 0; i < n; ++i) last_ns = std::max(last_ns, ns_between(t0, s.deadline[i]) + s.lateness_ns[i]);

  std::vector<std::int64_t> sorted = s.lateness_ns;
  std::sort(sorted.begin(), sorted.end());

  run_result out;
  out.figures = {
      {"submit ns/op", static_cast<double>(submit_ns) / static_cast<double>(n)},
      {"last fired ms", static_cast<double>(last_ns) / 1e6},
  };
  for (figure& f : lateness_figures(sorted)) out.figures.push_back(std::move(f));
  out.figures.insert(out.figures.end(), {
      // Beside the run's spin floor (the header): the share a thread that
      // only spins would see this late.
      {"over 10 us late %", over_10us_pct(sorted)},
      {"peak RSS delta MiB", rss::to_mib(peak - rss_base)},
      use.cpu_ns_per("timer", n),
  });
  for (const auto& [q, v] : cdf_points(sorted)) out.cdf.emplace_back(q, static_cast<double>(v) / 1e3);
  return out;
}

bench_case make_case(const options& o, std::size_t n, std::chrono::milliseconds window, shape sh = shape::vector_2w) {
  // The same offsets for every variant and repetition (fixed seed).
  auto offsets = std::make_shared<std::vector<std::int64_t>>(n);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> dist(0, std::chrono::nanoseconds(window).count());
  for (auto& x : *offsets) x = dist(rng);

  const unsigned threads = o.threads;
  return {"fire", "N=" + with_commas(n) + " window=" + std::to_string(window.count()) + "ms" + shape_name(sh),
          timing_variants, [offsets, threads, sh](variant v) {
            return with_variant(v, threads,
                                [&]<class Timer>(auto& r) { return fire_once<Timer>(r, *offsets, sh); });
          }};
}

}  // namespace

std::vector<bench_case> fire_cases(const options& o) {
  using namespace std::chrono_literals;
  if (o.quick) return {make_case(o, 10'000, 100ms), make_case(o, 10'000, 100ms, shape::heap_3w)};
  return {make_case(o, 1'000'000, 1000ms), make_case(o, 100'000, 1000ms),
          make_case(o, 1'000'000, 1000ms, shape::heap_3w), make_case(o, 100'000, 1000ms, shape::heap_3w),
          make_case(o, 100'000, 1000ms, shape::heap_4w)};
}

}  // namespace bench

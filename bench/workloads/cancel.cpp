// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// cancel: N far-future timers armed from one thread, then all cancelled from
// that thread. Measures both loops, the time from the cancel loop's start
// until every cancelled handler has run, and whether cancelling gives memory back
// (heap in use and RSS, as deltas from before arming, while armed and after
// the cancelled handlers ran), and the process's CPU time per timer over
// arming, cancelling and delivering (the memory reads in between left out).
// The timer objects stay alive throughout: what cancel can free is what each
// wait allocated.
//
// A second case, `probed`, cancels the same way while another thread, every
// ~20 us, cancels one wait of a timer made by the cancelling thread and
// starts another: how long an operation on another timer can be held up by
// the mass cancel (with chronopool it locks the same shard; with Asio, the
// same timer queue). Its own run: timing every cancel() call would slow the
// loop measured above. It reports no CPU time: the prober's own loop would
// be much of it.
#include "../harness.hpp"
#include "../rss.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/system/error_code.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace bench {
namespace {

using namespace std::chrono_literals;

template <class Timer, class Runner>
run_result cancel_once(Runner& r, std::size_t n) {
  countdown aborted(static_cast<std::int64_t>(n));  // outlives r.finish(): handlers refer to it
  rss::trim();
  const std::int64_t base = rss::current_bytes();
  const std::int64_t heap_base = rss::heap_in_use_bytes();
  std::int64_t arm_ns = 0, cancel_ns = 0, delivered_ns = 0, armed_rss = 0, after_rss = 0, armed_heap = 0,
               after_heap = 0;
  usage::meter use;
  {
    std::vector<Timer> timers;
    timers.reserve(n);
    use.start();
    const auto t0 = clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      timers.emplace_back(r.context(), 1h);
      timers.back().async_wait([&aborted](const boost::system::error_code& ec) {
        if (ec) aborted.arrive();
      });
    }
    const auto t1 = clock::now();
    use.stop();
    armed_rss = rss::current_bytes() - base;
    armed_heap = rss::heap_in_use_bytes() - heap_base;
    use.start();
    for (auto& t : timers) t.cancel();
    cancel_ns = ns_between(t1, clock::now());
    arm_ns = ns_between(t0, t1);
    aborted.wait();
    // The loop alone flatters whichever side leaves the most of the work to
    // the io threads until after it: this counts until the last handler ran.
    delivered_ns = ns_between(t1, clock::now());
    use.stop();
    // Freed memory counts as given back once the allocator can return it.
    rss::trim();
    after_rss = rss::current_bytes() - base;
    after_heap = rss::heap_in_use_bytes() - heap_base;
  }
  r.finish();

  const auto per_op = [n](std::int64_t ns) { return static_cast<double>(ns) / static_cast<double>(n); };
  run_result out;
  out.figures = {
      {"arm ns/op", per_op(arm_ns)},
      {"cancel ns/op", per_op(cancel_ns)},
      {"cancel until all delivered ns/op", per_op(delivered_ns)},
      {"heap armed MiB", rss::to_mib(armed_heap)},
      {"heap after cancel MiB", rss::to_mib(after_heap)},
      {"RSS armed MiB", rss::to_mib(armed_rss)},
      {"RSS after cancel MiB", rss::to_mib(after_rss)},
      use.cpu_ns_per("timer (arm, cancel, deliver)", n),
  };
  return out;
}

template <class Timer, class Runner>
run_result probed_cancel_once(Runner& r, std::size_t n) {
  countdown aborted(static_cast<std::int64_t>(n));
  std::atomic<std::int64_t> probe_handlers{0};
  std::int64_t longest_probe_ns = 0, longest_cancel_ns = 0, probes = 0;
  {
    // Made on this thread with two waits, like the timers below, and never
    // without one: a chronopool timer stays in the shard of the thread that
    // last started a wait on it while it had none.
    Timer probe(r.context(), 1h);
    auto on_probe = [&probe_handlers](const boost::system::error_code&) {
      probe_handlers.fetch_add(1, std::memory_order_relaxed);
    };
    probe.async_wait(on_probe);
    probe.async_wait(on_probe);
    std::vector<Timer> timers;
    timers.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      timers.emplace_back(r.context(), 1h);
      timers.back().async_wait([&aborted](const boost::system::error_code& ec) {
        if (ec) aborted.arrive();
      });
    }
    std::atomic<bool> stop{false};
    std::thread prober([&] {
      // cancel_one + async_wait: both reach the structure every timer of the
      // context shares (Asio's timer queue; chronopool's shard).
      while (!stop.load(std::memory_order_relaxed)) {
        const auto t0 = clock::now();
        probe.cancel_one();
        probe.async_wait(on_probe);
        longest_probe_ns = std::max(longest_probe_ns, ns_between(t0, clock::now()));
        ++probes;
        std::this_thread::sleep_for(20us);
      }
    });
    for (auto& t : timers) {
      const auto t0 = clock::now();
      t.cancel();
      longest_cancel_ns = std::max(longest_cancel_ns, ns_between(t0, clock::now()));
    }
    stop.store(true, std::memory_order_relaxed);
    prober.join();
    probe.cancel();
    aborted.wait();
    while (probe_handlers.load(std::memory_order_relaxed) != probes + 2) std::this_thread::yield();
  }
  r.finish();

  run_result out;
  out.figures = {
      {"longest op on another timer us", static_cast<double>(longest_probe_ns) / 1e3},
      {"longest cancel() us", static_cast<double>(longest_cancel_ns) / 1e3},
  };
  return out;
}

bench_case make_case(const options& o, std::size_t n) {
  const unsigned threads = o.threads;
  return {"cancel", "N=" + with_commas(n), all_variants, [=](variant v) {
            return with_variant(v, threads, [&]<class Timer>(auto& r) { return cancel_once<Timer>(r, n); });
          }};
}

bench_case make_probed_case(const options& o, std::size_t n) {
  const unsigned threads = o.threads;
  return {"cancel", "N=" + with_commas(n) + " probed", all_variants, [=](variant v) {
            return with_variant(v, threads, [&]<class Timer>(auto& r) { return probed_cancel_once<Timer>(r, n); });
          }};
}

}  // namespace

std::vector<bench_case> cancel_cases(const options& o) {
  const std::size_t n = o.quick ? 10'000 : 1'000'000;
  return {make_case(o, n), make_probed_case(o, n)};
}

}  // namespace bench

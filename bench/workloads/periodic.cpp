// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// periodic: K tasks at a fixed rate for a while, their phases spread over one
// period. Every tick records its start against the ideal schedule
// (first + j × period). Asio has no periodic timer, so its peer is the usual
// handler that re-arms with expires_at(previous + period); chronopool uses
// chronopool::schedule_at_fixed_rate on the io_context's executor, and the
// pool's own schedule_at_fixed_rate on a scheduled_thread_pool. A second
// case gives chronopool's tasks a 1 ms leeway (periodic_options::leeway;
// Asio's peer stays exact): their drift is then up to the leeway by design,
// and the case shows what that buys in wake-ups and CPU time, measured for
// every case as the process's voluntary context switches and user + system
// time per second of the run.
#include "../harness.hpp"
#include "../stats.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <chronopool/periodic.hpp>

#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace bench {
namespace {

using namespace std::chrono_literals;
constexpr auto period = 10ms;

/// One task's record. Its ticks never overlap, so no synchronisation inside;
/// the main thread reads it after the threads are joined.
struct ticker {
  clock::time_point first;
  clock::time_point end;
  std::int64_t* drift_ns = nullptr;  // room for every expected tick
  std::size_t capacity = 0;
  std::size_t ticks = 0;

  /// Records tick number `ticks`; false once its ideal instant is past the end.
  bool tick() {
    const auto now = clock::now();
    const auto ideal = first + ticks * period;
    if (ideal > end || ticks == capacity) return false;
    drift_ns[ticks++] = ns_between(ideal, now);
    return true;
  }
};

/// Asio's peer: a timer whose handler re-arms it one period after its last expiry.
struct asio_rearm {
  boost::asio::steady_timer timer;
  ticker* t;
  void start() {
    timer.expires_at(t->first);
    wait();
  }
  void wait() {
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec || !t->tick()) return;
      timer.expires_at(timer.expiry() + period);
      wait();
    });
  }
};

template <class Timer, class Runner>
run_result periodic_once(Runner& r, std::size_t k, std::chrono::milliseconds length, clock::duration leeway) {
  {
    // The timer service is made (and, for chronopool, the context learnt)
    // before the clock starts: the first task's relative initial delay would
    // otherwise be measured from before that work and shift its whole
    // schedule by it, so every one of its ticks would count as late.
    Timer warm(r.context());
    warm.expires_after(1h);
    warm.async_wait([](const boost::system::error_code&) {});
    warm.cancel();
  }
  const std::size_t capacity = static_cast<std::size_t>(length / period) + 2;
  std::vector<std::int64_t> drift(k * capacity);
  std::vector<ticker> tickers(k);
  const auto start = clock::now() + 50ms;  // time to start every task
  const auto end = start + length;
  for (std::size_t i = 0; i < k; ++i) {
    // Phases spread over one period, so ticks do not all come at once.
    tickers[i] = {start + i * std::chrono::duration_cast<clock::duration>(period) / k, end,
                  drift.data() + i * capacity, capacity, 0};
  }

  constexpr bool is_asio = std::is_same_v<Timer, boost::asio::steady_timer>;
  constexpr bool on_pool = std::is_same_v<std::decay_t<decltype(r.context())>, chronopool::scheduled_thread_pool>;
  chronopool::periodic_options options;
  options.leeway = leeway;
  usage::meter use;
  {
    std::deque<asio_rearm> asio_tasks;
    std::vector<chronopool::periodic_handle> cp_io_tasks;
    std::vector<chronopool::scheduled_future<void>> cp_pool_tasks;
    for (auto& t : tickers) {
      const auto initial = t.first - clock::now();
      auto handler = [&t] { do_not_optimize(t.tick()); };
      if constexpr (is_asio) {
        asio_tasks.push_back({boost::asio::steady_timer(r.context()), &t});
        asio_tasks.back().start();
      } else if constexpr (on_pool) {
        cp_pool_tasks.push_back(r.context().schedule_at_fixed_rate(initial, period, handler, options));
      } else {
        cp_io_tasks.push_back(
            chronopool::schedule_at_fixed_rate(r.context().get_executor(), initial, period, handler, options));
      }
    }
    std::this_thread::sleep_until(start);
    use.start();
    std::this_thread::sleep_until(end);
    use.stop();
    std::this_thread::sleep_until(end + 2 * period);
    // Asio's handlers stop by themselves after the end; chronopool's are cancelled.
    for (auto& h : cp_io_tasks) h.cancel();
    for (auto& f : cp_pool_tasks) f.cancel();
    r.finish();
  }

  std::size_t done = 0, expected = 0;
  std::vector<std::int64_t> all;
  all.reserve(drift.size());
  for (const auto& t : tickers) {
    done += t.ticks;
    expected += static_cast<std::size_t>((t.end - t.first) / period) + 1;
    all.insert(all.end(), t.drift_ns, t.drift_ns + t.ticks);
  }
  std::sort(all.begin(), all.end());
  auto us = [&](double q) { return all.empty() ? 0.0 : static_cast<double>(quantile_sorted(all, q)) / 1e3; };

  run_result out;
  out.figures = {
      {"ticks done %", 100.0 * static_cast<double>(done) / static_cast<double>(expected), true},
      {"drift p50 us", us(0.50)},
      {"drift p99 us", us(0.99)},
      {"drift max us", all.empty() ? 0.0 : static_cast<double>(all.back()) / 1e3},
      {"wake-ups/s (voluntary switches)", static_cast<double>(use.voluntary_switches()) /
                                              std::chrono::duration<double>(length).count()},
      {"CPU % of one core", 100.0 * static_cast<double>(use.cpu_ns()) /
                                static_cast<double>(std::chrono::nanoseconds(length).count())},
  };
  return out;
}

}  // namespace

std::vector<bench_case> periodic_cases(const options& o) {
  const std::size_t k = o.quick ? 100 : 1'000;
  const std::chrono::milliseconds length = o.quick ? 500ms : 5000ms;
  const unsigned threads = o.threads;
  const std::chrono::milliseconds leeway_length = o.quick ? 500ms : 2000ms;
  const std::string label = "K=" + with_commas(k) + " period=10ms for ";
  return {{"periodic", label + std::to_string(length.count()) + "ms", timing_variants,
           [=](variant v) {
             return with_variant(v, threads, [&]<class Timer>(auto& r) {
               return periodic_once<Timer>(r, k, length, clock::duration{});
             });
           }},
          {"periodic", label + std::to_string(leeway_length.count()) + "ms leeway=1ms (chronopool only)", all_variants,
           [=](variant v) {
             return with_variant(v, threads, [&]<class Timer>(auto& r) {
               return periodic_once<Timer>(r, k, leeway_length, std::chrono::duration_cast<clock::duration>(1ms));
             });
           }}};
}

}  // namespace bench

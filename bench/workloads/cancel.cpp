// cancel: N far-future timers armed from one thread, then all cancelled from
// that thread. Measures both loops, and whether cancelling gives memory back
// (heap in use and RSS, as deltas from before arming, while armed and after
// the cancelled handlers ran). The timer objects stay alive throughout: what
// cancel can free is what each wait allocated.
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
run_result cancel_once(Runner& r, std::size_t n) {
  countdown aborted(static_cast<std::int64_t>(n));  // outlives r.finish(): handlers refer to it
  rss::trim();
  const std::int64_t base = rss::current_bytes();
  const std::int64_t heap_base = rss::heap_in_use_bytes();
  std::int64_t arm_ns = 0, cancel_ns = 0, armed_rss = 0, after_rss = 0, armed_heap = 0, after_heap = 0;
  {
    std::vector<Timer> timers;
    timers.reserve(n);
    const auto t0 = clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      timers.emplace_back(r.context(), 1h);
      timers.back().async_wait([&aborted](const boost::system::error_code& ec) {
        if (ec) aborted.arrive();
      });
    }
    const auto t1 = clock::now();
    armed_rss = rss::current_bytes() - base;
    armed_heap = rss::heap_in_use_bytes() - heap_base;
    for (auto& t : timers) t.cancel();
    cancel_ns = ns_between(t1, clock::now());
    arm_ns = ns_between(t0, t1);
    aborted.wait();
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
      {"heap armed MiB", rss::to_mib(armed_heap)},
      {"heap after cancel MiB", rss::to_mib(after_heap)},
      {"RSS armed MiB", rss::to_mib(armed_rss)},
      {"RSS after cancel MiB", rss::to_mib(after_rss)},
  };
  return out;
}

bench_case make_case(const options& o, std::size_t n) {
  const unsigned threads = o.threads;
  return {"cancel", "N=" + with_commas(n), all_variants, [=](variant v) {
            return with_variant(v, threads, [&]<class Timer>(auto& r) { return cancel_once<Timer>(r, n); });
          }};
}

}  // namespace

std::vector<bench_case> cancel_cases(const options& o) { return {make_case(o, o.quick ? 10'000 : 1'000'000)}; }

}  // namespace bench

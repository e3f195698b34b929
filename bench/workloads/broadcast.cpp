// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// broadcast: K waits on one timer, the Asio idiom of a timer as an
// asynchronous event (a far expiry that many coroutines wait on, then
// cancel() to wake them all, or an expiry that wakes them all at once).
// Measures the cost per wait of starting them, of cancelling them all and of
// firing them all: each should be O(1) per wait whatever K is. Also the
// process's CPU time over both rounds (the lead to the deadline, when every
// thread should be asleep, included) per wait started, 2K in all.
#include "../harness.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace bench {
namespace {

using namespace std::chrono_literals;

template <class Timer, class Runner>
run_result broadcast_once(Runner& r, std::size_t k, std::chrono::milliseconds lead) {
  const auto waits = static_cast<std::int64_t>(k);
  countdown aborted(waits), fired(waits);  // outlive r.finish(): handlers refer to them
  std::int64_t arm_ns = 0, cancel_ns = 0, fire_ns = 0;
  usage::meter use;
  {
    // Woken by cancel(): from the call to the last handler.
    Timer t(r.context(), 1h);
    use.start();
    const auto t0 = clock::now();
    for (std::size_t i = 0; i < k; ++i) {
      t.async_wait([&aborted](const boost::system::error_code& ec) {
        if (ec) aborted.arrive();
      });
    }
    const auto t1 = clock::now();
    t.cancel();
    aborted.wait();
    cancel_ns = ns_between(t1, clock::now());
    arm_ns = ns_between(t0, t1);

    // Woken by the expiry: from the deadline to the last handler. The
    // deadline leaves room to start every wait before it.
    const auto deadline = clock::now() + lead;
    t.expires_at(deadline);
    for (std::size_t i = 0; i < k; ++i) {
      t.async_wait([&fired](const boost::system::error_code& ec) {
        if (!ec) fired.arrive();
      });
    }
    fired.wait();
    fire_ns = ns_between(deadline, clock::now());
    use.stop();
  }
  r.finish();

  const auto per_wait = [k](std::int64_t ns) { return static_cast<double>(ns) / static_cast<double>(k); };
  run_result out;
  out.figures = {
      {"arm ns/wait", per_wait(arm_ns)},
      {"cancel all ns/wait", per_wait(cancel_ns)},
      {"fire all ns/wait", per_wait(fire_ns)},
      use.cpu_ns_per("wait", 2 * k),
  };
  return out;
}

bench_case make_case(const options& o, std::size_t k) {
  const unsigned threads = o.threads;
  const std::chrono::milliseconds lead = o.quick ? 100ms : 1000ms;
  return {"broadcast", "K=" + with_commas(k), all_variants, [=](variant v) {
            return with_variant(v, threads, [&]<class Timer>(auto& r) { return broadcast_once<Timer>(r, k, lead); });
          }};
}

}  // namespace

std::vector<bench_case> broadcast_cases(const options& o) {
  if (o.quick) return {make_case(o, 1'000)};
  return {make_case(o, 10'000), make_case(o, 100'000)};
}

}  // namespace bench

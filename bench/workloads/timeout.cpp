// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// timeout: M outstanding 30 s timeouts, as a server with M idle connections
// keeps them. Each operation re-arms the oldest timeout of a slice
// (expires_after, which cancels its pending wait, then async_wait): one
// cancel + one arm, the cost a server pays per request. The work runs as
// jobs on the set-up's own T threads, each job owning one slice of the
// timers (Asio's timers may not be used concurrently), re-posting itself
// every batch so that the cancelled waits' handlers run in between, as they
// would in a server. Measures wall time and the process's CPU time per
// pair, from the first re-arm until every cancelled wait's handler ran.
#include "../harness.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace bench {
namespace {

using namespace std::chrono_literals;
constexpr auto timeout_length = 30s;
constexpr std::size_t batch = 256;

template <class Timer>
struct alignas(64) slice {
  std::vector<Timer> timers;
  std::size_t cursor = 0;   // the oldest timeout: the next to re-arm
  std::size_t ops_left = 0;
  // The slice is done when every cancelled wait's handler ran (one a re-arm)
  // and its last job returned: the last cancel's handler may run on another
  // thread before that job's final async_wait, and the tear-down must not
  // destroy the timers under it. acq_rel, so that whoever counts the last
  // one carries everything the others did to the tear-down.
  std::atomic<std::int64_t> left{0};  // handlers may run on any thread
  countdown* all_done = nullptr;

  void count_one() {
    if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done->arrive();
  }
  void on_wait(const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) return;  // a real expiry: not in 30 s
    count_one();
  }
  void arm(Timer& t) {
    t.async_wait([this](const boost::system::error_code& ec) { on_wait(ec); });
  }
};

template <class Timer, class Runner>
run_result timeout_once(Runner& r, std::size_t m, std::size_t ops, unsigned threads) {
  std::deque<slice<Timer>> slices(threads);  // deque: slices never move
  countdown armed(threads);
  countdown done(threads);
  const std::size_t per_slice = m / threads;
  const std::size_t ops_per_slice = ops / threads;
  std::int64_t elapsed_ns = 0;
  usage::meter use;
  {
    // Set-up, not measured: every slice arms its timeouts on a worker.
    for (auto& s : slices) {
      s.ops_left = ops_per_slice;
      s.left.store(static_cast<std::int64_t>(ops_per_slice) + 1, std::memory_order_relaxed);  // + its last job
      s.all_done = &done;
      boost::asio::post(r.context(), [&r, &s, &armed, per_slice] {
        s.timers.reserve(per_slice);
        for (std::size_t i = 0; i < per_slice; ++i) {
          s.timers.emplace_back(r.context(), timeout_length);
          s.arm(s.timers.back());
        }
        armed.arrive();
      });
    }
    armed.wait();

    // Measured: until every re-arm is done and every cancelled wait's handler ran.
    use.start();
    const auto t0 = clock::now();
    for (auto& s : slices) {
      struct job {
        Runner* r;
        slice<Timer>* s;
        void operator()() const {
          const std::size_t n = std::min(batch, s->ops_left);
          for (std::size_t i = 0; i < n; ++i) {
            Timer& t = s->timers[s->cursor];
            if (++s->cursor == s->timers.size()) s->cursor = 0;
            t.expires_after(timeout_length);  // cancels the pending wait
            s->arm(t);
          }
          s->ops_left -= n;
          if (s->ops_left > 0)
            boost::asio::post(r->context(), *this);
          else
            s->count_one();
        }
      };
      boost::asio::post(r.context(), job{&r, &s});
    }
    done.wait();
    elapsed_ns = ns_between(t0, clock::now());
    use.stop();

    // Tear-down: destroy each slice's timers on a worker (destruction cancels
    // the pending waits), then let the threads drain.
    countdown destroyed(threads);
    for (auto& s : slices)
      boost::asio::post(r.context(), [&s, &destroyed] {
        s.timers.clear();
        s.timers.shrink_to_fit();
        destroyed.arrive();
      });
    destroyed.wait();
  }
  r.finish();

  const std::size_t pairs = ops_per_slice * threads;
  run_result out;
  out.figures = {{"ns/pair (wall/ops)", static_cast<double>(elapsed_ns) / static_cast<double>(pairs)},
                 use.cpu_ns_per("pair", pairs)};
  return out;
}

bench_case make_case(const options& o, std::size_t m, std::size_t ops) {
  const unsigned threads = o.threads;
  return {"timeout", "M=" + with_commas(m) + " ops=" + with_commas(ops), all_variants, [=](variant v) {
            return with_variant(v, threads,
                                [&]<class Timer>(auto& r) { return timeout_once<Timer>(r, m, ops, threads); });
          }};
}

}  // namespace

std::vector<bench_case> timeout_cases(const options& o) {
  if (o.quick) return {make_case(o, 1'000, 20'000), make_case(o, 10'000, 20'000)};
  std::vector<bench_case> cases{make_case(o, 1'000, 1'000'000), make_case(o, 1'000'000, 1'000'000)};
  // 10M outstanding timeouts: ~5 GiB and ~25 s per run (most of it arming and
  // tearing down the 10M), so only on request.
  if (o.big) cases.push_back(make_case(o, 10'000'000, 1'000'000));
  return cases;
}

}  // namespace bench

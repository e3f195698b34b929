// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Randomized stress of functions posted through the pool's executor, with a
// ledger: threads outside the pool post, functions running on the pool post
// follow-ups, and meanwhile the pool is shut down (shutdown() or
// shutdown_now(), alternating between iterations). Every function must end
// exactly once: run, or destroyed unrun (work posted from shutdown_now() on,
// Asio's rule). With shutdown() alone, every function whose post returned
// before shutdown() was called must have run: executor work is accepted and
// run while the pool drains.
//
// Posts from outside the pool push without the queue's lock while it is open
// and take the lock once it drains or closes; this is where the two paths
// meet. Counts scale with CHRONOPOOL_STRESS_SCALE (stress_config.hpp).
#include "stress_config.hpp"

#include <chronopool/scheduled_thread_pool.hpp>

#include "../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;

namespace {

constexpr int posters = 3;
constexpr int post_iterations = 8;
constexpr std::size_t default_total_posts = 400'000;  // from outside the pool, over all iterations, at scale 1

/// What happened to each function of one iteration.
struct post_ledger {
  explicit post_ledger(std::size_t capacity) : ran(capacity), destroyed(capacity), before_shutdown(capacity) {}
  std::vector<std::atomic<std::uint8_t>> ran;
  std::vector<std::atomic<std::uint8_t>> destroyed;  // unrun
  std::vector<std::atomic<std::uint8_t>> before_shutdown;  // its post returned before shutdown was called
  std::atomic<std::size_t> next_id{0};
  std::size_t take_id() { return next_id.fetch_add(1); }
};

/// Marks its function destroyed unrun, unless the function ran (and
/// disarmed it) first. Move-only: exactly one live copy stays armed.
class unrun_guard {
 public:
  unrun_guard(post_ledger& l, std::size_t id) : l_(&l), id_(id) {}
  unrun_guard(unrun_guard&& o) noexcept : l_(std::exchange(o.l_, nullptr)), id_(o.id_) {}
  unrun_guard& operator=(unrun_guard&&) = delete;
  ~unrun_guard() {
    if (l_ != nullptr) l_->destroyed[id_].fetch_add(1);
  }
  /// The function ran: records it and disarms.
  void ran() {
    l_->ran[id_].fetch_add(1);
    l_ = nullptr;
  }

 private:
  post_ledger* l_;
  std::size_t id_;
};

struct iteration_result {
  std::size_t posted = 0, ran = 0, destroyed = 0, not_once = 0, lost_before_shutdown = 0;
};

/// A function that records itself and, sometimes, posts a follow-up from the pool thread it runs on.
struct counted_post {
  post_ledger* l;
  scheduled_thread_pool* pool;
  unrun_guard guard;
  std::uint32_t seed;
  void operator()() {
    guard.ran();
    if (seed % 8 == 0) {
      const std::size_t id = l->take_id();
      if (id < l->ran.size()) {
        asio::post(*pool, counted_post{l, pool, unrun_guard(*l, id), seed * 1664525u + 1013904223u});
      }
    }
  }
};

iteration_result run_iteration(std::uint64_t seed, bool use_shutdown_now, std::size_t per_poster) {
  // Room for the follow-ups too (at most one per function, an eighth of them).
  post_ledger l(static_cast<std::size_t>(posters) * per_poster * 2);
  std::atomic<bool> shutdown_called{false};
  {
    scheduled_thread_pool_options o;
    o.core_pool_size = 2;
    scheduled_thread_pool pool(o);
    std::vector<std::thread> threads;
    for (int p = 0; p < posters; ++p) {
      threads.emplace_back([&, p] {
        std::mt19937 rng(static_cast<std::uint32_t>(seed) * 31u + static_cast<std::uint32_t>(p));
        for (std::size_t i = 0; i < per_poster; ++i) {
          const std::size_t id = l.take_id();
          if (id >= l.ran.size()) return;
          asio::post(pool, counted_post{&l, &pool, unrun_guard(l, id), static_cast<std::uint32_t>(rng())});
          // Still not called once the post has returned: the post came
          // before shutdown() (the flag is set before the call), so the
          // function must run. (Read before the post, it would also mark
          // posts that a preemption delayed past the pool's termination.)
          if (!shutdown_called.load()) l.before_shutdown[id].store(1);
          if (rng() % 1000 < 3) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
        }
      });
    }
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    // Somewhere in the middle of the posting.
    std::this_thread::sleep_for(std::chrono::microseconds(2'000 + rng() % 20'000));
    shutdown_called.store(true);
    if (use_shutdown_now) {
      (void)pool.shutdown_now();  // returns tasks only: there are none
    } else {
      pool.shutdown();
    }
    for (auto& t : threads) t.join();
    pool.join();
  }  // the pool is gone: whatever it held has been run or destroyed

  iteration_result r;
  const std::size_t used = std::min(l.next_id.load(), l.ran.size());
  for (std::size_t id = 0; id < used; ++id) {
    const unsigned ran = l.ran[id].load(), destroyed = l.destroyed[id].load();
    // Every id below `used` was posted: one with neither mark was lost.
    ++r.posted;
    r.ran += ran;
    r.destroyed += destroyed;
    if (ran + destroyed != 1) ++r.not_once;
    if (!use_shutdown_now && l.before_shutdown[id].load() != 0 && ran != 1) ++r.lost_before_shutdown;
  }
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(post_ledger_stress)

BOOST_AUTO_TEST_CASE(every_posted_function_runs_or_is_destroyed_exactly_once) {
  const double scale = stress::scale();
  const auto total = static_cast<std::size_t>(static_cast<double>(default_total_posts) * scale);
  const std::size_t per_poster = std::max<std::size_t>(1'000, total / (posters * post_iterations));
  std::size_t posted = 0, ran = 0, destroyed = 0, not_once = 0, lost = 0;
  std::size_t destroyed_after_now = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < post_iterations; ++i) {
    const std::uint64_t seed = stress::base_seed() + 1000 + static_cast<std::uint64_t>(i);
    const bool now = (i % 2 == 1);
    const iteration_result r = run_iteration(seed, now, per_poster);
    BOOST_TEST_MESSAGE("  iteration " << i << (now ? " (shutdown_now)" : " (shutdown)") << ": " << r.posted
                                      << " posted, " << r.ran << " ran, " << r.destroyed << " destroyed unrun");
    BOOST_TEST(r.not_once == 0u, "iteration " << i << " seed " << seed);
    BOOST_TEST(r.lost_before_shutdown == 0u, "iteration " << i << " seed " << seed);
    posted += r.posted;
    ran += r.ran;
    destroyed += r.destroyed;
    not_once += r.not_once;
    lost += r.lost_before_shutdown;
    if (now) destroyed_after_now += r.destroyed;
  }
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST_MESSAGE("posts: " << posted << " (" << ran << " ran, " << destroyed << " destroyed unrun) in " << secs
                               << " s");
  BOOST_TEST(not_once == 0u);
  BOOST_TEST(lost == 0u);
  // The mix must exercise both ends.
  BOOST_TEST(ran > 0u);
  BOOST_TEST(destroyed_after_now > 0u);
  BOOST_TEST(posted >= static_cast<std::size_t>(posters) * per_poster * post_iterations);
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Callables and handlers whose move (or copy) constructor throws while they
// are being moved into the queue: the submitting call must throw that
// exception to its caller, nothing may be queued or leaked, tracked work
// taken on the way must be given back (the pool still terminates, run()
// still returns), and the pool or timer must keep working.
#include "fault_support.hpp"

#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include "../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

using chronopool::scheduled_thread_pool;
using namespace fault;

namespace {

struct move_failure {};

/// How many copies/moves a bomb survives before one throws (shared by all
/// the copies of one bomb). The countdown starts at @p fuse; 0 never throws.
struct fuse_state {
  explicit fuse_state(int fuse) : remaining(fuse) {}
  std::atomic<int> remaining;
  std::atomic<int> calls{0};
  std::atomic<bool> exploded{false};
};

/// A callable (or completion handler) whose move and copy constructors throw
/// move_failure on the fuse's count.
class bomb {
 public:
  bomb(std::shared_ptr<fuse_state> f, life_counter& c) : fuse_(std::move(f)), token_(c) {}
  bomb(const bomb& o) : fuse_(o.fuse_), token_(o.token_) { tick(); }
  bomb(bomb&& o) : fuse_(o.fuse_), token_(o.token_) { tick(); }
  bomb& operator=(const bomb&) = delete;

  void operator()() const { fuse_->calls.fetch_add(1); }
  void operator()(const sys_ns::error_code&) const { fuse_->calls.fetch_add(1); }

 private:
  void tick() {
    if (fuse_->remaining.load() > 0 && fuse_->remaining.fetch_sub(1) == 1) {
      fuse_->exploded.store(true);
      injected("a callable's move/copy constructor threw");
      throw move_failure{};
    }
  }

  std::shared_ptr<fuse_state> fuse_;
  tracked token_;
};

/// Tries @p submit with fuses 1, 2, ... until a submission no longer throws
/// (every move made inside the call has been made to throw once). After each
/// failure, checks that nothing was left behind; the first survivor is
/// disarmed at once and handed to @p after_survivor. Returns how many fuses
/// exploded. The bombs' life counters live in @p counters, which must
/// outlive whatever may still hold the survivor (declare it before the pool).
template <class Submit, class Check, class AfterSurvivor>
int sweep_fuses(std::deque<life_counter>& counters, Submit submit, Check check_consistent,
                AfterSurvivor after_survivor) {
  for (int fuse = 1; fuse < 64; ++fuse) {
    life_counter& c = counters.emplace_back();
    auto state = std::make_shared<fuse_state>(fuse);
    bool threw = false;
    try {
      submit(bomb(state, c));  // a prvalue: the call itself does not move it
    } catch (const move_failure&) {
      threw = true;
    }
    if (!threw) {
      state->remaining.store(0);  // later moves (at run time) must not throw
      BOOST_TEST(!state->exploded.load(), "fuse " << fuse << ": a move threw but the call did not");
      after_survivor();
      return fuse - 1;
    }
    BOOST_TEST_CONTEXT("fuse " << fuse) {
      BOOST_TEST(c.live.load() == 0, "the refused callable must be destroyed");
      BOOST_TEST(state->calls.load() == 0);
      check_consistent();
    }
  }
  BOOST_ERROR("a submission kept moving its callable more than 63 times");
  return 63;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(throwing_moves)

BOOST_AUTO_TEST_CASE(pool_submissions_throw_to_the_caller_and_queue_nothing) {
  std::deque<life_counter> counters;
  scheduled_thread_pool pool(2);
  auto idle = [&] { return pool.queued_count() == 0 && pool.active_count() == 0; };
  auto consistent = [&] { BOOST_TEST(idle()); };  // the failed call queued nothing
  // A survivor (the first submission that did not throw) is cancelled or
  // left to run, so the next sweep starts from an idle pool again.
  chronopool::scheduled_future_base last;
  auto keep = [&](chronopool::scheduled_future_base f) { last = std::move(f); };
  auto settle = [&] {
    last.cancel();
    BOOST_TEST(eventually(idle));
  };
  int exploded = 0;
  exploded += sweep_fuses(counters, [&](bomb b) { keep(pool.submit(std::move(b))); }, consistent, settle);
  exploded += sweep_fuses(counters, [&](bomb b) { pool.execute(std::move(b)); }, consistent, settle);
  exploded += sweep_fuses(counters, [&](bomb b) { keep(pool.schedule(1h, std::move(b))); }, consistent, settle);
  exploded += sweep_fuses(counters, [&](bomb b) { keep(pool.schedule_at(steady::now() + 1h, std::move(b))); }, consistent,
                          settle);
  exploded += sweep_fuses(counters, [&](bomb b) { keep(pool.schedule_at_fixed_rate(1h, 1h, std::move(b))); }, consistent,
                          settle);
  exploded += sweep_fuses(counters, [&](bomb b) { keep(pool.schedule_with_fixed_delay(1h, 1h, std::move(b))); }, consistent,
                          settle);
  BOOST_TEST(exploded >= 6);
  auto f = pool.submit([] { return 1; });
  BOOST_REQUIRE(f.wait_for(long_wait) == std::future_status::ready);
  BOOST_TEST(f.get() == 1);
  pool.join();  // nothing left half-queued
}

BOOST_AUTO_TEST_CASE(executor_post_gives_back_its_tracked_work) {
  std::deque<life_counter> counters;
  scheduled_thread_pool pool(1);
  // Hold the only thread, so nothing posted runs before its fuse is disarmed.
  std::atomic<bool> release{false};
  asio::post(pool.get_executor(), [&] { eventually([&] { return release.load(); }); });
  const int exploded = sweep_fuses(counters, [&](bomb b) { asio::post(pool.get_executor(), std::move(b)); },
                                   [] {}, [] {});
  BOOST_TEST(exploded >= 1);
  release.store(true);
  std::atomic<bool> ran{false};
  asio::post(pool.get_executor(), [&] { ran.store(true); });
  BOOST_TEST(eventually([&] { return ran.load(); }));
  // Outstanding work leaked by a failed post would hold off termination.
  pool.shutdown();
  BOOST_TEST(pool.wait_for_termination(long_wait));
}

BOOST_AUTO_TEST_CASE(timer_async_wait_throws_before_anything_is_registered) {
  std::deque<life_counter> counters;
  asio::io_context io;
  chronopool::steady_timer t(io, 1h);
  auto& service = asio::use_service<chronopool::timer_service>(io);
  // Only the moves made inside async_wait() itself are swept: a handler
  // whose move throws later, while its completion is delivered, breaks
  // Asio's handler requirements.
  const int exploded = sweep_fuses(counters, [&](bomb b) { t.async_wait(std::move(b)); },
                                   [&] { BOOST_TEST(service.pending_waits() == 0u); },
                                   [&] { BOOST_TEST(t.cancel() == 1u); });
  BOOST_TEST(exploded >= 1);
  BOOST_TEST(run_until_idle(io));  // no leaked wait holds io's work
  bool fired = false;
  t.expires_after(1ms);
  t.async_wait([&](const sys_ns::error_code& ec) { fired = !ec; });
  BOOST_TEST(run_until_idle(io));
  BOOST_TEST(fired);
}

BOOST_AUTO_TEST_SUITE_END()

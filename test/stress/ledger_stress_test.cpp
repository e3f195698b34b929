// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Randomized concurrent stress with a ledger: producers submit one-shot,
// fixed-rate and fixed-delay work with random delays (0, negative, short,
// hours::max() and duration::max()), cancel (with and without may_interrupt),
// remove, purge and resize, while one of them shuts the pool down (shutdown()
// and shutdown_now() alternate between iterations; some shutdown() iterations
// escalate to shutdown_now() from another producer) and, at the same time,
// timers on an io_context are armed, re-armed and cancelled from other threads
// (timer_churn.hpp), and the library's system clock is stepped back and forth
// under the wall-clock tasks some producers submit (clock_stepper.hpp). At the
// end every task must have ended exactly once: run
// by the pool, cancelled, rejected, or returned by shutdown_now() and then run
// or dropped by the test. Periodic runs must never overlap nor outrun their
// schedule, and every timer handler must have run exactly once. Some
// iterations start the pool's threads with a thread factory that fails every
// fifth call (a submission that then throws counts as rejected), some refuse
// with a rejection handler that runs, throws or drops the task.
//
// Counts scale with CHRONOPOOL_STRESS_SCALE (see stress_config.hpp): at scale 1
// a million one-shot tasks go through the ledger, a quarter of that under the
// sanitizers. The totals are printed with --log_level=message (ctest sets it).
#include "clock_stepper.hpp"
#include "periodic_ledger.hpp"
#include "stress_config.hpp"
#include "timer_churn.hpp"
#include "violation_log.hpp"

#include <chronopool/errors.hpp>
#include <chronopool/pending_task.hpp>
#include <chronopool/pool_thread.hpp>
#include <chronopool/rejected_task.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace std::chrono_literals;
using chronopool::pending_task;
using chronopool::rejected_execution;
using chronopool::scheduled_future;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using chronopool::task_id;

namespace {

constexpr int producers = 4;
constexpr int iterations = 8;
constexpr std::size_t default_total_one_shots = 1'000'000;  // over all iterations, at scale 1
constexpr std::size_t default_total_timer_waits = 160'000;   // started by the arming threads, at scale 1
constexpr std::size_t max_periodic_per_producer = 6;
constexpr int pause_per_mille = 60;  // chance of a pause before each operation

/// What the flaky thread factory throws.
struct thread_start_failure : std::runtime_error {
  thread_start_failure() : std::runtime_error("stress: the thread factory failed on purpose") {}
};

std::uint64_t expected_value(std::uint64_t id) { return id * 0x9E3779B97F4A7C15ull + 1; }

struct one_shot_record {
  std::uint64_t id = 0;
  std::atomic<int> runs{0};
  scheduled_future<std::uint64_t> future;  // written by the owning producer only
  bool rejected = false;
  bool cancel_won = false;  // a cancel() or remove() by the test returned true
  bool removed = false;     // remove() returned true: it was queued, so it never ran
  const char* how = "";     // how it was submitted, for a violation's message
  int cancel_tries = 0;     // cancel() and remove() calls the test made on it
};

using stress::periodic_record;
using stress::violation_log;

struct outcome_counts {
  std::uint64_t ran = 0;                      // run by the pool
  std::uint64_t cancelled = 0;                // never ran: cancel, remove, shutdown policy
  std::uint64_t cancelled_while_running = 0;  // ran once, result discarded by cancel()
  std::uint64_t rejected = 0;                 // submission threw rejected_execution (or a thread start failure)
  std::uint64_t failed_thread_starts = 0;     // the flaky factory's failures (not a task outcome)
  std::uint64_t pending_ran = 0;              // returned by shutdown_now(), run by the test
  std::uint64_t pending_dropped = 0;          // returned by shutdown_now(), dropped by the test
  std::uint64_t periodic = 0;
  std::uint64_t periodic_runs = 0;
  std::uint64_t periodic_controls = 0;  // pause/resume/reschedule/trigger_now calls that changed a task
  stress::timer_counts timers;
  std::uint64_t violations = 0;

  /// Everything that went through a ledger: one-shot and periodic tasks, timer waits.
  std::uint64_t through_ledger() const { return total() + periodic + timers.waits; }
  std::uint64_t total() const { return ran + cancelled + cancelled_while_running + rejected + pending_ran + pending_dropped; }
  void add(const outcome_counts& o) {
    ran += o.ran;
    cancelled += o.cancelled;
    cancelled_while_running += o.cancelled_while_running;
    rejected += o.rejected;
    failed_thread_starts += o.failed_thread_starts;
    pending_ran += o.pending_ran;
    pending_dropped += o.pending_dropped;
    periodic += o.periodic;
    periodic_runs += o.periodic_runs;
    periodic_controls += o.periodic_controls;
    timers.add(o.timers);
    violations += o.violations;
  }
  std::string str() const {
    std::ostringstream os;
    os << "one-shots=" << total() << " ran=" << ran << " cancelled=" << cancelled
       << " cancelled_while_running=" << cancelled_while_running << " rejected=" << rejected
       << " shutdown_now_ran=" << pending_ran << " shutdown_now_dropped=" << pending_dropped
       << " failed_thread_starts=" << failed_thread_starts << " | periodic=" << periodic << " periodic_runs=" << periodic_runs
       << " periodic_controls=" << periodic_controls << " | " << timers.str()
       << " | violations=" << violations;
    return os.str();
  }
};

struct iteration_config {
  std::uint64_t seed = 0;
  bool use_shutdown_now = false;
  std::size_t one_shots_per_producer = 0;
  bool continue_periodic = false;
  bool execute_delayed = true;
  bool escalate = false;  // a shutdown() iteration where another producer later calls shutdown_now()
  std::size_t timer_waits_per_armer = 0;
  bool flaky_threads = false;      // a thread factory that fails every other call
  bool rejection_handler = false;  // a handler in place of the abort policy
};

outcome_counts run_iteration(const iteration_config& cfg) {
  std::mt19937_64 setup_rng(cfg.seed);
  auto coin = [&](double p) { return std::bernoulli_distribution(p)(setup_rng); };

  const std::size_t per_producer = cfg.one_shots_per_producer;
  std::vector<one_shot_record> one_shots(per_producer * producers);
  for (std::size_t i = 0; i < one_shots.size(); ++i) one_shots[i].id = i;
  std::vector<periodic_record> periodics(max_periodic_per_producer * producers);

  std::atomic<int> terminated_calls{0};
  scheduled_thread_pool_options o;
  o.core_pool_size = std::uniform_int_distribution<std::size_t>(1, 4)(setup_rng);
  o.continue_existing_periodic_tasks_after_shutdown = cfg.continue_periodic;
  o.execute_existing_delayed_tasks_after_shutdown = cfg.execute_delayed;
  o.remove_on_cancel = coin(0.7);
  o.allow_core_thread_timeout = coin(0.3);
  o.keep_alive = std::chrono::milliseconds(std::uniform_int_distribution<int>(1, 10)(setup_rng));
  o.terminated = [&] { terminated_calls.fetch_add(1); };
  o.error_handler = [](std::exception_ptr, const chronopool::task_view*) {};
  std::atomic<std::uint64_t> factory_calls{0};
  std::atomic<std::uint64_t> factory_failures{0};
  if (cfg.flaky_threads)
    o.thread_factory = [&](std::size_t, std::function<void()> body) -> chronopool::pool_thread {
      if (factory_calls.fetch_add(1) % 2 == 0) {  // from the first call on
        factory_failures.fetch_add(1);
        throw thread_start_failure();
      }
      return std::thread(std::move(body));
    };
  if (cfg.rejection_handler)
    o.rejection_handler = [](chronopool::rejected_task& r) {
      switch (r.task().sequence() % 3) {
        case 0:
          if (!r.is_periodic()) r.run();  // else left: dropped
          break;
        case 1: throw r.exception();
        default: break;  // left: dropped, its future cancelled
      }
    };
  const int shutdown_producer = std::uniform_int_distribution<int>(0, producers - 1)(setup_rng);
  const std::size_t shutdown_at =
      std::uniform_int_distribution<std::size_t>(per_producer / 2, per_producer - 1)(setup_rng);
  const int escalate_producer = (shutdown_producer + 1) % producers;
  const std::size_t escalate_at =
      cfg.escalate ? std::uniform_int_distribution<std::size_t>(per_producer / 2, per_producer - 1)(setup_rng)
                   : per_producer;  // never reached

  BOOST_TEST_MESSAGE("seed=" << cfg.seed << " " << (cfg.use_shutdown_now ? "shutdown_now" : "shutdown")
                             << " core=" << o.core_pool_size
                             << " continue_periodic=" << o.continue_existing_periodic_tasks_after_shutdown
                             << " execute_delayed=" << o.execute_existing_delayed_tasks_after_shutdown
                             << " remove_on_cancel=" << o.remove_on_cancel
                             << " allow_core_timeout=" << o.allow_core_thread_timeout
                             << " keep_alive=" << o.keep_alive.count() / 1'000'000 << "ms shutdown_by=" << shutdown_producer
                             << "@" << shutdown_at);
  if (cfg.escalate) BOOST_TEST_MESSAGE("  escalates: shutdown_now() by " << escalate_producer << "@" << escalate_at);
  BOOST_TEST_MESSAGE("  tasks=" << one_shots.size() << " timer waits per armer=" << cfg.timer_waits_per_armer);
  if (cfg.flaky_threads) BOOST_TEST_MESSAGE("  a thread factory that fails every other call");
  if (cfg.rejection_handler) BOOST_TEST_MESSAGE("  a rejection handler that runs, throws or drops");

  violation_log violations;
  std::mutex pending_mutex;  // shutdown_now() may be called by two producers
  std::vector<pending_task> pending;
  std::atomic<bool> stopped_by_producer{false};  // some producer called shutdown_now()
  std::string stats_at_shutdown;  // written by the shutting-down producer, read after the join
  std::atomic<std::size_t> never_accepted{0};  // accepted tasks scheduled with hours::max()
  outcome_counts counts;

  stress::timer_churn timers(cfg.seed, cfg.timer_waits_per_armer);
  timers.start();
  stress::clock_stepper stepper(cfg.seed);
  stepper.start();
  {
    scheduled_thread_pool pool(o);
    {
      std::vector<std::jthread> threads;
      for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
          std::mt19937_64 rng(cfg.seed * 1000 + static_cast<std::uint64_t>(p) + 1);
          std::uniform_int_distribution<int> percent(0, 999);
          one_shot_record* const mine = one_shots.data() + static_cast<std::size_t>(p) * per_producer;
          periodic_record* const my_periodics = periodics.data() + static_cast<std::size_t>(p) * max_periodic_per_producer;
          std::size_t periodic_made = 0;
          bool shut_down = false;
          bool escalated = false;
          auto stop_now = [&] {
            std::vector<pending_task> returned = pool.shutdown_now();
            stopped_by_producer.store(true);
            std::lock_guard lock(pending_mutex);  // read by the main thread after the join
            for (auto& t : returned) pending.push_back(std::move(t));
          };
          std::size_t made = 0;
          while (made < per_producer) {
            if (p == shutdown_producer && made == shutdown_at && !shut_down) {
              shut_down = true;
              stats_at_shutdown = chronopool::to_string(pool.stats());
              if (cfg.use_shutdown_now) {
                stop_now();
              } else {
                pool.shutdown();
              }
            }
            if (p == escalate_producer && made == escalate_at && !escalated) {
              escalated = true;
              stop_now();
            }
            // Bursty pacing: the pool alternately falls behind and catches
            // up, so threads idle, retire and restart.
            if (percent(rng) < pause_per_mille)
              std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(rng)));
            const int r = percent(rng);
            if (r < 6 && periodic_made < max_periodic_per_producer) {
              periodic_record& rec = my_periodics[periodic_made++];
              rec.fixed_rate = (r % 2 == 0);
              rec.period = std::chrono::milliseconds(std::uniform_int_distribution<int>(1, 5)(rng));
              chronopool::periodic_options po;
              rec.policy = po.missed_ticks = static_cast<chronopool::missed_tick_policy>(std::uniform_int_distribution<int>(0, 2)(rng));
              if (percent(rng) < 300) po.jitter = 0.5;
              if (percent(rng) < 200) rec.max_runs = po.max_runs = std::uniform_int_distribution<std::uint64_t>(1, 20)(rng);
              auto body = [&rec] { rec.run(); };
              // @p at_least: the initial delay as the ledger counts it (clamped
              // to [0, max]; converting hours::max() itself would overflow).
              auto submit = [&](auto initial, periodic_record::clock::duration at_least) {
                rec.initial_delay = at_least;
                rec.submitted = periodic_record::clock::now();
                rec.future = rec.fixed_rate ? pool.schedule_at_fixed_rate(initial, rec.period, body, po)
                                            : pool.schedule_with_fixed_delay(initial, rec.period, body, po);
              };
              try {
                switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
                  case 0: submit(-std::chrono::milliseconds(1), 0ms); break;
                  case 1: submit(std::chrono::microseconds(0), 0ms); break;
                  case 2:  // too large to represent: never runs, never overflows
                    rec.never = true;
                    submit(std::chrono::hours::max(), periodic_record::clock::duration::max());
                    break;
                  default: {
                    const std::chrono::microseconds d(std::uniform_int_distribution<int>(0, 5000)(rng));
                    submit(d, d);
                  }
                }
              } catch (const rejected_execution&) {
                rec.rejected = true;
              } catch (const thread_start_failure&) {
                rec.rejected = true;
              }
              continue;
            }
            // Victims: half of the time one of the latest 16 (likely running).
            auto pick = [&] {
              const std::size_t from = (r % 4 < 2 && made > 16) ? made - 16 : 0;
              return std::uniform_int_distribution<std::size_t>(from, made - 1)(rng);
            };
            if (r < 50 && made > 0) {  // cancel a random earlier one-shot
              one_shot_record& victim = mine[pick()];
              ++victim.cancel_tries;
              if (victim.future.valid() && victim.future.cancel(r % 2 == 0)) victim.cancel_won = true;
              continue;
            }
            if (r < 60 && made > 0) {  // remove a random earlier one-shot
              one_shot_record& victim = mine[pick()];
              ++victim.cancel_tries;
              if (victim.future.valid() && pool.remove(victim.future)) {
                victim.cancel_won = true;
                victim.removed = true;
              }
              continue;
            }
            if (r < 62 && periodic_made > 0) {  // cancel a random periodic task
              periodic_record& victim = my_periodics[std::uniform_int_distribution<std::size_t>(0, periodic_made - 1)(rng)];
              victim.future.cancel(r % 2 == 0);
              continue;
            }
            if (r >= 65 && r < 75 && periodic_made > 0) {
              // Control a random periodic task of this producer's: each call
              // races the task's runs on the pool's threads.
              periodic_record& rec = my_periodics[std::uniform_int_distribution<std::size_t>(0, periodic_made - 1)(rng)];
              if (!rec.future.valid()) continue;
              bool changed = false;
              switch (r % 5) {
                case 0:
                  changed = rec.future.pause();
                  if (changed && rec.future.paused()) {  // taken out of the queue: no run may follow
                    rec.runs_when_paused = rec.runs.load();
                    rec.held_paused = true;
                  }
                  break;
                case 1:
                  changed = rec.future.resume();
                  if (changed) rec.held_paused = false;
                  break;
                case 2:
                  changed = rec.future.reschedule(std::chrono::milliseconds(std::uniform_int_distribution<int>(1, 5)(rng)));
                  break;
                case 3: changed = rec.future.trigger_now(); break;
                default: changed = rec.future.reschedule_next(periodic_record::clock::now()); break;
              }
              if (changed) {
                rec.controlled = true;
                ++rec.controls;
              }
              continue;
            }
            if (r < 64) {
              try {
                pool.set_core_pool_size(std::uniform_int_distribution<std::size_t>(1, 4)(rng));
              } catch (const thread_start_failure&) {
                // Growing starts threads for queued work; the size changed either way.
              }
              continue;
            }
            if (r < 65) {
              pool.purge();
              continue;
            }

            // A one-shot task.
            one_shot_record& rec = mine[made++];
            auto plain = [&rec] {
              rec.runs.fetch_add(1);
              return expected_value(rec.id);
            };
            auto stoppable = [&rec](std::stop_token st) {
              rec.runs.fetch_add(1);
              // Stay running a little (no yield: on 2 cores that would hand
              // the CPU to a producer for a whole time slice).
              for (int i = 0; i < 20000 && !st.stop_requested(); ++i) {
              }
              return expected_value(rec.id);
            };
            const bool with_token = (r % 10 == 0);
            const int kind = std::uniform_int_distribution<int>(0, 19)(rng);
            try {
              if (kind < 5) {
                rec.how = "submit";
                rec.future = with_token ? pool.submit(stoppable) : pool.submit(plain);
              } else if (kind < 7) {
                rec.how = "schedule(0)";
                rec.future = with_token ? pool.schedule(0ms, stoppable) : pool.schedule(0ms, plain);
              } else if (kind < 9) {
                const auto d = -std::chrono::microseconds(std::uniform_int_distribution<int>(1, 1000)(rng));
                rec.how = "schedule(negative)";
                rec.future = with_token ? pool.schedule(d, stoppable) : pool.schedule(d, plain);
              } else if (kind < 19) {
                const auto d = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 20'000)(rng));
                if (r % 3 == 0) {  // at a wall-clock instant: follows the stepper's steps
                  const auto at = chronopool::detail::system_now() + d;
                  rec.how = "schedule_at(system instant within 20 ms)";
                  rec.future = with_token ? pool.schedule_at(at, stoppable) : pool.schedule_at(at, plain);
                  stepper.wall_tasks.fetch_add(1);
                } else {
                  rec.how = "schedule(within 20 ms)";
                  rec.future = with_token ? pool.schedule(d, stoppable) : pool.schedule(d, plain);
                }
              } else if (r % 2 == 0) {
                rec.how = "schedule(hours::max())";
                rec.future = with_token ? pool.schedule(std::chrono::hours::max(), stoppable)
                                        : pool.schedule(std::chrono::hours::max(), plain);
                never_accepted.fetch_add(1);
              } else {
                using steady_duration = std::chrono::steady_clock::duration;
                rec.how = "schedule(duration::max())";
                rec.future = with_token ? pool.schedule(steady_duration::max(), stoppable)
                                        : pool.schedule(steady_duration::max(), plain);
                never_accepted.fetch_add(1);
              }
            } catch (const rejected_execution&) {
              rec.rejected = true;
            } catch (const thread_start_failure&) {
              rec.rejected = true;  // no thread ran and none could start: not accepted
            }
            // Sometimes wait (briefly) for a stoppable task to start, then
            // cancel it while it runs: its token is asked to stop.
            if (with_token && kind < 5 && !rec.rejected && percent(rng) < 200) {
              const auto limit = std::chrono::steady_clock::now() + 200us;
              while (rec.runs.load() == 0 && std::chrono::steady_clock::now() < limit) {
              }
              if (rec.future.cancel(true)) rec.cancel_won = true;
            }
          }
          // A task paused out of the queue and still paused (not resumed,
          // not swept by a shutdown) has not run since the pause.
          for (std::size_t i = 0; i < periodic_made; ++i) {
            const periodic_record& rec = my_periodics[i];
            if (rec.held_paused && rec.future.paused() && rec.runs.load() != rec.runs_when_paused)
              violations.add("a paused periodic task ran while paused");
          }
        });
      }
    }  // producers joined
    stepper.stop();  // back at the real clock for the drain
    BOOST_TEST_MESSAGE("  wall-clock tasks=" << stepper.wall_tasks.load() << " clock steps=" << stepper.steps());
    BOOST_TEST_MESSAGE("  stats at shutdown: " << stats_at_shutdown);
    BOOST_TEST_MESSAGE("  stats after producers: " << chronopool::to_string(pool.stats()));

    // Let the pool drain. After shutdown() without periodic continuation and
    // without a "never" task left queued, it must terminate on its own.
    const bool must_drain_alone = !stopped_by_producer.load() && !o.continue_existing_periodic_tasks_after_shutdown &&
                                  (!o.execute_existing_delayed_tasks_after_shutdown || never_accepted.load() == 0);
    if (must_drain_alone) {
      if (!pool.wait_for_termination(30s)) violations.add("pool did not terminate after shutdown()");
    } else {
      pool.wait_for_termination(30ms);
    }
    std::vector<pending_task> rest = pool.shutdown_now();
    if (stopped_by_producer.load() && !rest.empty())
      violations.add("a second shutdown_now() returned " + std::to_string(rest.size()) + " tasks");
    for (auto& t : rest) pending.push_back(std::move(t));
    BOOST_REQUIRE_MESSAGE(pool.wait_for_termination(30s), "the pool did not terminate after shutdown_now()");
    BOOST_TEST(pool.is_terminated());
    BOOST_TEST(terminated_calls.load() == 1);
    BOOST_TEST(pool.pool_size() == 0u);
    BOOST_TEST(pool.queued_count() == 0u);
    BOOST_TEST(pool.active_count() == 0u);
  }  // pool destroyed; its pending tasks are ours alone now
  for (periodic_record& rec : periodics) rec.runs_by_pool = rec.runs.load();
  counts.timers = timers.stop(violations);
  counts.failed_thread_starts = factory_failures.load();

  // Map every pending task to its record.
  std::unordered_map<task_id, one_shot_record*> by_id;
  for (auto& rec : one_shots)
    if (rec.future.valid()) by_id.emplace(rec.future.id(), &rec);
  std::unordered_map<task_id, periodic_record*> periodic_by_id;
  for (auto& rec : periodics)
    if (rec.future.valid()) periodic_by_id.emplace(rec.future.id(), &rec);

  enum class pending_fate : std::uint8_t { none, ran, dropped };
  std::unordered_map<const one_shot_record*, pending_fate> fates;
  std::unordered_set<task_id> seen;
  std::size_t index = 0;
  for (pending_task& t : pending) {
    const bool run_it = (index++ % 2 == 0);
    if (!t.valid()) {
      violations.add("shutdown_now() returned an empty pending_task");
      continue;
    }
    if (!seen.insert(t.id()).second) violations.add("shutdown_now() returned a task twice");
    if (auto it = periodic_by_id.find(t.id()); it != periodic_by_id.end()) {
      if (run_it) {
        const int before = it->second->runs.load();
        t.run();
        if (!it->second->future.cancelled() && it->second->runs.load() != before + 1)
          violations.add("running a pending periodic task did not run it once");
      }
      continue;  // unrun ones are dropped with the vector
    }
    auto it = by_id.find(t.id());
    if (it == by_id.end()) {
      violations.add("shutdown_now() returned a task the test never submitted");
      continue;
    }
    one_shot_record& rec = *it->second;
    if (rec.runs.load() != 0) violations.add("shutdown_now() returned task " + std::to_string(rec.id) + " that had started");
    if (rec.future.done() && !(rec.future.cancelled() && rec.cancel_won))
      violations.add("shutdown_now() returned task " + std::to_string(rec.id) + " that was already done");
    if (run_it) {
      if (t.run()) violations.add("pending task " + std::to_string(rec.id) + " threw");
      fates[&rec] = pending_fate::ran;
    } else {
      pending_task dropped = std::move(t);
      fates[&rec] = pending_fate::dropped;
    }
  }
  pending.clear();  // drops the rest

  // Every one-shot task ended exactly once.
  std::size_t unclassified = 0;  // flagged as a violation instead of counted
  for (const one_shot_record& rec : one_shots) {
    const int runs = rec.runs.load();
    const std::string id = "task " + std::to_string(rec.id);
    if (runs > 1) violations.add(id + " ran " + std::to_string(runs) + " times");
    if (rec.rejected) {
      if (rec.future.valid()) violations.add(id + " was rejected but has a future");
      if (runs != 0) violations.add(id + " was rejected but ran");
      ++counts.rejected;
      continue;
    }
    if (!rec.future.valid()) {
      violations.add(id + " has no future and was not rejected");
      ++unclassified;
      continue;
    }
    if (!rec.future.done()) {
      violations.add(id + " was lost: its future never completed (" + rec.how +
                     ", " + std::to_string(rec.cancel_tries) + " cancel or remove calls, " +
                     "started " + std::to_string(runs) + " times)");
      ++unclassified;
      continue;
    }
    const auto fate_it = fates.find(&rec);
    const pending_fate fate = fate_it == fates.end() ? pending_fate::none : fate_it->second;
    if (rec.future.cancelled()) {
      if (runs == 0) {
        if (fate == pending_fate::dropped) {
          ++counts.pending_dropped;
        } else {
          ++counts.cancelled;  // by the test (also before a pending run), or by a shutdown policy
          if (fate == pending_fate::ran && !rec.cancel_won) violations.add(id + ": pending run did nothing");
        }
      } else if (rec.cancel_won && !rec.removed && fate == pending_fate::none) {
        ++counts.cancelled_while_running;
      } else {
        violations.add(id + " is cancelled but ran");
        ++unclassified;
      }
      continue;
    }
    // Not cancelled: it must have succeeded exactly once with its value.
    bool failed = false;
    try {
      if (rec.future.get() != expected_value(rec.id)) violations.add(id + " returned a wrong value");
    } catch (...) {
      failed = true;
      violations.add(id + " failed");
    }
    if (failed) {
      ++unclassified;
      continue;
    }
    if (runs != 1) {
      violations.add(id + " succeeded with " + std::to_string(runs) + " runs");
      ++unclassified;
      continue;
    }
    if (rec.removed) violations.add(id + " ran although remove() returned true");
    if (fate == pending_fate::ran) {
      ++counts.pending_ran;
    } else if (fate == pending_fate::dropped) {
      violations.add(id + " was dropped but its future succeeded");
      ++unclassified;
    } else {
      ++counts.ran;
    }
  }

  for (const periodic_record& rec : periodics) {
    if (!rec.future.valid() && !rec.rejected) continue;  // never made
    ++counts.periodic;
    counts.periodic_runs += static_cast<std::uint64_t>(rec.runs.load());
    counts.periodic_controls += static_cast<std::uint64_t>(rec.controls);
    if (const std::string v = rec.check(); !v.empty()) violations.add(v);
    if (!rec.rejected && !rec.future.done()) violations.add("a periodic future is not done at the end");
  }

  counts.violations = violations.count();
  for (const auto& v : violations.first()) BOOST_TEST_MESSAGE("violation: " << v);
  BOOST_TEST(violations.count() == 0u);
  BOOST_TEST(counts.total() + unclassified == one_shots.size());  // every task counted once
  return counts;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stress)

BOOST_AUTO_TEST_CASE(ledger_every_task_ends_exactly_once) {
  const double scale = stress::scale();
  const auto total = static_cast<std::size_t>(static_cast<double>(default_total_one_shots) * scale);
  const std::size_t per_producer = std::max<std::size_t>(50, total / (producers * iterations));
  const auto timer_total = static_cast<std::size_t>(static_cast<double>(default_total_timer_waits) * scale);
  const std::size_t waits_per_armer = std::max<std::size_t>(50, timer_total / (2 * iterations));
  BOOST_TEST_MESSAGE(stress::build_name() << " build, scale " << scale << ": " << per_producer * producers * iterations
                                          << " one-shot tasks from " << producers << " producers in " << iterations
                                          << " iterations");
  const auto start = std::chrono::steady_clock::now();
  outcome_counts all;
  for (int i = 0; i < iterations; ++i) {
    iteration_config cfg;
    cfg.seed = stress::base_seed() + static_cast<std::uint64_t>(i);
    // Even iterations shut down, odd ones shut down now; over the even ones
    // the two shutdown policies take all four combinations.
    cfg.use_shutdown_now = (i % 2 == 1);
    cfg.continue_periodic = ((i / 2) % 2 == 1);
    cfg.execute_delayed = ((i / 4) % 2 == 1);
    cfg.escalate = (i % 4 == 2);  // two of the shutdown() iterations end in a racing shutdown_now()
    cfg.one_shots_per_producer = per_producer;
    cfg.timer_waits_per_armer = waits_per_armer;
    cfg.flaky_threads = (i % 3 == 0);      // iterations 0, 3, 6: both kinds of shutdown
    cfg.rejection_handler = (i % 3 == 1);  // iterations 1, 4, 7
    BOOST_TEST_CONTEXT("iteration " << i << " seed " << cfg.seed) {
      const outcome_counts c = run_iteration(cfg);
      BOOST_TEST_MESSAGE("  " << c.str());
      all.add(c);
    }
  }
  const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST_MESSAGE("total: " << all.str() << " in " << secs << " s");
  BOOST_TEST_MESSAGE("through the ledger: " << all.through_ledger() << " (" << all.total() << " one-shot tasks, "
                                            << all.periodic << " periodic tasks with " << all.periodic_runs
                                            << " runs, " << all.timers.waits << " timer waits) in " << secs << " s");
  BOOST_TEST(all.violations == 0u);
  BOOST_TEST(all.total() == per_producer * producers * iterations);
  // The mix must actually exercise every outcome.
  BOOST_TEST(all.ran > 0u);
  BOOST_TEST(all.cancelled > 0u);
  BOOST_TEST(all.rejected > 0u);
  BOOST_TEST(all.failed_thread_starts > 0u);
  BOOST_TEST(all.pending_ran > 0u);
  BOOST_TEST(all.pending_dropped > 0u);
  BOOST_TEST(all.periodic_runs > 0u);
  BOOST_TEST(all.periodic_controls > 0u);
  BOOST_TEST(all.timers.succeeded > 0u);
  BOOST_TEST(all.timers.aborted > 0u);
  BOOST_TEST(all.timers.rearmed_in_handler > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

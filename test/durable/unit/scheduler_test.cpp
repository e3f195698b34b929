// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::durable::scheduler against a real Redis: fires run on the
// work executor with their fire id and fencing token, periodic schedules
// keep to their grid without overlapping, failures are retried, cancelled
// schedules stop, schedules survive the scheduler, leases lost stop handlers.
#include "../../support/quiet_use_future.hpp"  // first: see there

#include <boost/test/unit_test.hpp>

#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "print_error.hpp"
#include "stall_proxy.hpp"
#include "../../support/bounded_wait.hpp"
#include "sync_redis.hpp"
#include "regression_support.hpp"
#include "test_redis.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
using namespace std::chrono_literals;

namespace {

using chronopool::durable::test::error_of;
using chronopool::durable::test::wait_until;

std::string scheduler_namespace() {
  static std::mt19937_64 rng{std::random_device{}()};
  return "sched-" + std::to_string(rng());
}

cd::scheduler_options scheduler_fast_options(const std::string& ns) {
  cd::scheduler_options o;
  o.redis = cd::test::test_redis_options();
  o.name_space = ns;
  o.partitions = cd::test::test_partitions();
  o.lease = 2s;
  o.max_poll = 200ms;
  o.failure.initial_backoff = 50ms;
  o.failure.max_backoff = 50ms;
  o.stop_timeout = 2s;
  return o;
}

// Records every fire a handler sees.
struct fire_log {
  std::mutex m;
  std::vector<cd::fire_context> fires;
  void add(const cd::fire_context& c) {
    std::lock_guard lk(m);
    fires.push_back(c);
  }
  std::size_t size() {
    std::lock_guard lk(m);
    return fires.size();
  }
  std::vector<cd::fire_context> copy() {
    std::lock_guard lk(m);
    return fires;
  }
};

// A handler for the task "long" that records that it started and then waits
// up to `limit` for its stop token: the lease-loss tests watch both flags.
struct stop_watch {
  std::atomic<bool> started{false};
  std::atomic<bool> saw_stop{false};
  void register_on(cd::scheduler& s, std::chrono::milliseconds limit) {
    s.register_handler("long", [this, limit](const cd::fire_context& c) {
      started = true;
      saw_stop = wait_until([&] { return c.stop.stop_requested(); }, limit);
    });
  }
  /// Starts @p s, schedules one "long" fire as @p id, and waits until it runs.
  bool start_one_fire(cd::scheduler& s, const char* id) {
    s.start();
    s.async_schedule(id, "long", "", 0ms, boost::asio::use_future).get();
    return wait_until([&] { return started.load(); });
  }
};

struct scheduler_fixture {
  std::string ns = scheduler_namespace();
  chronopool::scheduled_thread_pool pool{2};
  ~scheduler_fixture() {
    pool.shutdown();
    pool.join();
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_scheduler, scheduler_fixture)

BOOST_AUTO_TEST_CASE(a_one_shot_fires_once_on_the_work_executor_with_its_fire_id_and_token) {
  fire_log log;
  std::atomic<bool> on_pool{false};
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("mail", [&](const cd::fire_context& c) {
    on_pool = pool.running_in_this_thread();
    log.add(c);
  });
  s.start();
  auto due = s.async_schedule("m1", "mail", "to:bob", 20ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1; }));
  BOOST_TEST(wait_until([&] { return s.stats().acked == 1; }));
  std::this_thread::sleep_for(300ms);
  auto fires = log.copy();
  BOOST_TEST_REQUIRE(fires.size() == 1u);  // and only once
  const auto& f = fires[0];
  BOOST_TEST(on_pool.load());
  BOOST_TEST(f.schedule_id == "m1");
  BOOST_TEST(f.task == "mail");
  BOOST_TEST(f.payload == "to:bob");
  BOOST_TEST((f.due == due));
  const auto due_ms = std::chrono::duration_cast<std::chrono::milliseconds>(due.time_since_epoch()).count();
  BOOST_TEST(f.fire_id == "m1@" + std::to_string(due_ms));
  BOOST_TEST(f.token > 0u);
  BOOST_TEST(f.attempt == 1u);
  BOOST_TEST(!f.stop.stop_requested());
  // A one-shot is gone after its ack: cancelling finds nothing.
  BOOST_TEST(!s.async_cancel("m1", boost::asio::use_future).get());
}

BOOST_AUTO_TEST_CASE(a_fixed_rate_schedule_fires_on_its_grid_without_overlapping_itself) {
  fire_log log;
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("tick", [&](const cd::fire_context& c) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(5ms);
    log.add(c);
    inside.fetch_sub(1);
  });
  s.start();
  auto first = s.async_schedule_at_fixed_rate("t", "tick", "", 10ms, 40ms, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() >= 6; }));
  BOOST_TEST(s.async_cancel("t", boost::asio::use_future).get());
  auto fires = log.copy();
  BOOST_TEST(!overlapped.load());
  std::set<std::string> ids;
  for (std::size_t i = 0; i < fires.size(); ++i) {
    ids.insert(fires[i].fire_id);
    BOOST_TEST(((fires[i].due - first) % 40ms == 0ms));  // on the grid
    if (i > 0) {
      BOOST_TEST((fires[i].due > fires[i - 1].due));
      BOOST_TEST(fires[i].token > fires[i - 1].token);
    }
  }
  BOOST_TEST(ids.size() == fires.size());  // no occurrence twice
}

BOOST_AUTO_TEST_CASE(a_fixed_delay_schedule_spaces_fires_by_the_delay_after_each_ack) {
  fire_log log;
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("slow", [&](const cd::fire_context& c) {
    log.add(c);
    std::this_thread::sleep_for(60ms);
  });
  s.start();
  s.async_schedule_with_fixed_delay("d", "slow", "", 0ms, 30ms, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() >= 4; }));
  s.async_cancel("d", boost::asio::use_future).get();
  auto fires = log.copy();
  for (std::size_t i = 1; i < fires.size(); ++i)
    BOOST_TEST((fires[i].due - fires[i - 1].due >= 90ms));  // run time + delay
}

BOOST_AUTO_TEST_CASE(a_handler_that_throws_gives_the_fire_back_and_it_runs_again) {
  auto o = scheduler_fast_options(ns);
  std::atomic<int> errors{0};
  o.on_handler_error = [&](const cd::fire_context&, std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::runtime_error&) {
      ++errors;
    }
  };
  fire_log log;
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("flaky", [&](const cd::fire_context& c) {
    log.add(c);
    if (c.attempt < 3) throw std::runtime_error("not yet");
  });
  s.start();
  s.async_schedule("f", "flaky", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return s.stats().acked == 1; }));
  auto fires = log.copy();
  BOOST_TEST_REQUIRE(fires.size() == 3u);
  BOOST_TEST(errors.load() == 2);
  BOOST_TEST(s.stats().released == 2u);
  for (std::size_t i = 0; i < fires.size(); ++i) {
    BOOST_TEST(fires[i].attempt == i + 1);
    BOOST_TEST(fires[i].fire_id == fires[0].fire_id);  // same occurrence
    if (i > 0) BOOST_TEST(fires[i].token > fires[i - 1].token);
  }
}

BOOST_AUTO_TEST_CASE(schedules_outlive_the_scheduler_that_created_them) {
  {
    cd::scheduler writer(pool.get_executor(), scheduler_fast_options(ns));  // never started: a pure client
    writer.async_schedule("later", "job", "kept", 300ms, boost::asio::use_future).get();
  }
  fire_log log;
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("job", [&](const cd::fire_context& c) { log.add(c); });
  s.start();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1; }));
  BOOST_TEST(log.copy()[0].payload == "kept");
}

BOOST_AUTO_TEST_CASE(ids_are_unique_unless_replace_is_asked_for) {
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.async_schedule("dup", "job", "1", 1h, boost::asio::use_future).get();
  BOOST_TEST((error_of([&](auto h) { s.async_schedule("dup", "job", "2", 1h, std::move(h)); }) ==
              cd::error::schedule_exists));
  cd::schedule_options replace;
  replace.replace = true;
  auto due = s.async_schedule_at_fixed_rate("dup", "job", "3", 2h, 1h, replace, boost::asio::use_future).get();
  BOOST_TEST((due > std::chrono::system_clock::now() + 90min));
  BOOST_TEST(s.async_cancel("dup", boost::asio::use_future).get());
}

BOOST_AUTO_TEST_CASE(completions_run_on_the_handlers_associated_executor_and_keep_it_busy) {
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  boost::asio::io_context io;
  bool existed = true;
  bool on_io = false;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        co_await s.async_schedule("co", "job", "", 1h, boost::asio::use_awaitable);
        existed = co_await s.async_cancel("co", boost::asio::use_awaitable);
        on_io = io.get_executor().running_in_this_thread();
        co_return;
      },
      boost::asio::detached);
  io.run();  // returns only once both operations completed: they count as work
  BOOST_TEST(existed);
  BOOST_TEST(on_io);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_before_anything_is_sent) {
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  BOOST_CHECK_THROW(s.async_schedule("", "job", "", 1s, boost::asio::use_future), std::invalid_argument);
  BOOST_CHECK_THROW(s.async_schedule("a", "", "", 1s, boost::asio::use_future), std::invalid_argument);
  BOOST_CHECK_THROW(s.async_schedule_at_fixed_rate("a", "job", "", 0s, 0s, {}, boost::asio::use_future),
                    std::invalid_argument);
  BOOST_CHECK_THROW(s.async_schedule_with_fixed_delay("a", "job", "", 0s, -5ms, {}, boost::asio::use_future),
                    std::invalid_argument);
  BOOST_CHECK_THROW(s.async_schedule_at_fixed_rate("a", "job", "", 0s, 500us, {}, boost::asio::use_future),
                    std::invalid_argument);
  cd::schedule_options zero_catch_up;
  zero_catch_up.misfire = cd::misfire_policy::catch_up;
  zero_catch_up.catch_up_max = 0;
  BOOST_CHECK_THROW(s.async_schedule_at_fixed_rate("a", "job", "", 0s, 1s, zero_catch_up, boost::asio::use_future),
                    std::invalid_argument);
  BOOST_CHECK_THROW(s.async_cancel("", boost::asio::use_future), std::invalid_argument);
  BOOST_CHECK_THROW(s.register_handler("", [](const cd::fire_context&) {}), std::invalid_argument);
  BOOST_CHECK_THROW(s.register_handler("x", nullptr), std::invalid_argument);
  auto o = scheduler_fast_options(ns);
  o.name_space.clear();
  BOOST_CHECK_THROW(cd::scheduler(pool.get_executor(), o), std::invalid_argument);
  o = scheduler_fast_options(ns);
  o.max_in_flight = 0;
  BOOST_CHECK_THROW(cd::scheduler(pool.get_executor(), o), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_delay_of_duration_max_means_never_and_does_not_wrap) {
  fire_log log;
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("job", [&](const cd::fire_context& c) { log.add(c); });
  s.start();
  auto never = s.async_schedule("never", "job", "", std::chrono::nanoseconds::max(), boost::asio::use_future).get();
  auto hours = s.async_schedule("hours", "job", "", std::chrono::hours::max(), boost::asio::use_future).get();
  s.async_schedule("soon", "job", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1; }));
  BOOST_TEST(log.copy()[0].schedule_id == "soon");  // "never" did not wrap to the past
  BOOST_TEST((never > std::chrono::system_clock::now() + std::chrono::hours(24 * 365 * 100)));
  BOOST_TEST((hours >= never));
}

BOOST_AUTO_TEST_CASE(a_next_event_of_never_leaves_the_claim_loop_waiting_without_overflow) {
  // With only "never" queued the claim loop's next event is 2^50 ms away
  // (hours::max() saturates there); its wait must saturate, not overflow
  // the clock's nanoseconds (UBSan aborts on the overflow).
  fire_log log;
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("job", [&](const cd::fire_context& c) { log.add(c); });
  s.start();
  s.async_schedule("never", "job", "", std::chrono::hours::max(), boost::asio::use_future).get();
  std::this_thread::sleep_for(50ms);  // a claim round sees only "never"
  s.async_schedule("soon", "job", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() == 1; }));
  BOOST_TEST(log.copy()[0].schedule_id == "soon");
}

BOOST_AUTO_TEST_CASE(a_fire_for_a_task_without_handler_here_is_left_for_a_process_that_has_one) {
  auto o = scheduler_fast_options(ns);
  o.failure.max_attempts = 100;  // each give-back is an attempt: do not dead-letter it meanwhile
  cd::scheduler without(pool.get_executor(), o);
  without.start();
  without.async_schedule("orphan", "elsewhere", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return without.stats().no_handler >= 1; }));
  cd::scheduler with(pool.get_executor(), o);
  fire_log log;
  with.register_handler("elsewhere", [&](const cd::fire_context& c) { log.add(c); });
  with.start();
  BOOST_TEST_REQUIRE(wait_until([&] { return log.size() >= 1; }));
  BOOST_TEST(log.copy()[0].attempt >= 2u);
}

BOOST_AUTO_TEST_CASE(a_handler_whose_lease_is_lost_is_asked_to_stop_and_its_ack_is_rejected) {
  auto o = scheduler_fast_options(ns);
  o.lease = 600ms;  // extended every 200 ms: three chances before it runs out
  stop_watch w;  // before the scheduler: it outlives every run of the handler
  cd::scheduler s(pool.get_executor(), o);
  w.register_on(s, 10s);
  BOOST_TEST_REQUIRE(w.start_one_fire(s, "l"));
  std::this_thread::sleep_for(1500ms);  // well past the lease: extension kept it
  BOOST_TEST(s.stats().extended >= 3u);
  BOOST_TEST(!w.saw_stop.load());
  // Another process supersedes the lease: delete it and claim the fire anew.
  cd::test::sync_redis redis(o.redis);
  const auto ks = cd::test::keys_of(o, "l");
  redis.exec({"ZADD", ks.prefix() + "inflight", "0", "l"});  // as if it had expired
  auto stolen = redis.exec(cd::detail::claim_call(ks, "thief", 60000, 1));
  BOOST_TEST_REQUIRE(stolen.elements.size() == 4u);  // now, next event, epoch, the fire
  BOOST_TEST_REQUIRE(wait_until([&] { return w.saw_stop.load(); }));
  BOOST_TEST(wait_until([&] { return s.stats().stale_acks == 1; }));
  BOOST_TEST(s.stats().leases_lost == 1u);
  BOOST_TEST(s.stats().acked == 0u);
}

BOOST_AUTO_TEST_CASE(a_handler_is_asked_to_stop_when_its_lease_cannot_be_extended_in_time) {
  // Redis is reachable only through a proxy that is then stalled: nothing is
  // closed, nothing answers. Once the lease has run out locally, the fire may
  // run elsewhere, so its handler must be told.
  chronopool::durable::chaos::stall_proxy proxy(cd::test::test_redis_options().port);
  auto o = scheduler_fast_options(ns);
  o.redis.port = proxy.port();
  o.redis.request_timeout = 200ms;
  o.redis.connect_timeout = 200ms;
  o.lease = 600ms;
  stop_watch w;  // before the scheduler: it outlives every run of the handler
  cd::scheduler s(pool.get_executor(), o);
  w.register_on(s, 5s);
  BOOST_TEST_REQUIRE(w.start_one_fire(s, "p"));
  proxy.set_stalled(true);
  BOOST_TEST(wait_until([&] { return w.saw_stop.load(); }, 5s));
  BOOST_TEST(s.stats().leases_lost >= 1u);
  proxy.set_stalled(false);
}

BOOST_AUTO_TEST_CASE(two_schedulers_share_a_namespace_and_each_tick_runs_once) {
  auto o = scheduler_fast_options(ns);
  cd::scheduler a(pool.get_executor(), o);
  cd::scheduler b(pool.get_executor(), o);
  std::mutex m;
  std::map<std::string, std::set<std::string>> by_fire;  // fire id -> owners that ran it
  auto handler = [&](const char* who) {
    return [&, who](const cd::fire_context& c) {
      std::lock_guard lk(m);
      by_fire[c.fire_id].insert(who);
    };
  };
  a.register_handler("tick", handler("a"));
  b.register_handler("tick", handler("b"));
  a.start();
  b.start();
  a.async_schedule_at_fixed_rate("shared", "tick", "", 0ms, 25ms, {}, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] {
    std::lock_guard lk(m);
    return by_fire.size() >= 20;
  }));
  a.async_cancel("shared", boost::asio::use_future).get();
  a.stop();
  b.stop();
  std::lock_guard lk(m);
  for (const auto& [id, owners] : by_fire) BOOST_TEST(owners.size() == 1u, id);
  const auto total = a.stats().acked + b.stats().acked;
  BOOST_TEST(total == by_fire.size());
  BOOST_TEST(a.stats().stale_acks + b.stats().stale_acks == 0u);
}

BOOST_AUTO_TEST_CASE(a_new_earliest_schedule_wakes_a_sleeping_scheduler_by_pub_sub) {
  auto o = scheduler_fast_options(ns);
  o.max_poll = 30s;  // polling alone would not find it in time
  cd::scheduler worker(pool.get_executor(), o);
  fire_log log;
  worker.register_handler("job", [&](const cd::fire_context& c) { log.add(c); });
  worker.start();
  std::this_thread::sleep_for(300ms);  // subscribed and asleep on an empty namespace
  cd::scheduler client(pool.get_executor(), o);
  client.async_schedule("wake", "job", "", 100ms, boost::asio::use_future).get();
  BOOST_TEST(wait_until([&] { return log.size() == 1; }, 5s));
}

BOOST_AUTO_TEST_CASE(stop_is_refused_from_a_handler_and_idempotent_elsewhere) {
  std::atomic<int> outcome{0};
  cd::scheduler s(pool.get_executor(), scheduler_fast_options(ns));
  s.register_handler("job", [&](const cd::fire_context&) {
    try {
      s.stop();
      outcome = 1;
    } catch (const std::logic_error&) {
      outcome = 2;
    }
  });
  s.start();
  s.async_schedule("x", "job", "", 0ms, boost::asio::use_future).get();
  BOOST_TEST_REQUIRE(wait_until([&] { return outcome.load() != 0; }));
  BOOST_TEST(outcome.load() == 2);
  s.stop();
  s.stop();
  BOOST_TEST((error_of([&](auto h) { s.async_schedule("y", "job", "", 0ms, std::move(h)); }) ==
              cd::error::shut_down));
}

BOOST_AUTO_TEST_SUITE_END()

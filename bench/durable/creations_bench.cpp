// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable-bench --creations: schedule creations per second
// through the public API (chronopool::durable::scheduler), on a private
// redis-server: one request at a time (each async_schedule_* call waited
// for before the next, what a deploy loop does), against
// async_upsert_schedules with all of them in one call (one cp_put_many_v5
// per 500 schedules). Fixed-rate schedules, and cron schedules in a time
// zone (whose first instant is computed here from Redis's TIME).
#include "creations_bench.hpp"
#include "server_info.hpp"

#include <redis_server.hpp>

#include <chronopool/durable/scheduler.hpp>

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace chronopool::bench_durable {

namespace {

namespace cd = chronopool::durable;
using steady = std::chrono::steady_clock;

double creations_per_s(std::size_t n, steady::time_point t0) {
  return static_cast<double>(n) / std::chrono::duration<double>(steady::now() - t0).count();
}

cd::schedule_spec creations_spec(const std::string& id, bool cron) {
  cd::schedule_spec s;
  s.id = id;
  s.task = "bench";
  s.payload = std::string(32, 'p');
  if (cron) {
    s.kind = cd::schedule_kind::cron;
    s.cron = "0 2 * * *";
    s.time_zone = "Europe/Berlin";
  } else {
    s.kind = cd::schedule_kind::fixed_rate;
    s.delay = std::chrono::hours(1);
    s.period = std::chrono::hours(24);
  }
  return s;
}

double single_at_a_time(cd::scheduler& s, const std::string& prefix, std::size_t n, bool cron) {
  const auto t0 = steady::now();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    if (cron)
      s.async_schedule_cron(id, "bench", std::string(32, 'p'), "0 2 * * *", "Europe/Berlin", {},
                            boost::asio::use_future)
          .get();
    else
      s.async_schedule_at_fixed_rate(id, "bench", std::string(32, 'p'), std::chrono::hours(1),
                                     std::chrono::hours(24), {}, boost::asio::use_future)
          .get();
  }
  return creations_per_s(n, t0);
}

// `window` single requests in flight at once (each completion sends the
// next): what a deploy needs without a bulk call to get near its rate.
double in_flight(cd::scheduler& s, const std::string& prefix, std::size_t n, std::size_t window, bool cron) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t sent = 0, done = 0;
  boost::system::error_code first_error;
  std::function<void()> send_one = [&] {
    std::size_t i = 0;
    {
      std::lock_guard lk(m);
      if (sent == n) return;
      i = sent++;
    }
    auto on_done = [&](boost::system::error_code ec, std::chrono::system_clock::time_point) {
      send_one();  // the next, before this one counts: the caller returns once all have
      std::lock_guard lk(m);  // notified under the lock: the waiter cannot return (and
      if (ec && !first_error) first_error = ec;  // destroy m and cv) before it is released
      ++done;
      cv.notify_all();
    };
    const std::string id = prefix + std::to_string(i);
    if (cron)
      s.async_schedule_cron(id, "bench", std::string(32, 'p'), "0 2 * * *", "Europe/Berlin", {}, on_done);
    else
      s.async_schedule_at_fixed_rate(id, "bench", std::string(32, 'p'), std::chrono::hours(1), std::chrono::hours(24),
                                     {}, on_done);
  };
  const auto t0 = steady::now();
  for (std::size_t k = 0; k < window && k < n; ++k) send_one();
  std::unique_lock lk(m);
  cv.wait(lk, [&] { return done == n; });
  const double rate = creations_per_s(n, t0);
  if (first_error) throw std::runtime_error("a creation failed: " + first_error.message());
  return rate;
}

double bulk(cd::scheduler& s, const std::string& prefix, std::size_t n, bool cron) {
  std::vector<cd::schedule_spec> specs;
  specs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) specs.push_back(creations_spec(prefix + std::to_string(i), cron));
  const auto t0 = steady::now();  // the specs are the caller's: not timed
  const auto results = s.async_upsert_schedules(std::move(specs), boost::asio::use_future).get();
  const double rate = creations_per_s(n, t0);
  if (std::any_of(results.begin(), results.end(),
                  [](const cd::upsert_result& r) { return r.outcome != cd::upsert_outcome::created; }))
    throw std::runtime_error("async_upsert_schedules did not create every schedule");
  return rate;
}

}  // namespace

int run_creations(const creations_options& o) {
  chronopool::durable::test::redis_server_options so;
  so.executable = o.server;
  so.extra_args = {"--appendfsync", o.fsync};  // the helper's default is always (the tests')
  chronopool::durable::test::redis_server server(so);
  server.start();  // appendonly yes, noeviction
  boost::asio::thread_pool work(1);
  cd::scheduler_options opts;
  opts.redis.port = server.port();
  opts.redis.request_timeout = std::chrono::seconds(60);
  opts.name_space = "creations";
  cd::scheduler s(work.get_executor(), opts);  // never started: it only creates
  // Connected and the library loaded before anything is timed.
  s.async_schedule("warm-up", "bench", "", std::chrono::hours(1), boost::asio::use_future).get();
  s.async_cancel("warm-up", boost::asio::use_future).get();

  constexpr std::size_t window = 256;
  std::vector<std::string> cpu_lines;
  fmt::print("# chronopool-durable-bench --creations\n\n");
  fmt::print("redis-server (private, loopback), appendonly yes, appendfsync {}; {} schedules per measurement, "
             "{} repetition(s), through chronopool::durable::scheduler (one scheduler, never started)\n\n",
             o.fsync, o.n, o.reps);
  fmt::print("| kind | one request at a time, creations/s | {} in flight, creations/s | async_upsert_schedules, "
             "creations/s | bulk/single |\n|---|---:|---:|---:|---:|\n", window);
  for (const bool cron : {false, true}) {
    std::vector<double> single, flight, many, cpu_single, cpu_flight, cpu_many;  // rates; server µs per creation
    for (int rep = 0; rep < o.reps; ++rep) {
      const std::string tag = fmt::format("{}{}-", cron ? "c" : "r", rep);
      // Fewer single calls: each is a round trip (two for cron: TIME, then the put).
      const std::size_t n_single = std::max<std::size_t>(o.n / 5, 1);
      double c0 = server_cpu_s(server.port());
      single.push_back(single_at_a_time(s, "s" + tag, n_single, cron));
      double c1 = server_cpu_s(server.port());
      cpu_single.push_back((c1 - c0) * 1e6 / static_cast<double>(n_single));
      flight.push_back(in_flight(s, "f" + tag, o.n, window, cron));
      c0 = server_cpu_s(server.port());
      cpu_flight.push_back((c0 - c1) * 1e6 / static_cast<double>(o.n));
      many.push_back(bulk(s, "b" + tag, o.n, cron));
      c1 = server_cpu_s(server.port());
      cpu_many.push_back((c1 - c0) * 1e6 / static_cast<double>(o.n));
      fmt::print(stderr, "{} rep {}: single {:.0f}/s, {} in flight {:.0f}/s, bulk {:.0f}/s\n",
                 cron ? "cron" : "fixed-rate", rep + 1, single.back(), window, flight.back(), many.back());
    }
    const auto cell = [](std::vector<double>& v) {
      std::sort(v.begin(), v.end());
      return fmt::format("{:.0f} ({:.0f}–{:.0f})", v[v.size() / 2], v.front(), v.back());
    };
    const std::string single_cell = cell(single), flight_cell = cell(flight), many_cell = cell(many);
    const double ratio = many[many.size() / 2] / single[single.size() / 2];  // sorted by cell()
    fmt::print("| {} | {} | {} | {} | {:.1f} |\n", cron ? "cron `0 2 * * *` Europe/Berlin" : "fixed rate",
               single_cell, flight_cell, many_cell, ratio);
    cpu_lines.push_back(fmt::format("| {} | {} | {} | {} |", cron ? "cron" : "fixed rate", cell(cpu_single),
                                    cell(cpu_flight), cell(cpu_many)));
  }
  fmt::print("\nRedis's CPU time per creation, µs (INFO cpu around each phase; the INFO calls included):\n\n"
             "| kind | one at a time | {} in flight | bulk |\n|---|---:|---:|---:|\n", window);
  for (const auto& l : cpu_lines) fmt::print("{}\n", l);
  fmt::print("\nmedian (min–max) of the repetitions; single = each async_schedule_* waited for before the next "
             "({} of them); in flight = {} single calls outstanding; bulk = one async_upsert_schedules call for all "
             "of them (a cp_put_many_v5 per 500 schedules).\n", std::max<std::size_t>(o.n / 5, 1), window);
  return 0;
}

}  // namespace chronopool::bench_durable

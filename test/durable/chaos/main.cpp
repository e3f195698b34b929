// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// durable_chaos: worker processes run fixed-rate schedules from Redis while
// the harness kills and restarts them, freezes some (SIGSTOP: zombies whose
// late acknowledgements must be rejected), kills and restarts Redis itself
// (the append-only file brings the schedules back), and stalls or cuts the
// connections through its own TCP proxy. Every run is logged by the worker
// as "fire_id token pid start end"; the checker then proves that every tick
// ran, that repeats only happened near faults and under new tokens, and that
// runs of a schedule overlapped only where a lease could have expired.
//
//   durable_chaos [--seconds S] [--workers W] [--schedules N] [--period-ms P]
//                 [--lease-ms L] [--seed X]
#include "../../support/quiet_use_future.hpp"  // first: see there

#include "checker.hpp"
#include "stall_proxy.hpp"

#include "redis_server.hpp"

#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace cd = chronopool::durable;
namespace chaos = chronopool::durable::chaos;
using namespace std::chrono_literals;

namespace {

struct settings {
  int seconds = 20;
  int workers = 3;
  int schedules = 4;
  int period_ms = 100;
  int lease_ms = 1000;
  std::uint64_t seed = 0;
};

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void sleep_ms(std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

cd::scheduler_options worker_options(std::uint16_t port, const std::string& ns, int lease_ms) {
  cd::scheduler_options o;
  o.redis.port = port;
  // Short timeouts: a stalled connection must be noticed well within a
  // lease, so extension can retry on a fresh one.
  o.redis.connect_timeout = std::chrono::milliseconds(lease_ms / 4);
  o.redis.request_timeout = std::chrono::milliseconds(lease_ms / 4);
  o.name_space = ns;
  o.lease = std::chrono::milliseconds(lease_ms);
  o.max_poll = 200ms;
  o.reconnect_min = 20ms;
  o.reconnect_max = 200ms;
  o.failure.initial_backoff = 50ms;
  o.failure.max_backoff = 50ms;
  // Kills and stalls make leases run out: each counts as an attempt. The
  // chaos run checks that no fire is lost, so it never gives one up.
  o.failure.max_attempts = 1000000;
  return o;
}

// ---------------------------------------------------------------------------
// Worker process
// ---------------------------------------------------------------------------

std::atomic<bool> terminate_requested{false};

int run_worker(std::uint16_t port, const std::string& ns, const std::string& log, int lease_ms) {
  ::signal(SIGTERM, [](int) { terminate_requested = true; });
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return 2;
  chronopool::scheduled_thread_pool pool(2);
  cd::scheduler sched(pool.get_executor(), worker_options(port, ns, lease_ms));
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  std::mutex rng_mutex;
  sched.register_handler("tick", [&](const cd::fire_context& f) {
    const auto start = now_ms();
    int work = 0;
    {
      std::lock_guard lk(rng_mutex);
      work = std::uniform_int_distribution<int>(2, 30)(rng);
    }
    sleep_ms(work);
    // One write() per line with O_APPEND: whole lines, even from several processes.
    const auto line = fmt::format("{} {} {} {} {}\n", f.fire_id, f.token, ::getpid(), start, now_ms());
    if (::write(fd, line.data(), line.size()) < 0) throw std::runtime_error("log write failed");
  });
  sched.start();
  while (!terminate_requested) sleep_ms(20);
  sched.stop();
  const auto st = sched.stats();
  const auto stats = fmt::format("{} {} {} {} {} {} {}\n", ::getpid(), st.claimed, st.acked, st.stale_acks,
                                 st.released, st.leases_lost, st.reconnects);
  const int sfd = ::open((log + ".stats").c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (sfd >= 0) {
    if (::write(sfd, stats.data(), stats.size()) < 0) { /* the verdict does not depend on it */ }
    ::close(sfd);
  }
  pool.shutdown();
  pool.join();
  ::close(fd);
  return 0;
}

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

class fleet {
 public:
  fleet(std::uint16_t port, std::string ns, std::string log, int lease_ms)
      : port_(port), ns_(std::move(ns)), log_(std::move(log)), lease_ms_(lease_ms) {}

  pid_t spawn() {
    const std::string p = std::to_string(port_);  // everything the child needs, before fork
    const std::string l = std::to_string(lease_ms_);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/proc/self/exe", "durable_chaos", "--worker", p.c_str(), ns_.c_str(), log_.c_str(), l.c_str(),
              static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    if (pid < 0) throw std::runtime_error("fork failed");
    return pid;
  }

 private:
  std::uint16_t port_;
  std::string ns_;
  std::string log_;
  int lease_ms_;
};

// The runs logged so far, and how many lines did not parse.
std::pair<std::vector<chaos::run_record>, std::uint64_t> read_runs(const std::string& log) {
  std::pair<std::vector<chaos::run_record>, std::uint64_t> out{};
  std::ifstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    chaos::run_record r;
    if (chaos::parse_run(line, r))
      out.first.push_back(r);
    else
      ++out.second;
  }
  return out;
}

// On a failure: when each fault happened and what each schedule last ran,
// in ms relative to check_until, so a report from CI can be read without a
// rerun (the faults' timing is not reproducible from the seed alone).
void print_timeline(const chaos::check_input& in, const std::vector<pid_t>& final_workers) {
  fmt::print("timeline (ms relative to check_until; workers alive at the end:");
  for (auto pid : final_workers) fmt::print(" {}", pid);
  fmt::print(")\n");
  for (const auto& f : in.faults)
    fmt::print("  fault {:>7} .. {:>7}  {}{}\n", f.start - in.check_until, f.end - in.check_until, f.kind,
               f.target ? fmt::format(" (pid {})", f.target) : std::string());
  std::map<std::string, std::vector<const chaos::run_record*>> by_schedule;
  for (const auto& r : in.runs) by_schedule[r.schedule].push_back(&r);
  for (auto& [name, runs] : by_schedule) {
    std::sort(runs.begin(), runs.end(), [](auto* a, auto* b) { return a->start < b->start; });
    fmt::print("  {}: last runs (due, token, pid, start, end):\n", name);
    const std::size_t from = runs.size() > 12 ? runs.size() - 12 : 0;
    for (std::size_t i = from; i < runs.size(); ++i)
      fmt::print("    {:>7} {:>6} {:>7} {:>7} {:>7}\n", runs[i]->due - in.check_until, runs[i]->token, runs[i]->pid,
                 runs[i]->start - in.check_until, runs[i]->end - in.check_until);
  }
}

int run_harness(const settings& s) {
  const std::uint64_t seed = s.seed ? s.seed : std::random_device{}();
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };

  cd::test::redis_server redis;  // appendonly yes, appendfsync always
  redis.start();
  chaos::stall_proxy proxy(redis.port());
  const std::string ns = fmt::format("chaos-{}", ::getpid());
  const std::string log = fmt::format("/tmp/chronopool-chaos-{}.log", ::getpid());
  std::remove(log.c_str());
  std::remove((log + ".stats").c_str());
  fmt::print("durable_chaos: redis 127.0.0.1:{}, proxy :{}, {} workers, {} schedules every {} ms, lease {} ms, {} s, "
             "seed {}\n",
             redis.port(), proxy.port(), s.workers, s.schedules, s.period_ms, s.lease_ms, s.seconds, seed);

  // Schedules, created straight on Redis (not through the proxy). catch_up
  // with a large bound: after an outage every missed tick still runs, so
  // "every tick ran" is a fair demand.
  chaos::check_input in;
  {
    chronopool::scheduled_thread_pool pool(1);
    cd::scheduler admin(pool.get_executor(), worker_options(redis.port(), ns, s.lease_ms));
    cd::schedule_options all_ticks;
    all_ticks.misfire = cd::misfire_policy::catch_up;
    all_ticks.catch_up_max = 1'000'000;
    for (int i = 0; i < s.schedules; ++i) {
      const auto name = fmt::format("s{}", i);
      const auto first = admin
                             .async_schedule_at_fixed_rate(name, "tick", "", 300ms,
                                                           std::chrono::milliseconds(s.period_ms), all_ticks,
                                                           boost::asio::use_future)
                             .get();
      in.schedules[name] = {std::chrono::duration_cast<std::chrono::milliseconds>(first.time_since_epoch()).count(),
                            s.period_ms};
    }
    admin.stop();
    pool.shutdown();
    pool.join();
  }

  fleet f(proxy.port(), ns, log, s.lease_ms);
  std::vector<pid_t> workers;
  for (int i = 0; i < s.workers; ++i) workers.push_back(f.spawn());

  std::map<std::string, int> injected;
  const auto end = now_ms() + s.seconds * 1000;
  while (now_ms() < end) {
    sleep_ms(pick(300, 1200));
    chaos::fault_record fr;
    fr.start = now_ms();
    const auto kind = pick(0, 4);
    const auto w = static_cast<std::size_t>(pick(0, s.workers - 1));
    if (kind == 0) {
      fr.kind = "kill -9 worker";
      ::kill(workers[w], SIGKILL);
      ::waitpid(workers[w], nullptr, 0);
      sleep_ms(pick(0, 300));
      workers[w] = f.spawn();
    } else if (kind == 1) {
      fr.kind = "SIGSTOP worker past its lease";
      ::kill(workers[w], SIGSTOP);
      sleep_ms(pick(s.lease_ms * 3 / 2, s.lease_ms * 5 / 2));
      ::kill(workers[w], SIGCONT);
    } else if (kind == 2) {
      fr.kind = "kill -9 redis + restart";
      redis.kill9();
      sleep_ms(pick(100, 500));
      redis.start();
    } else if (kind == 3) {
      fr.kind = "proxy stall (no close)";
      proxy.set_stalled(true);
      sleep_ms(pick(s.lease_ms * 3 / 2, s.lease_ms * 2));
      proxy.set_stalled(false);
    } else {
      fr.kind = "proxy cuts all connections";
      proxy.cut_all();
    }
    fr.end = now_ms();
    fr.target = kind == 0 || kind == 1 ? static_cast<long>(workers[w]) : 0;
    ++injected[fr.kind];
    in.faults.push_back(fr);
  }
  // Faults stop here; every tick due by now must run once the fleet recovers.
  in.check_until = now_ms();
  // Leases of killed holders run out, then the backlog drains. Catching up is
  // serial per schedule (one pending occurrence each), about twice real time
  // under ASan on 2 cores, so faults close together can leave the fleet seconds behind: wait
  // until every tick due by now has run, not a fixed time. The bound only
  // turns a tick that never runs into a failure instead of a hang.
  const auto min_wait = s.lease_ms * 2 + 1500;
  const auto max_wait = std::int64_t{60'000};
  std::int64_t caught_up_after = -1;
  for (auto waited = std::int64_t{0}; waited < max_wait; waited = now_ms() - in.check_until) {
    sleep_ms(100);
    if (caught_up_after < 0) {
      in.runs = read_runs(log).first;  // read again, in full, once the workers have stopped
      if (chaos::check(in).missing == 0) caught_up_after = now_ms() - in.check_until;
    }
    if (caught_up_after >= 0 && now_ms() - in.check_until >= min_wait) break;
  }

  {
    chronopool::scheduled_thread_pool pool(1);
    const auto o = worker_options(redis.port(), ns, s.lease_ms);
    cd::scheduler admin(pool.get_executor(), o);
    in.max_attempts = o.failure.max_attempts;
    for (const auto& d : admin.async_list_dead_letters(100'000, boost::asio::use_future).get())
      in.dead_letters[d.fire_id] = d.attempts;
    for (const auto& [name, grid] : in.schedules) admin.async_cancel(name, boost::asio::use_future).get();
    admin.stop();
    pool.shutdown();
    pool.join();
  }
  int bad_exits = 0;
  for (auto pid : workers) ::kill(pid, SIGTERM);
  for (auto pid : workers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++bad_exits;
  }

  std::uint64_t malformed = 0;
  std::tie(in.runs, malformed) = read_runs(log);
  in.margin = s.lease_ms + 1500;
  const auto rep = chaos::check(in);

  std::uint64_t claimed = 0, acked = 0, stale = 0, released = 0, lost = 0, reconnects = 0;
  std::ifstream stats(log + ".stats");
  long pid = 0;
  std::uint64_t c = 0, a = 0, st = 0, rl = 0, ls = 0, rc = 0;
  while (stats >> pid >> c >> a >> st >> rl >> ls >> rc) {
    claimed += c, acked += a, stale += st, released += rl, lost += ls, reconnects += rc;
  }

  fmt::print("faults injected:\n");
  for (const auto& [kind, n] : injected) fmt::print("  {:32} {}\n", kind, n);
  fmt::print("runs logged: {} (malformed {}), ticks expected {}, ticks run {}, missing {}, dead-lettered {}\n",
             in.runs.size(), malformed, rep.ticks_expected, rep.ticks_run, rep.missing, rep.dead_lettered);
  if (caught_up_after >= 0)
    fmt::print("every tick due by the last fault had run {} ms after it\n", caught_up_after);
  fmt::print("ticks run more than once: {} (each near a fault, under different tokens)\n", rep.duplicated_ticks);
  fmt::print("overlapping runs of one schedule: {} (each near a fault)\n", rep.overlaps);
  fmt::print("surviving workers' counters: claimed {}, acked {}, stale acks rejected {}, released {}, "
             "leases lost {}, reconnects {}\n",
             claimed, acked, stale, released, lost, reconnects);
  fmt::print("proxy connections accepted: {}\n", proxy.connections_accepted());
  for (std::size_t i = 0; i < rep.violations.size() && i < 20; ++i) fmt::print("VIOLATION: {}\n", rep.violations[i]);
  const bool ok = rep.ok() && malformed == 0 && bad_exits == 0 && rep.ticks_expected > 0;
  if (ok) {
    std::remove(log.c_str());
    std::remove((log + ".stats").c_str());
  } else {
    print_timeline(in, workers);
    fmt::print("run log kept: {}\n", log);
  }
  if (bad_exits) fmt::print("workers that did not exit cleanly: {}\n", bad_exits);
  fmt::print("{}\n", ok ? "durable_chaos: OK" : "durable_chaos: FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 6 && std::strcmp(argv[1], "--worker") == 0)
      return run_worker(static_cast<std::uint16_t>(std::stoi(argv[2])), argv[3], argv[4], std::stoi(argv[5]));
    settings s;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string a = argv[i];
      const auto v = std::stoll(argv[i + 1]);
      if (a == "--seconds") s.seconds = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--workers") s.workers = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--schedules") s.schedules = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--period-ms") s.period_ms = static_cast<int>(std::max<long long>(10, v));
      else if (a == "--lease-ms") s.lease_ms = static_cast<int>(std::max<long long>(200, v));
      else if (a == "--seed") s.seed = static_cast<std::uint64_t>(v);
      else {
        fmt::print(stderr, "durable_chaos: unknown option {}\n", a);
        return 2;
      }
    }
    return run_harness(s);
  } catch (const std::exception& e) {
    fmt::print(stderr, "durable_chaos: {}\n", e.what());
    return 1;
  }
}

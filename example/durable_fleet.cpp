// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// durable_fleet: three worker processes share one schedule kept in Redis.
//
// An "hourly report" scaled down to every 200 ms is created once; three
// worker processes run a chronopool::durable::scheduler on the same
// namespace, and every tick is claimed and handled by exactly one of them.
// Half-way through, one worker is killed with SIGKILL: the others carry on,
// and a tick it was running (if any) runs again elsewhere once its lease
// expires, under a larger fencing token. At the end the log is checked:
// every tick handled, none lost.
//
//   durable_fleet [--workers N] [--seconds S] [--period-ms P] [--redis-port PORT | --cluster]
//
// Without --redis-port (or CHRONOPOOL_REDIS_PORT) it starts its own
// redis-server on a free loopback port in a temporary directory; with
// --cluster, its own Redis Cluster of three masters there instead, the
// namespace in four partitions (redis-cli joins the nodes).
#include "quiet_use_future.hpp"  // first: see there

#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include "cluster_group.hpp"
#include "redis_server.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cd = chronopool::durable;
using namespace std::chrono_literals;

namespace {

struct settings {
  int workers = 3;
  int seconds = 4;
  int period_ms = 200;
  std::uint16_t redis_port = 0;
  bool cluster = false;
};

std::atomic<bool> terminate_requested{false};

// `where` is "<port>" of one server, or "cluster:<port>,<port>,..." of a
// cluster's masters (as handed to the worker processes).
cd::scheduler_options worker_options(const std::string& where, const std::string& ns) {
  cd::scheduler_options o;
  const std::string cluster = "cluster:";
  if (where.rfind(cluster, 0) == 0) {
    std::istringstream ports(where.substr(cluster.size()));
    for (std::string p; std::getline(ports, p, ',');)
      o.redis.cluster.seeds.push_back({"127.0.0.1", static_cast<std::uint16_t>(std::stoi(p))});
    o.partitions = 4;  // a namespace spread over the masters
  } else {
    o.redis.port = static_cast<std::uint16_t>(std::stoi(where));
  }
  o.name_space = ns;
  o.lease = 1s;  // short, so a killed worker's tick is retried quickly
  o.max_poll = 500ms;
  return o;
}

// One worker process: handles "report" fires until SIGTERM.
int run_worker(const std::string& where, const std::string& ns, const std::string& log_path) {
  ::signal(SIGTERM, [](int) { terminate_requested = true; });
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (log_fd < 0) return 2;

  chronopool::scheduled_thread_pool pool(2);
  cd::scheduler sched(pool.get_executor(), worker_options(where, ns));
  sched.register_handler("report", [&](const cd::fire_context& f) {
    // One write() per line with O_APPEND: lines from all workers interleave whole.
    const auto line = fmt::format("{} {} {}\n", f.fire_id, f.token, ::getpid());
    if (::write(log_fd, line.data(), line.size()) < 0) throw std::runtime_error("log write failed");
    fmt::print("  worker {}: {} (token {}, attempt {})\n", ::getpid(), f.fire_id, f.token, f.attempt);
    std::fflush(stdout);
  });
  sched.start();
  while (!terminate_requested) std::this_thread::sleep_for(20ms);
  sched.stop();
  pool.shutdown();
  pool.join();
  ::close(log_fd);
  return 0;
}

pid_t spawn_worker(const char* self, const std::string& where, const std::string& ns, const std::string& log) {
  const pid_t pid = ::fork();  // the child only execs
  if (pid == 0) {
    ::execl(self, self, "--worker", where.c_str(), ns.c_str(), log.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  return pid;
}

struct log_line {
  std::string fire_id;
  std::uint64_t token = 0;
  pid_t pid = 0;
};

std::vector<log_line> read_log(const std::string& path) {
  std::vector<log_line> out;
  std::ifstream in(path);
  log_line l;
  while (in >> l.fire_id >> l.token >> l.pid) out.push_back(l);
  return out;
}

std::int64_t due_of(const std::string& fire_id) {
  return std::stoll(fire_id.substr(fire_id.rfind('@') + 1));
}

int run_fleet(const char* self, const settings& s) {
  std::optional<cd::test::redis_server> own_redis;
  std::optional<cd::test::cluster_group> own_cluster;
  std::string where = std::to_string(s.redis_port);
  if (s.cluster) {
    own_cluster.emplace("redis-server", 3);
    where = "cluster:";
    for (const auto p : own_cluster->master_ports()) where += std::to_string(p) + ",";
    where.pop_back();
    fmt::print("started a Redis Cluster of 3 masters on 127.0.0.1 ports {}\n", where.substr(8));
  } else if (s.redis_port == 0) {
    cd::test::redis_server_options ro;
    own_redis.emplace(ro);
    own_redis->start();
    where = std::to_string(own_redis->port());
    fmt::print("started redis-server on 127.0.0.1:{} (append-only file in {})\n", where, own_redis->dir().string());
  } else {
    fmt::print("using redis on 127.0.0.1:{}\n", s.redis_port);
  }
  const std::string ns = fmt::format("fleet-demo-{}", ::getpid());
  const std::string log = fmt::format("/tmp/chronopool-fleet-{}.log", ::getpid());
  std::remove(log.c_str());

  // The schedule is created once, by a process that runs no fires.
  chronopool::scheduled_thread_pool pool(1);
  cd::scheduler admin(pool.get_executor(), worker_options(where, ns));
  const auto period = std::chrono::milliseconds(s.period_ms);
  // Every hour's report is wanted, so ticks missed while the killed worker's
  // lease ran out are caught up rather than folded into one (the default).
  cd::schedule_options every_tick;
  every_tick.misfire = cd::misfire_policy::catch_up;
  every_tick.catch_up_max = 1000;
  const auto first = admin
                         .async_schedule_at_fixed_rate("hourly-report", "report", "", 300ms, period, every_tick,
                                                       boost::asio::use_future)
                         .get();
  fmt::print("schedule 'hourly-report' every {} ms; {} workers; {} s\n", s.period_ms, s.workers, s.seconds);

  std::vector<pid_t> workers;
  for (int i = 0; i < s.workers; ++i) workers.push_back(spawn_worker(self, where, ns, log));

  std::this_thread::sleep_for(std::chrono::milliseconds(s.seconds * 500));
  const pid_t victim = workers.front();
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);
  const auto killed_at = std::chrono::system_clock::now();
  fmt::print("-- killed worker {} with SIGKILL --\n", victim);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(s.seconds * 500));

  admin.async_cancel("hourly-report", boost::asio::use_future).get();
  for (std::size_t i = 1; i < workers.size(); ++i) ::kill(workers[i], SIGTERM);
  int failures = 0;
  for (std::size_t i = 1; i < workers.size(); ++i) {
    int status = 0;
    ::waitpid(workers[i], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  admin.stop();
  pool.shutdown();
  pool.join();

  // Check: every tick from the first to the last handled, by whom, how often.
  const auto lines = read_log(log);
  std::map<std::int64_t, std::vector<log_line>> by_tick;
  for (const auto& l : lines) by_tick[due_of(l.fire_id)].push_back(l);
  const auto first_ms = std::chrono::duration_cast<std::chrono::milliseconds>(first.time_since_epoch()).count();
  const auto killed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(killed_at.time_since_epoch()).count();
  std::int64_t missing = 0;
  std::int64_t repeated = 0;
  std::int64_t bad_repeats = 0;
  std::int64_t by_dead = 0;
  std::map<pid_t, int> per_worker;
  const std::int64_t last = by_tick.empty() ? first_ms : by_tick.rbegin()->first;
  for (std::int64_t t = first_ms; t <= last; t += s.period_ms) {
    auto it = by_tick.find(t);
    if (it == by_tick.end()) {
      ++missing;
      continue;
    }
    std::set<std::uint64_t> tokens;
    for (const auto& l : it->second) {
      tokens.insert(l.token);
      ++per_worker[l.pid];
      if (l.pid == victim && t > killed_ms + 1000) ++by_dead;  // impossible: it was dead
    }
    if (it->second.size() > 1) {
      ++repeated;
      if (tokens.size() != it->second.size()) ++bad_repeats;  // a repeat must carry a new token
    }
  }
  fmt::print("\n{} ticks from the first to the last, {} log lines\n", by_tick.size(), lines.size());
  for (const auto& [pid, n] : per_worker)
    fmt::print("  worker {}{}: {} ticks\n", pid, pid == victim ? " (killed)" : "", n);
  fmt::print("missing ticks: {}\n", missing);
  fmt::print("ticks run twice: {} (allowed only for a tick the killed worker was running; each with its own token)\n",
             repeated);
  std::remove(log.c_str());
  const bool ok = missing == 0 && bad_repeats == 0 && by_dead == 0 && repeated <= 1 && failures == 0 &&
                  by_tick.size() >= 4;
  fmt::print("{}\n", ok ? "OK: every tick handled once by a live worker" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 5 && std::strcmp(argv[1], "--worker") == 0)
      return run_worker(argv[2], argv[3], argv[4]);
    settings s;
    if (const char* p = std::getenv("CHRONOPOOL_REDIS_PORT")) s.redis_port = static_cast<std::uint16_t>(std::stoi(p));
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--cluster") {
        s.cluster = true;
        continue;
      }
      const int v = i + 1 < argc ? std::stoi(argv[++i]) : -1;
      if (v < 0) a.clear();  // a flag without its value: usage
      if (a == "--workers") s.workers = std::max(2, v);
      else if (a == "--seconds") s.seconds = std::max(2, v);
      else if (a == "--period-ms") s.period_ms = std::max(20, v);
      else if (a == "--redis-port") s.redis_port = static_cast<std::uint16_t>(v);
      else {
        fmt::print(stderr, "usage: {} [--workers N] [--seconds S] [--period-ms P] [--redis-port PORT | --cluster]\n",
                   argv[0]);
        return 2;
      }
    }
    if (s.cluster && s.redis_port != 0) {
      fmt::print(stderr, "durable_fleet: --cluster starts its own cluster; --redis-port (or CHRONOPOOL_REDIS_PORT) "
                         "names one server\n");
      return 2;
    }
    return run_fleet("/proc/self/exe", s);
  } catch (const std::exception& e) {
    fmt::print(stderr, "durable_fleet: {}\n", e.what());
    return 1;
  }
}

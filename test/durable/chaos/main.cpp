// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// durable_chaos: worker processes run fixed-rate schedules from Redis while
// the harness kills and restarts them, freezes some (SIGSTOP: zombies whose
// late acknowledgements must be rejected), kills and restarts Redis itself
// (the append-only file brings the schedules back) or restarts it without
// its data (the schedules are re-created, as a deploy would), puts it at
// maxmemory, deploys the schedules again (bulk upserts) and stalls or cuts
// the connections through its own TCP proxy. Beside the tick schedules run
// a poison one (its handler always throws), a hang one (its handler hangs
// past its timeout) and an orphan one (no process has its handler): each
// occurrence of those runs on a retry or ends as a dead letter after its
// attempts, and the schedule moves on.
//
// Every run is logged by the worker as "fire_id token pid start end"; the
// checker (checker.hpp lists its rules) then proves that no fire was lost
// unless dead-lettered (after its attempts) or lost with Redis's data, that
// repeats only happened near faults that can cause them and under new
// tokens, and that tokens grew across the data losses, which were reported.
//
// Faults are dealt from a shuffled deck of every kind, so each run injects
// each kind at least once (running past --seconds if needed), then draws
// more while time is left.
//
// With --cluster the fleet runs on a Redis Cluster of 3 masters with a
// replica each (cluster_faults.hpp), and the deck holds the faults that make
// sense there: kill -9 and SIGSTOP of workers, deploys, kill -9 of the
// master serving one of the namespace's partitions (picked at random) until
// its replica is promoted, then the killed node restarted as a replica;
// CLIENT PAUSE of such a master (the stall: connections open, silent) and
// CLIENT KILL on every node (the cut) in place of the proxy, which a
// Cluster client would bypass (it connects to the addresses the nodes
// announce). Left out there: restarting a node without its data (cluster
// nodes keep none on disk here; a failover is the Cluster's data loss, see
// checker.hpp for what it may cause) and maxmemory (a per-node setting the
// single-server run covers).
//
//   durable_chaos [--seconds S] [--workers W] [--schedules N] [--period-ms P]
//                 [--lease-ms L] [--partitions K] [--seed X] [--cluster]
#include "checker.hpp"
#include "cluster_faults.hpp"
#include "fleet_admin.hpp"
#include "stall_proxy.hpp"
#include "worker.hpp"

#include "redis_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

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
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
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
  std::uint32_t partitions = 1;  // the namespace's (scheduler_options::partitions)
  std::uint64_t seed = 0;
  bool cluster = false;  // a Redis Cluster instead of one server
};

// The fault kinds of cluster mode that single-server mode has not.
constexpr const char* failover_fault = "kill -9 master, replica promoted";
constexpr const char* pause_fault = "master pauses its clients";
constexpr const char* client_kill_fault = "every node cuts its connections";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void sleep_ms(std::int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

class fleet {
 public:
  fleet(std::string target, std::string ns, std::string log, int lease_ms, std::uint32_t partitions)
      : target_(std::move(target)), ns_(std::move(ns)), log_(std::move(log)), lease_ms_(lease_ms),
        partitions_(partitions) {}

  pid_t spawn() {
    const std::string& p = target_;  // everything the child needs, before fork
    const std::string l = std::to_string(lease_ms_);
    const std::string k = std::to_string(partitions_);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/proc/self/exe", "durable_chaos", "--worker", p.c_str(), ns_.c_str(), log_.c_str(), l.c_str(),
              k.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    if (pid < 0) throw std::runtime_error("fork failed");
    return pid;
  }

 private:
  std::string target_;  // see chaos::redis_target
  std::string ns_;
  std::string log_;
  int lease_ms_;
  std::uint32_t partitions_;
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

// The data_lost reports the workers logged (ms).
std::vector<std::int64_t> read_data_lost_reports(const std::string& log) {
  std::vector<std::int64_t> out;
  std::ifstream lines(log + ".events");
  std::string word;
  long pid = 0;
  std::int64_t at = 0;
  while (lines >> word >> pid >> at)
    if (word == "data_lost") out.push_back(at);
  return out;
}

// Polls until every tick due by `until` ran or is a dead letter (the dead
// letters are merged into in.dead_letters), up to `limit_ms`; the ms it
// took, or -1.
std::int64_t wait_caught_up(chaos::check_input& in, chaos::fleet_admin& admin, const std::string& log,
                            std::int64_t until, std::int64_t limit_ms) {
  const auto from = now_ms();
  for (;;) {
    auto probe = in;
    probe.check_until = until;
    probe.runs = read_runs(log).first;
    admin.collect_dead_letters(in.dead_letters);
    probe.dead_letters = in.dead_letters;
    if (chaos::check(probe).missing == 0) return now_ms() - from;
    if (now_ms() - from > limit_ms) return -1;
    sleep_ms(100);
  }
}

// One command on a fresh blocking connection to Redis (no Boost.Test in
// this binary, so not the tests' sync_redis): a simple or bulk string reply;
// throws on an error reply.
std::string redis_command(std::uint16_t port, const std::vector<std::string>& args) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  std::string req = fmt::format("*{}\r\n", args.size());
  for (const auto& a : args) req += fmt::format("${}\r\n{}\r\n", a.size(), a);
  asio::write(sock, asio::buffer(req));
  asio::streambuf buf;
  asio::read_until(sock, buf, "\r\n");
  std::istream in(&buf);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty() || line[0] == '-') throw std::runtime_error(fmt::format("redis {}: {}", args.front(), line));
  if (line[0] != '$') return line.substr(1);
  const auto size = static_cast<std::size_t>(std::stoll(line.substr(1)));
  while (buf.size() < size + 2) asio::read(sock, buf, asio::transfer_at_least(1));
  std::string body(size, '\0');
  in.read(body.data(), static_cast<std::streamsize>(size));
  return body;
}

std::int64_t used_memory(std::uint16_t port) {
  const auto info = redis_command(port, {"INFO", "memory"});
  const auto at = info.find("used_memory:");
  if (at == std::string::npos) throw std::runtime_error("INFO memory without used_memory");
  return std::stoll(info.substr(at + 12));
}

int run_harness(const settings& s) {
  const std::uint64_t seed = s.seed ? s.seed : std::random_device{}();
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };

  const std::string ns = fmt::format("chaos-{}", ::getpid());
  // One server, which the workers reach through the stalling proxy (the
  // harness's own scheduler straight), or a Redis Cluster both reach alike.
  std::optional<cd::test::redis_server> redis;  // appendonly yes, appendfsync always, noeviction
  std::optional<chaos::stall_proxy> proxy;
  std::optional<chaos::chaos_cluster> cluster;
  std::string admin_target, fleet_target;
  if (s.cluster) {
    cluster.emplace(CHRONOPOOL_TEST_REDIS_SERVER, ns, s.partitions);
    admin_target = fleet_target = cluster->target();
  } else {
    redis.emplace();
    redis->start();
    proxy.emplace(redis->port());
    admin_target = std::to_string(redis->port());
    fleet_target = std::to_string(proxy->port());
  }
  const std::string log = fmt::format("/tmp/chronopool-chaos-{}.log", ::getpid());
  const auto remove_logs = [&] {
    for (const char* suffix : {"", ".stats", ".events"}) std::remove((log + suffix).c_str());
  };
  remove_logs();
  const auto where = s.cluster ? fmt::format("Redis Cluster of 3 masters with a replica each ({})", fleet_target)
                               : fmt::format("redis 127.0.0.1:{}, proxy :{}", redis->port(), proxy->port());
  fmt::print("durable_chaos: {}, {} workers, {} schedules every {} ms (and poison, hang, orphan), lease {} ms, {} "
             "partition(s), {} s, seed {}\n",
             where, s.workers, s.schedules, s.period_ms, s.lease_ms, s.partitions, s.seconds, seed);

  chaos::check_input in;
  chaos::fleet_layout layout;
  layout.tick_schedules = s.schedules;
  layout.tick_period_ms = s.period_ms;
  const auto admin_redis = chaos::redis_target(admin_target);
  in.max_attempts = chaos::worker_options(admin_redis, ns, s.lease_ms, s.partitions).failure.max_attempts;
  chaos::fleet_admin admin(admin_redis, ns, s.lease_ms, s.partitions);
  admin.create(layout, in);

  fleet f(fleet_target, ns, log, s.lease_ms, s.partitions);
  std::vector<pid_t> workers;
  for (int i = 0; i < s.workers; ++i) workers.push_back(f.spawn());

  const std::vector<std::string> kinds =
      s.cluster ? std::vector<std::string>{"kill -9 worker", "SIGSTOP worker past its lease", failover_fault,
                                           pause_fault, client_kill_fault, chaos::deploy_fault}
                : std::vector<std::string>{"kill -9 worker",
                                           "SIGSTOP worker past its lease",
                                           "kill -9 redis + restart",
                                           "proxy stall (no close)",
                                           "proxy cuts all connections",
                                           chaos::data_loss_fault,
                                           chaos::maxmemory_fault,
                                           chaos::deploy_fault};
  // Cluster mode: a partition of the namespace, whose master a fault aims at.
  const auto pick_slot = [&] {
    const auto& slots = cluster->slots();
    return slots[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(slots.size()) - 1))];
  };
  std::vector<std::string> deck;
  std::map<std::string, int> injected;
  int deploys = 0;
  const auto end = now_ms() + s.seconds * 1000;
  while (now_ms() < end || injected.size() < kinds.size()) {
    sleep_ms(pick(300, 1200));
    if (deck.empty()) {
      deck = kinds;
      std::shuffle(deck.begin(), deck.end(), rng);
    }
    chaos::fault_record fr;
    fr.kind = deck.back();
    deck.pop_back();
    fr.start = now_ms();
    const auto w = static_cast<std::size_t>(pick(0, s.workers - 1));
    if (fr.kind == "kill -9 worker") {
      ::kill(workers[w], SIGKILL);
      ::waitpid(workers[w], nullptr, 0);
      fr.target = workers[w];
      sleep_ms(pick(0, 300));
      workers[w] = f.spawn();
    } else if (fr.kind == "SIGSTOP worker past its lease") {
      fr.target = workers[w];
      ::kill(workers[w], SIGSTOP);
      sleep_ms(pick(s.lease_ms * 3 / 2, s.lease_ms * 5 / 2));
      ::kill(workers[w], SIGCONT);
    } else if (fr.kind == "kill -9 redis + restart") {
      redis->kill9();
      sleep_ms(pick(100, 500));
      redis->start();
    } else if (fr.kind == "proxy stall (no close)") {
      proxy->set_stalled(true);
      sleep_ms(pick(s.lease_ms * 3 / 2, s.lease_ms * 2));
      proxy->set_stalled(false);
    } else if (fr.kind == "proxy cuts all connections") {
      proxy->cut_all();
    } else if (fr.kind == failover_fault) {
      // The cluster's node timeout is 2 s; the bound is for a loaded machine.
      std::string what;
      fr.problem = cluster->fail_over(pick_slot(), what, 60s);
      fmt::print("  failover: {}\n", fr.problem.empty() ? what : fr.problem);
    } else if (fr.kind == pause_fault) {
      const auto ms = pick(s.lease_ms * 3 / 2, s.lease_ms * 2);
      std::string what;
      fr.problem = cluster->pause_master(pick_slot(), ms, what);
      fmt::print("  pause: {}\n", fr.problem.empty() ? what : fr.problem);
      sleep_ms(ms);
    } else if (fr.kind == client_kill_fault) {
      fr.problem = cluster->cut_all_connections();
    } else if (fr.kind == chaos::data_loss_fault) {
      // Once every tick due by fr.start ran or is a dead letter, what the
      // loss takes is exactly what is due from fr.start until the schedules
      // are back (the checker excuses those ticks, and only those).
      if (wait_caught_up(in, admin, log, fr.start, 30'000) < 0)
        fr.problem = "the fleet had not caught up before the loss";
      redis->kill9();
      std::filesystem::remove_all(redis->dir() / "appendonlydir");
      std::filesystem::remove(redis->dir() / "dump.rdb");
      redis->start();
      fr.end = now_ms() + 1000;  // re-created from here on
      const auto problem = admin.recreate(fr.end);
      if (!problem.empty()) fr.problem += (fr.problem.empty() ? "" : "; ") + problem;
    } else if (fr.kind == chaos::maxmemory_fault) {
      admin.prepare_maxmemory_probe();
      // Below what is used: every write that needs memory is refused.
      const auto limit = std::max<std::int64_t>(1, used_memory(redis->port()) / 2);
      redis_command(redis->port(), {"CONFIG", "SET", "maxmemory", std::to_string(limit)});
      fr.problem = admin.probe_at_maxmemory();
      sleep_ms(pick(s.lease_ms, s.lease_ms * 2));  // the fleet claims, runs and acks meanwhile
      redis_command(redis->port(), {"CONFIG", "SET", "maxmemory", "0"});
    } else {  // deploy: in place, or replace with the same start
      fr.problem = admin.deploy(deploys++ % 2 == 0);
    }
    if (fr.end == 0) fr.end = now_ms();
    ++injected[fr.kind];
    in.faults.push_back(fr);
  }
  // Faults stop here; every tick due by now must run (or be dead-lettered)
  // once the fleet recovers. Leases of killed holders run out, then the
  // backlog drains: catching up is serial per schedule (one pending
  // occurrence each), about twice real time under ASan on 2 cores, so
  // faults close together can leave the fleet seconds behind. The bound
  // only turns a tick that never runs into a failure instead of a hang.
  in.check_until = now_ms();
  const auto caught_up_after = wait_caught_up(in, admin, log, in.check_until, 60'000);
  const auto min_wait = s.lease_ms * 2 + 1500;
  if (now_ms() - in.check_until < min_wait) sleep_ms(min_wait - (now_ms() - in.check_until));
  admin.collect_dead_letters(in.dead_letters);
  admin.cancel_all();

  int bad_exits = 0;
  for (auto pid : workers) ::kill(pid, SIGTERM);
  for (auto pid : workers) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++bad_exits;
  }

  std::uint64_t malformed = 0;
  std::tie(in.runs, malformed) = read_runs(log);
  in.data_lost_reports = read_data_lost_reports(log);
  in.margin = s.lease_ms + 1500;
  const auto rep = chaos::check(in);

  // Each scenario must have happened, or the run proved nothing about it.
  std::map<std::string, std::uint64_t> dead_by_schedule, runs_by_schedule;
  for (const auto& [fire, attempts] : in.dead_letters) ++dead_by_schedule[fire.substr(0, fire.rfind('@'))];
  for (const auto& r : in.runs) ++runs_by_schedule[r.schedule];
  std::vector<std::string> unexercised;
  for (const char* id : {"poison", "hang", "orphan"})
    if (dead_by_schedule[id] == 0) unexercised.push_back(fmt::format("no dead letter of {}", id));
  if (runs_by_schedule["hang"] == 0) unexercised.push_back("no run of hang succeeded on a retry");
  if (runs_by_schedule["poison"] + runs_by_schedule["orphan"] != 0)
    unexercised.push_back("a poison or orphan fire was logged as run");

  // pid claimed acked stale released lost reconnects dead_lettered timed_out no_handler data_lost
  std::uint64_t sum[10] = {};
  std::ifstream stats(log + ".stats");
  long pid = 0;
  for (;;) {
    std::uint64_t v[10] = {};
    if (!(stats >> pid)) break;
    bool whole = true;
    for (auto& x : v) whole = whole && static_cast<bool>(stats >> x);
    if (!whole) break;
    for (std::size_t i = 0; i < 10; ++i) sum[i] += v[i];
  }

  fmt::print("faults injected:\n");
  for (const auto& [kind, n] : injected) fmt::print("  {:32} {}\n", kind, n);
  fmt::print("runs logged: {} (malformed {}), ticks expected {}, ticks run {}, missing {}, dead-lettered {}, lost "
             "with Redis's data {}\n",
             in.runs.size(), malformed, rep.ticks_expected, rep.ticks_run, rep.missing, rep.dead_lettered,
             rep.lost_with_data);
  fmt::print("dead letters: poison {}, hang {}, orphan {}, tick schedules {}; hang runs that succeeded on a retry: "
             "{}\n",
             dead_by_schedule["poison"], dead_by_schedule["hang"], dead_by_schedule["orphan"],
             in.dead_letters.size() - dead_by_schedule["poison"] - dead_by_schedule["hang"] -
                 dead_by_schedule["orphan"],
             runs_by_schedule["hang"]);
  fmt::print("data_lost reports by workers: {}\n", in.data_lost_reports.size());
  if (caught_up_after >= 0)
    fmt::print("every tick due by the last fault had run or been dead-lettered {} ms after it\n", caught_up_after);
  fmt::print("ticks run more than once: {} (each near a fault, under different tokens)\n", rep.duplicated_ticks);
  fmt::print("overlapping runs of one schedule: {} (each near a fault)\n", rep.overlaps);
  fmt::print("surviving workers' counters: claimed {}, acked {}, stale acks rejected {}, released {}, "
             "leases lost {}, reconnects {}, dead-lettered {}, timed out {}, no handler {}, data lost {}\n",
             sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7], sum[8], sum[9]);
  if (proxy) fmt::print("proxy connections accepted: {}\n", proxy->connections_accepted());
  for (std::size_t i = 0; i < rep.violations.size() && i < 20; ++i) fmt::print("VIOLATION: {}\n", rep.violations[i]);
  for (const auto& u : unexercised) fmt::print("NOT EXERCISED: {}\n", u);
  const bool ok = rep.ok() && unexercised.empty() && malformed == 0 && bad_exits == 0 && rep.ticks_expected > 0;
  if (ok) {
    remove_logs();
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
    if (argc == 7 && std::strcmp(argv[1], "--worker") == 0)
      return chaos::run_worker(argv[2], argv[3], argv[4], std::stoi(argv[5]),
                               static_cast<std::uint32_t>(std::stoul(argv[6])));
    settings s;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--cluster") {
        s.cluster = true;
        continue;
      }
      if (i + 1 == argc) {
        fmt::print(stderr, "durable_chaos: {} without a value\n", a);
        return 2;
      }
      const auto v = std::stoll(argv[++i]);
      if (a == "--seconds") s.seconds = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--workers") s.workers = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--schedules") s.schedules = static_cast<int>(std::max<long long>(1, v));
      else if (a == "--period-ms") s.period_ms = static_cast<int>(std::max<long long>(10, v));
      else if (a == "--lease-ms") s.lease_ms = static_cast<int>(std::max<long long>(200, v));
      else if (a == "--partitions") s.partitions = static_cast<std::uint32_t>(std::clamp<long long>(v, 1, 1024));
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

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable-bench --fleet W: W worker processes on one private
// redis-server, or with --cluster M on a private Redis Cluster of M masters
// (the namespace in --partitions P partitions), each process a
// chronopool::durable::scheduler as a user runs it.
//
// Per repetition, on a fresh namespace:
//   create  every process creates its share of N one-shots, due at once,
//           in one async_upsert_schedules call: creations/s over all W;
//   drain   every process start()s a scheduler whose handler marks the
//           fire's id in a shared tally: fires/s until all N ran.
// The processes are this binary run as "--fleet-child ...". Each one
// connects and loads the functions before it says "ready"; the clock starts
// when the parent says "go" to all of them, so process start-up is not
// timed. The tally (a file every process maps) also proves each fire ran
// exactly once. CPU: Redis's (INFO cpu) and the workers' own (getrusage).
#include "fleet_bench.hpp"
#include "../stats.hpp"
#include "server_info.hpp"

#include <cluster_group.hpp>
#include <redis_server.hpp>

#include <chronopool/durable/scheduler.hpp>

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace chronopool::bench_durable {
namespace {

namespace cd = chronopool::durable;
using steady = std::chrono::steady_clock;

// ---- the shared tally: [fired count][one byte per schedule] ----------------

class tally {
 public:
  tally(const std::string& path, std::size_t n, bool create) : n_(n), size_(sizeof(std::uint64_t) + n) {
    const int fd = ::open(path.c_str(), create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0600);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
    if (create && ::ftruncate(fd, static_cast<off_t>(size_)) != 0) {
      ::close(fd);
      throw std::system_error(errno, std::generic_category(), "ftruncate " + path);
    }
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap " + path);
    base_ = static_cast<unsigned char*>(p);
  }
  ~tally() { ::munmap(base_, size_); }
  tally(const tally&) = delete;
  tally& operator=(const tally&) = delete;

  void mark(std::size_t i) {
    std::atomic_ref<unsigned char>(base_[sizeof(std::uint64_t) + i]).fetch_add(1, std::memory_order_relaxed);
    fired().fetch_add(1, std::memory_order_release);
  }
  std::uint64_t count() { return fired().load(std::memory_order_acquire); }
  /// Schedules that ran other than exactly once.
  std::size_t not_once() const {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n_; ++i) bad += base_[sizeof(std::uint64_t) + i] != 1 ? 1 : 0;
    return bad;
  }

 private:
  std::atomic_ref<std::uint64_t> fired() { return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base_)); }

  std::size_t n_;
  std::size_t size_;
  unsigned char* base_ = nullptr;
};

std::string schedule_id(std::size_t i) { return "f" + std::to_string(i); }

std::size_t index_of(const std::string& id) {
  std::size_t i = 0;
  const auto [p, ec] = std::from_chars(id.data() + 1, id.data() + id.size(), i);
  if (id.empty() || id[0] != 'f' || ec != std::errc{} || p != id.data() + id.size())
    throw std::runtime_error("fleet: unexpected schedule id '" + id + "'");
  return i;
}

std::size_t to_size(std::string_view s) {
  std::size_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) throw std::invalid_argument("fleet child: bad number '" + std::string(s) + "'");
  return v;
}

double cpu_seconds_self() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// ---- a child process with a line protocol on its stdin/stdout --------------

class child {
 public:
  child(const char* self, const std::vector<std::string>& args) {
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    ::posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    ::posix_spawn_file_actions_addclose(&fa, to[1]);
    ::posix_spawn_file_actions_addclose(&fa, from[0]);
    std::vector<char*> argv{const_cast<char*>(self)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, self, &fa, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&fa);
    ::close(to[0]);
    ::close(from[1]);
    if (rc != 0) {
      ::close(to[1]);
      ::close(from[0]);
      throw std::system_error(rc, std::generic_category(), "posix_spawn");
    }
    in_ = to[1];
    out_ = ::fdopen(from[0], "r");
  }
  ~child() {
    if (in_ >= 0) ::close(in_);
    if (out_ != nullptr) ::fclose(out_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  void say(std::string_view line) {
    const std::string l = std::string(line) + "\n";
    if (::write(in_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
      throw std::runtime_error("fleet: a worker process went away");
  }
  /// The next line the child printed, or an exception if it exited.
  std::string hear() {
    char buf[256];
    if (std::fgets(buf, sizeof buf, out_) == nullptr) throw std::runtime_error("fleet: a worker process failed");
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }
  /// Waits for the exit; throws unless it exited with 0.
  void join() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("fleet: a worker process failed");
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  std::FILE* out_ = nullptr;
};

// "cpu <seconds>" → seconds
double cpu_of(const std::string& line) {
  if (line.rfind("cpu ", 0) != 0) throw std::runtime_error("fleet: unexpected worker line '" + line + "'");
  return std::strtod(line.c_str() + 4, nullptr);
}

// Where the children find Redis: "<port>" of one server, or
// "cluster:<port>,<port>,..." of a cluster's masters.
cd::scheduler_options child_options(const std::string& where, const std::string& ns, std::uint32_t partitions) {
  cd::scheduler_options o;
  const std::string_view cluster = "cluster:";
  if (where.rfind(cluster, 0) == 0) {
    std::string_view rest = std::string_view(where).substr(cluster.size());
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto port = static_cast<std::uint16_t>(to_size(rest.substr(0, comma)));
      o.redis.cluster.seeds.push_back({"127.0.0.1", port});
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  } else {
    o.redis.port = static_cast<std::uint16_t>(to_size(where));
  }
  o.redis.request_timeout = std::chrono::seconds(60);
  o.name_space = ns;
  o.partitions = partitions;
  return o;
}

std::string wait_line() {
  std::string line;
  if (!std::getline(std::cin, line)) throw std::runtime_error("fleet child: the parent went away");
  return line;
}

}  // namespace

// argv: role where namespace partitions tally n from count
int run_fleet_child(int argc, char** argv) {
  if (argc != 8) throw std::invalid_argument("fleet child: wrong arguments");
  const std::string role = argv[0];
  const std::string where = argv[1];
  const std::string ns = argv[2];
  const auto partitions = static_cast<std::uint32_t>(to_size(argv[3]));
  const std::size_t n = to_size(argv[5]);
  const std::size_t from = to_size(argv[6]);
  const std::size_t count = to_size(argv[7]);
  tally shared(argv[4], n, false);

  boost::asio::thread_pool work(1);
  cd::scheduler s(work.get_executor(), child_options(where, ns, partitions));
  (void)s.async_server_time(boost::asio::use_future).get();  // connected, functions loaded
  if (role == "create") {
    std::vector<cd::schedule_spec> specs(count);
    for (std::size_t i = 0; i < count; ++i) {
      specs[i].id = schedule_id(from + i);
      specs[i].task = "bench";
      specs[i].payload = std::string(32, 'p');
    }
    std::cout << "ready" << std::endl;
    if (wait_line() != "go") return 1;
    const double c0 = cpu_seconds_self();
    const auto results = s.async_upsert_schedules(std::move(specs), boost::asio::use_future).get();
    for (const auto& r : results)
      if (r.outcome != cd::upsert_outcome::created) throw std::runtime_error("fleet: not created: " + r.id + " " + r.error);
    std::cout << "cpu " << cpu_seconds_self() - c0 << std::endl;
  } else if (role == "drain") {
    s.register_handler("bench", [&](const cd::fire_context& c) { shared.mark(index_of(c.schedule_id)); });
    std::cout << "ready" << std::endl;
    if (wait_line() != "go") return 1;
    const double c0 = cpu_seconds_self();
    s.start();
    if (wait_line() != "stop") return 1;
    s.stop();
    std::cout << "cpu " << cpu_seconds_self() - c0 << std::endl;
  } else {
    throw std::invalid_argument("fleet child: unknown role '" + role + "'");
  }
  work.join();
  return 0;
}

int run_fleet(const fleet_options& o, const char* self) {
  namespace dt = chronopool::durable::test;
  std::unique_ptr<dt::redis_server> server;
  std::unique_ptr<dt::cluster_group> cluster;
  std::vector<std::uint16_t> ports;  // the servers (masters) whose CPU counts
  std::string where;                 // what the children are told
  if (o.cluster_masters == 0) {
    dt::redis_server_options so;
    so.executable = o.server;
    so.extra_args = {"--appendfsync", o.fsync};
    server = std::make_unique<dt::redis_server>(so);
    server->start();  // appendonly yes, noeviction
    ports = {server->port()};
    where = std::to_string(server->port());
  } else {
    cluster = std::make_unique<dt::cluster_group>(o.server, o.cluster_masters, 0, std::string{}, nullptr,
                                                  std::vector<std::string>{"--appendonly", "yes", "--appendfsync", o.fsync});
    ports = cluster->master_ports();
    where = "cluster:";
    for (std::size_t i = 0; i < ports.size(); ++i) where += (i == 0 ? "" : ",") + std::to_string(ports[i]);
  }
  const auto redis_cpu = [&] {
    double total = 0;
    for (const auto p : ports) total += server_cpu_s(p);
    return total;
  };
  const auto tally_dir = std::filesystem::temp_directory_path() / fmt::format("chronopool-fleet-{}", ::getpid());
  std::filesystem::create_directories(tally_dir);
  const std::string tally_path = (tally_dir / "tally").string();

  std::vector<double> create_rate, drain_rate, create_redis_us, drain_redis_us, create_cpu_us, drain_cpu_us;
  // Redis memory per pending schedule (summed over the masters) and the
  // largest master's share of it: what a capacity plan needs.
  std::vector<double> bytes_per_schedule, largest_share;
  const auto memory = [&] {
    std::vector<double> m;
    for (const auto p : ports) m.push_back(server_memory_bytes(p));
    return m;
  };
  for (int rep = 0; rep <= o.reps; ++rep) {  // rep 0 warms up
    const std::string ns = fmt::format("fleet{}", rep);
    tally shared(tally_path, o.n, true);
    auto phase = [&](const std::string& role, std::vector<double>& rate, std::vector<double>& redis_us,
                     std::vector<double>& cpu_us) {
      std::vector<std::unique_ptr<child>> kids;
      for (std::size_t w = 0; w < o.workers; ++w) {
        const std::size_t from = o.n * w / o.workers;
        const std::size_t to = o.n * (w + 1) / o.workers;
        kids.push_back(std::make_unique<child>(
            self, std::vector<std::string>{"--fleet-child", role, where, ns, std::to_string(o.partitions), tally_path,
                                           std::to_string(o.n), std::to_string(from), std::to_string(to - from)}));
      }
      for (auto& k : kids)
        if (k->hear() != "ready") throw std::runtime_error("fleet: a worker did not get ready");
      const double r0 = redis_cpu();
      const auto t0 = steady::now();
      for (auto& k : kids) k->say("go");
      double cpu = 0;
      if (role == "create") {
        for (auto& k : kids) cpu += cpu_of(k->hear());
      } else {
        const auto limit = t0 + std::chrono::minutes(5);
        while (shared.count() < o.n) {
          if (steady::now() > limit)
            throw std::runtime_error(fmt::format("fleet: {} of {} fires after 5 minutes", shared.count(), o.n));
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
      }
      const double secs = std::chrono::duration<double>(steady::now() - t0).count();
      const double r1 = redis_cpu();
      if (role == "drain") {
        for (auto& k : kids) k->say("stop");
        for (auto& k : kids) cpu += cpu_of(k->hear());
      }
      for (auto& k : kids) k->join();
      if (rep == 0) return;
      const double n = static_cast<double>(o.n);
      rate.push_back(n / secs);
      redis_us.push_back((r1 - r0) * 1e6 / n);
      cpu_us.push_back(cpu * 1e6 / n);
    };
    const auto before = memory();
    phase("create", create_rate, create_redis_us, create_cpu_us);
    if (rep != 0) {
      const auto after = memory();
      double total = 0, largest = 0;
      for (std::size_t i = 0; i < ports.size(); ++i) {
        total += after[i] - before[i];
        largest = std::max(largest, after[i] - before[i]);
      }
      bytes_per_schedule.push_back(total / static_cast<double>(o.n));
      largest_share.push_back(total > 0 ? 100.0 * largest / total : 0.0);
    }
    phase("drain", drain_rate, drain_redis_us, drain_cpu_us);
    if (const std::size_t bad = shared.not_once(); bad != 0)
      throw std::runtime_error(fmt::format("fleet: {} of {} schedules did not fire exactly once", bad, o.n));
  }

  auto cell = [](const std::vector<double>& v, const char* f) {
    const auto s = bench::summarize(v);
    if (v.size() == 1) return fmt::format(fmt::runtime(f), s.median);
    return fmt::format(fmt::runtime(std::string(f) + " ({}–{})"), s.median, fmt::format(fmt::runtime(f), s.min),
                       fmt::format(fmt::runtime(f), s.max));
  };
  fmt::print("# chronopool-durable-bench --fleet {}{}\n\n", o.workers,
             o.cluster_masters == 0 ? std::string() : fmt::format(" --cluster {} --partitions {}", o.cluster_masters, o.partitions));
  const std::string servers =
      o.cluster_masters == 0 ? std::string("one redis-server")
                             : fmt::format("a Redis Cluster of {} masters (no replicas)", o.cluster_masters);
  fmt::print("{} worker processes on {} (appendonly yes, appendfsync {}), a namespace of {} partition{}, {} "
             "one-shots per repetition, {} repetitions after one warm-up; median (min–max). Redis CPU is the "
             "sum over the servers.\n\n",
             o.workers, servers, o.fsync, o.partitions, o.partitions == 1 ? "" : "s", o.n, o.reps);
  fmt::print("| phase | per second | Redis CPU µs each | workers' CPU µs each |\n|---|---:|---:|---:|\n");
  fmt::print("| create (async_upsert_schedules, one call per process) | {} | {} | {} |\n", cell(create_rate, "{:.0f}"),
             cell(create_redis_us, "{:.1f}"), cell(create_cpu_us, "{:.1f}"));
  fmt::print("| drain (started schedulers, claim + handler + ack) | {} | {} | {} |\n", cell(drain_rate, "{:.0f}"),
             cell(drain_redis_us, "{:.1f}"), cell(drain_cpu_us, "{:.1f}"));
  fmt::print("\nRedis memory per pending schedule (used_memory after the creations minus before, summed over "
             "the servers): {} B; the largest server's share of it: {} %.\n",
             cell(bytes_per_schedule, "{:.0f}"), cell(largest_share, "{:.1f}"));
  fmt::print("\nEvery schedule fired exactly once in every repetition.\n");
  std::error_code ec;
  std::filesystem::remove_all(tally_dir, ec);
  return 0;
}

}  // namespace chronopool::bench_durable

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "worker.hpp"

#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

namespace chronopool::durable::chaos {

namespace {

std::atomic<bool> worker_terminate_requested{false};

std::int64_t worker_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One write() per line with O_APPEND: whole lines, even from several processes.
void append_line(int fd, const std::string& line) {
  if (::write(fd, line.data(), line.size()) < 0) throw std::runtime_error("log write failed");
}

}  // namespace

redis_options redis_target(const std::string& spec) {
  redis_options r;
  const std::string cluster = "cluster:";
  if (spec.rfind(cluster, 0) != 0) {
    r.port = static_cast<std::uint16_t>(std::stoul(spec));
    return r;
  }
  std::size_t at = cluster.size();
  while (at < spec.size()) {
    auto comma = spec.find(',', at);
    if (comma == std::string::npos) comma = spec.size();
    r.cluster.seeds.push_back({"127.0.0.1", static_cast<std::uint16_t>(std::stoul(spec.substr(at, comma - at)))});
    at = comma + 1;
  }
  if (r.cluster.seeds.empty()) throw std::invalid_argument("a cluster target without seeds: " + spec);
  return r;
}

scheduler_options worker_options(const redis_options& redis, const std::string& ns, int lease_ms,
                                 std::uint32_t partitions) {
  using namespace std::chrono_literals;
  scheduler_options o;
  o.redis = redis;
  // Short timeouts: a stalled connection must be noticed well within a
  // lease, so extension can retry on a fresh one.
  o.redis.connect_timeout = std::chrono::milliseconds(lease_ms / 4);
  o.redis.request_timeout = std::chrono::milliseconds(lease_ms / 4);
  o.name_space = ns;
  o.partitions = partitions;
  o.lease = std::chrono::milliseconds(lease_ms);
  o.max_poll = 200ms;
  o.reconnect_min = 20ms;
  o.reconnect_max = 200ms;
  o.failure.initial_backoff = 50ms;
  o.failure.max_backoff = 50ms;
  // Kills and stalls make leases run out: each counts as an attempt. The
  // tick schedules must never lose a fire, so they are never given up (the
  // poison, hang and orphan schedules have failure policies of their own).
  o.failure.max_attempts = 1000000;
  return o;
}

int run_worker(const std::string& target, const std::string& ns, const std::string& log, int lease_ms,
               std::uint32_t partitions) {
  ::signal(SIGTERM, [](int) { worker_terminate_requested = true; });
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  const int events = ::open((log + ".events").c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0 || events < 0) return 2;
  // Four threads: hung handlers hold theirs for three timeouts.
  chronopool::scheduled_thread_pool pool(4);
  auto options = worker_options(redis_target(target), ns, lease_ms, partitions);
  // Only data_lost matters to the checker; poison and orphan fires log a
  // warning at each attempt, which would drown the harness's report.
  options.log_handler = [events](const chronopool::log_record& r) {
    if (r.event == "data_lost") append_line(events, fmt::format("data_lost {} {}\n", ::getpid(), worker_now_ms()));
  };
  scheduler sched(pool.get_executor(), options);
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  std::mutex rng_mutex;
  const auto log_run = [fd](const fire_context& f, std::int64_t start) {
    append_line(fd, fmt::format("{} {} {} {} {}\n", f.fire_id, f.token, ::getpid(), start, worker_now_ms()));
  };
  sched.register_handler(tick_task, [&](const fire_context& f) {
    const auto start = worker_now_ms();
    int work = 0;
    {
      std::lock_guard lk(rng_mutex);
      work = std::uniform_int_distribution<int>(2, 30)(rng);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(work));
    log_run(f, start);
  });
  sched.register_handler(poison_task, [](const fire_context&) { throw std::runtime_error("poisoned payload"); });
  sched.register_handler(
      hang_task,
      [&](const fire_context& f) {
        const auto start = worker_now_ms();
        const auto due = std::chrono::duration_cast<std::chrono::milliseconds>(f.due.time_since_epoch()).count();
        const auto period = std::stoll(f.payload);  // the schedule's period, in ms
        if (f.attempt == 1 || (due / period) % 2 == 0) {
          // Hung, deaf to its stop token: abandoned at its timeout, its late
          // return ignored; so it logs nothing.
          std::this_thread::sleep_for(3 * hang_timeout);
          return;
        }
        log_run(f, start);
      },
      handler_options{hang_timeout});
  sched.start();
  while (!worker_terminate_requested) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sched.stop();
  const auto st = sched.stats();
  const auto stats = fmt::format("{} {} {} {} {} {} {} {} {} {} {}\n", ::getpid(), st.claimed, st.acked,
                                 st.stale_acks, st.released, st.leases_lost, st.reconnects, st.dead_lettered,
                                 st.timed_out, st.no_handler, st.data_lost);
  const int sfd = ::open((log + ".stats").c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (sfd >= 0) {
    if (::write(sfd, stats.data(), stats.size()) < 0) { /* the verdict does not depend on it */ }
    ::close(sfd);
  }
  // The pool first: timed-out handlers, which stop() does not wait for,
  // finish before the scheduler and the files they use go.
  pool.shutdown();
  pool.join();
  ::close(fd);
  ::close(events);
  return 0;
}

}  // namespace chronopool::durable::chaos

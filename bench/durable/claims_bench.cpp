// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable-bench: how many due fires chronopool::durable's Redis
// functions hand out per second, against a naive "pop due jobs from a
// sorted set" script (the Sidekiq/BullMQ-style poller without leases or
// fencing tokens), on one private redis-server and the same data set size.
//
// Both sides go through detail::redis_connection, the client the scheduler
// uses, on an io_context this thread runs: the figures include our client.
// Pipelining = several async_execute calls issued before the replies are read.
//
// Modes (per repetition, each on a namespace holding N due one-shots):
//   seq      claim n=1, then ack it; one request on the wire at a time
//   pipe<k>  claim n=1 with k requests outstanding (k workers), then the acks likewise
//   batch<n> claim n at a time, then ack those n fires pipelined (what one
//            scheduler's control thread does)
// The peer runs the same modes with its pop script and has nothing to ack.
#include "../stats.hpp"
#include "creations_bench.hpp"
#include "fleet_bench.hpp"

#include <redis_server.hpp>

#include <chronopool/durable/detail/function_calls.hpp>
#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/detail/redis_value.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#ifndef CHRONOPOOL_REDIS_SERVER
#define CHRONOPOOL_REDIS_SERVER "redis-server"
#endif

namespace {

namespace dd = chronopool::durable::detail;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct options {
  std::size_t n = 200'000;  // due schedules in each namespace
  int reps = 5;
  std::size_t depth = 16;   // outstanding requests in the pipelined modes
  std::string fsync = "everysec";
  std::string server = CHRONOPOOL_REDIS_SERVER;
  bool quick = false;
  bool periodic = false;  // fixed-rate schedules: acks take the periodic path
  bool creations = false;  // creations/s, one at a time vs bulk (creations_bench.cpp)
  std::size_t fleet = 0;   // worker processes of the fleet mode (fleet_bench.cpp); 0: off
  std::size_t cluster = 0;  // fleet mode: masters of a Redis Cluster instead of one server
  std::uint32_t partitions = 1;  // fleet mode: the namespace's partitions
  bool n_given = false;
  bool reps_given = false;
};

// ---- a blocking façade over the pipelined connection ----------------------

class client {
 public:
  explicit client(std::uint16_t port) : conn_(io_.get_executor(), make_options(port)) {
    std::optional<boost::system::error_code> r;
    conn_.async_connect([&](boost::system::error_code ec) { r = ec; });
    run_until([&] { return r.has_value(); });
    if (*r) throw std::runtime_error("connect: " + r->message());
  }

  /// One round trip; an error reply is an exception.
  dd::redis_value call(std::vector<std::string> args) {
    std::optional<dd::redis_value> out;
    conn_.async_execute(std::move(args), [&](boost::system::error_code ec, dd::redis_value v) {
      out = checked(ec, std::move(v));
    });
    run_until([&] { return out.has_value(); });
    return std::move(*out);
  }

  /// Sends make(i) for i in [0, count) keeping `window` requests outstanding:
  /// every reply (given to on_reply(i, value)) lets the next request go. The
  /// connection coalesces requests queued during a write into the next one.
  template <class Make, class OnReply>
  void pipeline(std::size_t count, std::size_t window, Make make, OnReply on_reply) {
    std::size_t sent = 0;
    std::size_t done = 0;
    auto send = [&](auto& self) -> void {
      const std::size_t i = sent++;
      conn_.async_execute(make(i), [&, i](boost::system::error_code ec, dd::redis_value v) {
        on_reply(i, checked(ec, std::move(v)));
        ++done;
        if (sent < count) self(self);
      });
    };
    while (sent < count && sent < window) send(send);
    run_until([&] { return done == count; });
  }

 private:
  static chronopool::durable::redis_options make_options(std::uint16_t port) {
    chronopool::durable::redis_options o;
    o.port = port;
    o.request_timeout = std::chrono::seconds(60);  // a full pipeline under an AOF rewrite stays in time
    return o;
  }

  static dd::redis_value checked(boost::system::error_code ec, dd::redis_value v) {
    if (ec) throw std::runtime_error("redis: " + ec.message());
    if (v.is_error()) throw std::runtime_error("redis error reply: " + v.str);
    return v;
  }

  template <class Pred>
  void run_until(Pred pred) {
    // run_one, not run: the connection keeps a read pending, so run() would
    // not return. Exceptions thrown by handlers come out of run_one.
    io_.restart();
    while (!pred())
      if (io_.run_one() == 0) io_.restart();
  }

  boost::asio::io_context io_{1};
  dd::redis_connection conn_;
};

// ---- the two sides ---------------------------------------------------------

// The peer: a due-jobs poller's script. Members are the jobs themselves
// (id|task|payload), as in Sidekiq's schedule set; `now` comes from the
// caller, as it does there.
constexpr std::string_view peer_script =
    "local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))\n"
    "if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end\n"
    "return ids\n";

const std::string payload(32, 'p');  // a small argument, e.g. a customer id in JSON
constexpr std::int64_t lease_ms = 600'000;  // nothing expires during a run

// Due times: all in the past (1970 + i ms), distinct, in put order.
std::int64_t due_of(std::size_t i) { return 1'000'000 + static_cast<std::int64_t>(i); }
std::string id_of(std::size_t i) { return "job" + std::to_string(i); }

struct ours {
  dd::key_space ks;
  std::size_t next = 0;  // ids are never reused: a top-up adds fresh ones behind the rest

  bool periodic = false;  // fixed rate, period one day: an ack enqueues the next occurrence

  ours(std::string ns, bool fixed_rate) : ks(ns), periodic(fixed_rate) {}

  std::vector<std::string> put(std::size_t i) const {
    dd::put_request r;
    r.id = id_of(i);
    r.task = "bench";
    r.payload = payload;
    r.absolute = true;
    r.at_ms = due_of(i);
    if (periodic) {
      r.kind = dd::schedule_kind::fixed_rate;
      r.period_ms = 86'400'000;
    }
    return dd::put_call(ks, r);
  }
  std::vector<std::string> claim(std::size_t n) const { return dd::claim_call(ks, "bench-owner", lease_ms, n); }
};

struct peer {
  std::string key;
  std::string sha;
  std::size_t next = 0;

  peer(std::string ns, std::string script_sha) : key("peer:{" + ns + "}:due"), sha(std::move(script_sha)) {}

  std::vector<std::string> put(std::size_t i) const {
    return {"ZADD", key, std::to_string(due_of(i)), id_of(i) + "|bench|" + payload};
  }
  std::vector<std::string> claim(std::size_t n) const {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return {"EVALSHA", sha, "1", key, std::to_string(now.count()), std::to_string(n)};
  }
};

constexpr std::size_t put_window = 256;

// Adds `count` fresh due schedules; returns puts per second.
template <class Side>
double fill(client& c, Side& s, std::size_t count) {
  const std::size_t first = s.next;
  s.next += count;
  const auto t0 = clock_type::now();
  c.pipeline(count, put_window, [&](std::size_t i) { return s.put(first + i); }, [](std::size_t, const dd::redis_value&) {});
  return static_cast<double>(count) / seconds_since(t0);
}

// ---- one mode ----------------------------------------------------------------

struct result {
  double claims_per_s = 0;
  double acks_per_s = 0;    // ours only
  double fires_per_s = 0;   // claimed and acked (ours), popped (peer): count / total time
  double p50_us = 0;        // seq only: one claim round trip
  double p99_us = 0;
};

struct mode {
  std::string name;
  std::size_t batch;   // n per claim
  std::size_t window;  // claims outstanding
  std::size_t ops;     // fires to claim per repetition
};

std::size_t expect_fires(const dd::redis_value& v, std::size_t n, dd::claim_result& out) {
  if (const auto ec = dd::parse_claim(v, out)) throw std::runtime_error("cp_claim_v5 reply: " + ec.message());
  if (out.fires.size() != n) throw std::runtime_error("cp_claim_v5 returned fewer fires than are due");
  return n;
}

void expect_acked(const dd::redis_value& v) {
  bool acked = false;
  std::int64_t next_due = 0;
  if (const auto ec = dd::parse_ack(v, acked, next_due)) throw std::runtime_error("cp_ack_v5 reply: " + ec.message());
  if (!acked) throw std::runtime_error("cp_ack_v5 did not ack");
}

void expect_popped(const dd::redis_value& v, std::size_t n) {
  if (!v.is_array() || v.elements.size() != n) throw std::runtime_error("peer script popped fewer jobs than are due");
}

struct token_of {
  std::string id;
  std::uint64_t token;
};

result run_ours(client& c, ours& s, const mode& m) {
  result r;
  double claim_s = 0;
  double ack_s = 0;
  std::vector<double> rtt_us;
  std::vector<token_of> held;
  held.reserve(m.ops);
  dd::claim_result cr;
  if (m.window == 1) {
    // seq and batch<n>: one claim at a time, then its fires' acks all at once.
    for (std::size_t done = 0; done < m.ops; done += m.batch) {
      auto t0 = clock_type::now();
      expect_fires(c.call(s.claim(m.batch)), m.batch, cr);
      const double dt = seconds_since(t0);
      claim_s += dt;
      if (m.batch == 1) rtt_us.push_back(dt * 1e6);
      t0 = clock_type::now();
      c.pipeline(cr.fires.size(), cr.fires.size(),
                 [&](std::size_t i) { return dd::ack_call(s.ks, cr.fires[i].id, cr.fires[i].token); },
                 [](std::size_t, const dd::redis_value& v) { expect_acked(v); });
      ack_s += seconds_since(t0);
    }
  } else {
    // pipe<k>: k claims in flight, then k acks in flight; timed apart.
    const std::size_t calls = m.ops / m.batch;
    auto t0 = clock_type::now();
    c.pipeline(calls, m.window, [&](std::size_t) { return s.claim(m.batch); },
               [&](std::size_t, const dd::redis_value& v) {
                 dd::claim_result one;
                 expect_fires(v, m.batch, one);
                 for (auto& f : one.fires) held.push_back({std::move(f.id), f.token});
               });
    claim_s = seconds_since(t0);
    t0 = clock_type::now();
    c.pipeline(held.size(), m.window, [&](std::size_t i) { return dd::ack_call(s.ks, held[i].id, held[i].token); },
               [](std::size_t, const dd::redis_value& v) { expect_acked(v); });
    ack_s = seconds_since(t0);
  }
  const auto ops = static_cast<double>(m.ops);
  r.claims_per_s = ops / claim_s;
  r.acks_per_s = ops / ack_s;
  r.fires_per_s = ops / (claim_s + ack_s);
  if (!rtt_us.empty()) {
    std::sort(rtt_us.begin(), rtt_us.end());
    r.p50_us = bench::quantile_sorted(rtt_us, 0.50);
    r.p99_us = bench::quantile_sorted(rtt_us, 0.99);
  }
  return r;
}

result run_peer(client& c, peer& s, const mode& m) {
  result r;
  std::vector<double> rtt_us;
  const auto t0 = clock_type::now();
  if (m.window == 1) {
    for (std::size_t done = 0; done < m.ops; done += m.batch) {
      const auto t1 = clock_type::now();
      expect_popped(c.call(s.claim(m.batch)), m.batch);
      if (m.batch == 1) rtt_us.push_back(seconds_since(t1) * 1e6);
    }
  } else {
    c.pipeline(m.ops / m.batch, m.window, [&](std::size_t) { return s.claim(m.batch); },
               [&](std::size_t, const dd::redis_value& v) { expect_popped(v, m.batch); });
  }
  r.claims_per_s = r.fires_per_s = static_cast<double>(m.ops) / seconds_since(t0);
  if (!rtt_us.empty()) {
    std::sort(rtt_us.begin(), rtt_us.end());
    r.p50_us = bench::quantile_sorted(rtt_us, 0.50);
    r.p99_us = bench::quantile_sorted(rtt_us, 0.99);
  }
  return r;
}

// ---- driver ------------------------------------------------------------------

struct samples {
  std::vector<double> claims, acks, fires, p50, p99, peer_claims, peer_p50, peer_p99, ratio, ratio_fires;
};

std::size_t to_size(std::string_view flag, std::string_view s, std::size_t lo) {
  std::size_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v < lo)
    throw std::invalid_argument(fmt::format("{} needs an integer >= {}, got '{}'", flag, lo, s));
  return v;
}

void usage(std::FILE* out) {
  fmt::print(out,
             "usage: chronopool-durable-bench [--quick] [--n N] [--reps R] [--depth K] [--fsync everysec|always]\n"
             "                                [--periodic] [--creations] [--fleet W [--cluster M] [--partitions P]]\n"
             "                                [--redis-server PATH]\n"
             "  --quick         N = 2,000 and one repetition, for a smoke test\n"
             "  --n N           due one-shot schedules in each namespace (default 200,000)\n"
             "  --reps R        repetitions after one warm-up (default 5); medians are reported\n"
             "  --depth K       outstanding claims in the pipelined mode (default 16)\n"
             "  --fsync MODE    appendfsync of the private redis-server (default everysec)\n"
             "  --periodic      fixed-rate schedules instead of one-shots: each ack enqueues the\n"
             "                  next occurrence (and records the run in the schedule's history)\n"
             "  --creations     schedule creations per second through the scheduler's API instead:\n"
             "                  one request at a time against async_upsert_schedules (--n: default\n"
             "                  10,000 per bulk call; --reps: default 3)\n"
             "  --fleet W       W worker processes on one Redis instead: creations/s through\n"
             "                  async_upsert_schedules, then a backlog of due one-shots drained by\n"
             "                  W started schedulers (--n: default 100,000; --reps: default 3)\n"
             "  --cluster M     with --fleet: a Redis Cluster of M (>= 3) masters instead of one server\n"
             "  --partitions P  with --fleet: the namespace's partition count (default 1)\n"
             "  --redis-server  the binary to start (default {})\n",
             CHRONOPOOL_REDIS_SERVER);
}

options parse(int argc, char** argv) {
  options o;
  auto value = [&](int& i) -> std::string_view {
    if (i + 1 >= argc) throw std::invalid_argument(fmt::format("{} needs a value", argv[i]));
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      o.quick = true;
      o.n = 2'000;
      o.reps = 1;
    } else if (a == "--periodic") {
      o.periodic = true;
    } else if (a == "--creations") {
      o.creations = true;
    } else if (a == "--fleet") {
      o.fleet = to_size(a, value(i), 1);
    } else if (a == "--cluster") {
      o.cluster = to_size(a, value(i), 3);
    } else if (a == "--partitions") {
      o.partitions = static_cast<std::uint32_t>(to_size(a, value(i), 1));
    } else if (a == "--n") {
      o.n = to_size(a, value(i), 100);
      o.n_given = true;
    } else if (a == "--reps") {
      o.reps = static_cast<int>(to_size(a, value(i), 1));
      o.reps_given = true;
    } else if (a == "--depth") {
      o.depth = to_size(a, value(i), 2);
    } else if (a == "--fsync") {
      o.fsync = std::string(value(i));
      if (o.fsync != "everysec" && o.fsync != "always") throw std::invalid_argument("--fsync: everysec or always");
    } else if (a == "--redis-server") {
      o.server = std::string(value(i));
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument(fmt::format("unknown argument '{}'", a));
    }
  }
  return o;
}

std::string field(const std::string& info, std::string_view name) {
  const auto at = info.find(std::string(name) + ":");
  if (at == std::string::npos) return "?";
  const auto from = at + name.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string cell(const std::vector<double>& v, const char* f = "{:.0f}") {
  if (v.empty()) return "—";
  const auto s = bench::summarize(v);
  if (v.size() == 1) return fmt::format(fmt::runtime(f), s.median);
  return fmt::format(fmt::runtime(std::string(f) + " ({}–{})"), s.median, fmt::format(fmt::runtime(f), s.min),
                     fmt::format(fmt::runtime(f), s.max));
}

// BGREWRITEAOF and wait for it: after FLUSHALL that leaves a near-empty AOF.
void rewrite_aof(client& c) {
  c.call({"BGREWRITEAOF"});
  for (;;) {
    const auto info = c.call({"INFO", "persistence"}).str;
    if (field(info, "aof_rewrite_in_progress") == "0" && field(info, "aof_rewrite_scheduled") == "0") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int run(const options& o) {
  chronopool::durable::test::redis_server_options so;
  so.executable = o.server;
  chronopool::durable::test::redis_server server(so);
  server.start();  // appendonly yes, appendfsync always, noeviction
  client c(server.port());
  // The helper starts Redis with appendfsync always (the tests' setting);
  // the default here is everysec, what docs/durable.md suggests for throughput.
  c.call({"CONFIG", "SET", "appendfsync", o.fsync});
  // A run appends ~1.4 GB to the AOF. Automatic rewrites would fork and take
  // one of the cores at random moments, hitting whichever side runs then, so
  // they are off and the AOF is rewritten between repetitions instead.
  c.call({"CONFIG", "SET", "auto-aof-rewrite-percentage", "0"});
  const auto fsync = c.call({"CONFIG", "GET", "appendfsync"}).elements.at(1).str;
  const auto aof = c.call({"CONFIG", "GET", "appendonly"}).elements.at(1).str;
  const auto version = field(c.call({"INFO", "server"}).str, "redis_version");

  // Sequential claims cost a round trip each: fewer of them keep the run short.
  const std::vector<mode> modes{
      {"seq", 1, 1, o.n / 10},
      {fmt::format("pipe{}", o.depth), 1, o.depth, o.n / 4 / o.depth * o.depth},
      {"batch16", 16, 1, o.n / 4 / 16 * 16},
      {"batch64", 64, 1, o.n / 4 / 64 * 64},
  };

  fmt::print("# chronopool-durable-bench\n\n");
  fmt::print("redis-server {} (private, loopback), appendonly {}, appendfsync {} (AOF rewritten between repetitions, "
             "not during them); N = {} due {} per "
             "namespace; {} repetition(s) after a warm-up; pipeline depth {}; load average at start {}\n\n",
             version, aof, fsync, o.n, o.periodic ? "fixed-rate schedules" : "one-shots", o.reps, o.depth,
             load_average());
  fmt::print(stderr, "redis-server on port {}, data in {}\n", server.port(), server.dir().string());

  std::vector<samples> per_mode(modes.size());
  std::vector<double> puts, peer_puts;
  for (int rep = o.quick ? 0 : -1; rep < o.reps; ++rep) {
    const bool warm_up = rep < 0;
    // A clean server per repetition: FLUSHALL keeps functions and scripts,
    // but (re)loading both is cheap and makes that not matter.
    c.call({"FLUSHALL"});
    rewrite_aof(c);
    c.call(dd::load_functions_call());
    const auto sha = c.call({"SCRIPT", "LOAD", std::string(peer_script)}).str;
    const auto ns = fmt::format("bench{}", rep + 1);
    ours us(ns, o.periodic);
    peer them(ns, sha);
    const std::size_t n = warm_up ? o.n / 10 : o.n;
    const double put_rate = fill(c, us, n);
    const double peer_put_rate = fill(c, them, n);
    if (!warm_up) {
      puts.push_back(put_rate);
      peer_puts.push_back(peer_put_rate);
    }
    for (std::size_t k = 0; k < modes.size(); ++k) {
      mode m = modes[k];
      if (warm_up) m.ops = std::max<std::size_t>(m.ops / 10 / m.batch * m.batch, m.batch);
      // Alternate who goes first, so a slow phase of the machine hits both.
      result a, b;
      const bool ours_first = rep % 2 == 0;
      for (int side = 0; side < 2; ++side) {
        if ((side == 0) == ours_first) {
          a = run_ours(c, us, m);
          fill(c, us, m.ops);  // back to n due schedules, outside the timing
        } else {
          b = run_peer(c, them, m);
          fill(c, them, m.ops);
        }
      }
      fmt::print(stderr, "{} {:8}: ours {:8.0f} claims/s {:8.0f} acks/s | peer {:8.0f} pops/s\n",
                 warm_up ? "warm-up" : fmt::format("rep {}", rep + 1), m.name, a.claims_per_s, a.acks_per_s,
                 b.claims_per_s);
      if (warm_up) continue;
      auto& s = per_mode[k];
      s.claims.push_back(a.claims_per_s);
      s.acks.push_back(a.acks_per_s);
      s.fires.push_back(a.fires_per_s);
      s.peer_claims.push_back(b.claims_per_s);
      s.ratio.push_back(a.claims_per_s / b.claims_per_s);
      s.ratio_fires.push_back(a.fires_per_s / b.claims_per_s);
      if (m.batch == 1 && m.window == 1) {
        s.p50.push_back(a.p50_us);
        s.p99.push_back(a.p99_us);
        s.peer_p50.push_back(b.p50_us);
        s.peer_p99.push_back(b.p99_us);
      }
    }
  }

  fmt::print("Per second, median (min–max) of the repetitions. ours/peer: median of the per-repetition "
             "ratios (< 1: ours is slower).\n\n");
  fmt::print("| mode | fires/rep | ours claims/s | ours acks/s | ours claim+ack fires/s | peer pops/s | "
             "ours/peer claims | ours/peer claim+ack |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t k = 0; k < modes.size(); ++k) {
    const auto& s = per_mode[k];
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} |\n", modes[k].name, modes[k].ops, cell(s.claims),
               cell(s.acks), cell(s.fires), cell(s.peer_claims), cell(s.ratio, "{:.2f}"),
               cell(s.ratio_fires, "{:.2f}"));
  }
  std::vector<double> put_ratio;
  for (std::size_t i = 0; i < puts.size(); ++i) put_ratio.push_back(puts[i] / peer_puts[i]);
  fmt::print("\n| | ours | peer | ours/peer |\n|---|---:|---:|---:|\n");
  fmt::print("| fill: puts/s (cp_put_v5 vs ZADD, {} outstanding) | {} | {} | {} |\n", put_window, cell(puts),
             cell(peer_puts), cell(put_ratio, "{:.2f}"));
  const auto& seq = per_mode[0];
  fmt::print("| seq: one claim round trip p50, µs | {} | {} | |\n", cell(seq.p50, "{:.1f}"),
             cell(seq.peer_p50, "{:.1f}"));
  fmt::print("| seq: one claim round trip p99, µs | {} | {} | |\n", cell(seq.p99, "{:.1f}"),
             cell(seq.peer_p99, "{:.1f}"));
  fmt::print("\nmodes: seq = claim n=1 then ack, one request at a time; pipe{0} = claim n=1 with {0} outstanding, "
             "then the acks with {0} outstanding; batchN = claim N at a time, then ack them pipelined. "
             "peer = EVALSHA of ZRANGEBYSCORE due -inf now LIMIT 0 n + ZREM (no leases, no fencing, no ack).\n",
             o.depth);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string_view(argv[1]) == "--fleet-child")
      return chronopool::bench_durable::run_fleet_child(argc - 2, argv + 2);
    const options o = parse(argc, argv);
    if ((o.cluster != 0 || o.partitions != 1) && o.fleet == 0)
      throw std::invalid_argument("--cluster and --partitions go with --fleet");
    if (o.fleet != 0) {
      chronopool::bench_durable::fleet_options f;
      f.workers = o.fleet;
      if (o.n_given || o.quick) f.n = o.n;
      if (o.reps_given || o.quick) f.reps = o.reps;
      f.server = o.server;
      f.fsync = o.fsync;
      f.cluster_masters = o.cluster;
      f.partitions = o.partitions;
      const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
      return chronopool::bench_durable::run_fleet(f, self.c_str());
    }
    if (o.creations) {
      chronopool::bench_durable::creations_options c;
      if (o.n_given || o.quick) c.n = o.n;
      if (o.reps_given || o.quick) c.reps = o.reps;
      c.server = o.server;
      c.fsync = o.fsync;
      return chronopool::bench_durable::run_creations(c);
    }
    return run(o);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "chronopool-durable-bench: {}\n", e.what());
    usage(stderr);
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "chronopool-durable-bench: {}\n", e.what());
    return 1;
  }
}

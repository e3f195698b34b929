// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable's command line, parsed; ISO 8601 times read and written.
#include "arguments.hpp"

#include "schedule_arguments.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>

namespace chronopool::durable::cli {

namespace {

using std::chrono::system_clock;

template <class Int>
bool to_number(std::string_view s, Int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size();
}

struct address {
  std::string host;
  std::uint16_t port;
};

// "host:port" (the port may be left out: @p default_port). IPv6 literals in
// brackets. @p option names the option in errors.
address parse_address(std::string_view text, std::string_view option, std::uint16_t default_port) {
  std::string_view host = text;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) throw usage_error(fmt::format("{}: no ']' in \"{}\"", option, text));
    host = text.substr(1, close - 1);
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') throw usage_error(fmt::format("{}: expected host:port, got \"{}\"", option, text));
      port = rest.substr(1);
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) throw usage_error(fmt::format("{}: no host in \"{}\"", option, text));
  address a{std::string(host), default_port};
  if (!port.empty()) {
    unsigned p = 0;
    if (!to_number(port, p) || p == 0 || p > 65535)
      throw usage_error(fmt::format("{}: port must be 1 to 65535, got \"{}\"", option, port));
    a.port = static_cast<std::uint16_t>(p);
  }
  return a;
}

// Where Redis is: one server (--redis), a cluster (--cluster) or a master
// found through sentinels (--sentinel, --master-name); one of the three.
void check_topology(const invocation& inv, bool redis_given) {
  const bool cluster = !inv.redis.cluster.seeds.empty();
  const bool sentinel = !inv.redis.sentinel.sentinels.empty();
  if (cluster && sentinel) throw usage_error("--cluster and --sentinel exclude each other");
  if ((cluster || sentinel) && redis_given)
    throw usage_error(fmt::format("--redis and {} exclude each other", cluster ? "--cluster" : "--sentinel"));
  if (sentinel && inv.redis.sentinel.master_name.empty()) throw usage_error("--sentinel needs --master-name");
  if (!sentinel && !inv.redis.sentinel.master_name.empty()) throw usage_error("--master-name needs --sentinel");
}

// The operands each command takes (after its name), for the usage check.
std::size_t operands_of(const std::vector<std::string>& c) {
  static const std::set<std::string> one{"show", "pause", "resume", "trigger", "delete"};
  if (c[0] == "list" || c[0] == "time") return 0;
  if (one.count(c[0])) return 1;
  if (c[0] == "backfill") return 3;
  if (c[0] == "upsert") return 2;
  if (c[0] == "dead-letters") {
    if (c.size() < 2) throw usage_error("dead-letters needs a subcommand: list, redrive FIRE_ID or delete FIRE_ID");
    if (c[1] == "list") return 1;
    if (c[1] == "redrive" || c[1] == "delete") return 2;
    throw usage_error(fmt::format("dead-letters: unknown subcommand \"{}\" (list, redrive, delete)", c[1]));
  }
  throw usage_error(fmt::format("unknown command \"{}\"", c[0]));
}

}  // namespace

std::string usage() {
  return R"(usage: chronopool-durable [options] COMMAND [ARGS]

Manages the durable schedules of one namespace in Redis.

commands:
  list [--prefix P] [--limit N]   schedules in id order: kind, period, next due, state
  upsert ID TASK KIND [...]       create a schedule, or update it in place (what ran stays
                                  ran; --replace starts it over). KIND is one of
                                  --every D (fixed rate), --fixed-delay D,
                                  --cron EXPR [--time-zone ZONE] or --once; then
                                  --start TIME | --delay D   the first occurrence (default now)
                                  --payload TEXT, --misfire fire-once-now|skip|catch-up,
                                  --catch-up-max N, --max-attempts N, --backoff D,
                                  --max-backoff D, --history N
  show ID                         one schedule: counts, last error, lease, last runs
  pause ID | resume ID            stop / restart claiming its fires (resume applies its
                                  misfire policy to what it missed)
  trigger ID                      one extra run now (after a running fire of it)
  backfill ID FROM TO             run its occurrences in [FROM, TO) once each
  delete ID                       delete it (paused or not), with its history
  dead-letters list [--limit N]   fires that failed all their attempts
  dead-letters redrive FIRE_ID    run one again
  dead-letters delete FIRE_ID     drop one
  time                            Redis's clock, which decides what is due

Times are ISO 8601 in UTC: 2026-11-28T21:40:00Z, 2026-11-28T21:40:00.250Z or 2026-11-28.
Durations D are a whole number and ms, s, m, h or d: 500ms, 15m.

options:
  --redis HOST:PORT     the Redis server (default 127.0.0.1:6379)
  --cluster HOST:PORT   a node of a Redis Cluster instead (repeat for more seeds)
  --sentinel HOST:PORT  a Redis Sentinel instead (repeat for more; port default 26379),
                        with --master-name NAME, the master the sentinels monitor
  --sentinel-password S the sentinels' own password (default: $CHRONOPOOL_SENTINEL_PASSWORD)
  --user NAME           ACL user
  --password SECRET     password (default: $CHRONOPOOL_REDIS_PASSWORD)
  --tls                 TLS to Redis (implied by the --tls-* options below)
  --tls-ca FILE         CA certificates to verify the server with
  --tls-ca-dir DIR      a directory of CA certificates
  --tls-cert FILE       client certificate, with --tls-key FILE
  --tls-server-name N   the name to verify (default: the host)
  --tls-no-verify       do not verify the server's certificate
  --namespace NS        the schedules' namespace (default "default")
  --partitions N        its partition count, as its schedulers have it (default 1)
  --json                JSON instead of a table
  --help                this text

exit codes: 0 done, 1 the operation failed (unknown id, Redis unreachable, ...), 2 usage.
)";
}

invocation parse(int argc, const char* const* argv) {
  invocation inv;
  schedule_arguments schedule;
  if (const char* pw = std::getenv("CHRONOPOOL_REDIS_PASSWORD"); pw != nullptr) inv.redis.password = pw;
  if (const char* pw = std::getenv("CHRONOPOOL_SENTINEL_PASSWORD"); pw != nullptr) inv.redis.sentinel.password = pw;
  bool redis_given = false;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw usage_error(fmt::format("{} needs a value", a));
      return std::string(args[++i]);
    };
    if (a == "--help" || a == "-h") inv.help = true;
    else if (a == "--redis") {
      const auto at = parse_address(value(), a, 6379);
      inv.redis.host = at.host;
      inv.redis.port = at.port;
      redis_given = true;
    } else if (a == "--cluster") {
      const auto at = parse_address(value(), a, 6379);
      inv.redis.cluster.seeds.push_back({at.host, at.port});
    } else if (a == "--sentinel") {
      const auto at = parse_address(value(), a, 26379);
      inv.redis.sentinel.sentinels.push_back({at.host, at.port});
    } else if (a == "--master-name") inv.redis.sentinel.master_name = value();
    else if (a == "--sentinel-password") inv.redis.sentinel.password = value();
    else if (a == "--user") inv.redis.username = value();
    else if (a == "--password") inv.redis.password = value();
    else if (a.substr(0, 5) == "--tls") {
      auto& tls = inv.redis.tls;
      tls.enabled = true;  // every --tls* option implies --tls
      if (a == "--tls-ca") tls.ca_file = value();
      else if (a == "--tls-ca-dir") tls.ca_dir = value();
      else if (a == "--tls-cert") tls.cert_file = value();
      else if (a == "--tls-key") tls.key_file = value();
      else if (a == "--tls-server-name") tls.server_name = value();
      else if (a == "--tls-no-verify") tls.verify_peer = false;
      else if (a != "--tls") throw usage_error(fmt::format("unknown option \"{}\"", a));
    }
    else if (a == "--namespace") inv.name_space = value();
    else if (a == "--partitions") {
      const auto v = value();
      if (!to_number(std::string_view(v), inv.partitions) || inv.partitions == 0 || inv.partitions > max_partitions)
        throw usage_error(fmt::format("--partitions must be 1 to {}, got \"{}\"", max_partitions, v));
    }
    else if (a == "--json") inv.json = true;
    else if (a == "--prefix") inv.prefix = value();
    else if (a == "--limit") {
      const auto v = value();
      if (!to_number(std::string_view(v), inv.limit) || inv.limit == 0 || inv.limit > 100000)
        throw usage_error(fmt::format("--limit must be 1 to 100000, got \"{}\"", v));
    } else if (schedule.take(a, value)) {
      // upsert's options
    } else if (a.size() > 1 && a.front() == '-') {
      throw usage_error(fmt::format("unknown option \"{}\"", a));
    } else {
      inv.command.emplace_back(a);
    }
  }
  if (inv.help) return inv;
  check_topology(inv, redis_given);
  if (inv.command.empty()) throw usage_error("no command given");
  const std::size_t want = operands_of(inv.command);
  if (inv.command.size() - 1 != want)
    throw usage_error(fmt::format("{} takes {} operand{}, got {}", inv.command[0], want, want == 1 ? "" : "s",
                                  inv.command.size() - 1));
  for (std::size_t k = 1; k < inv.command.size(); ++k)
    if (inv.command[k].empty()) throw usage_error(fmt::format("{}: an empty id", inv.command[0]));
  if (inv.command[0] == "upsert")
    inv.spec = schedule.build(inv.command[1], inv.command[2]);
  else if (!schedule.first_option().empty())
    throw usage_error(fmt::format("{} is an option of upsert, not of {}", schedule.first_option(), inv.command[0]));
  if (inv.command[0] == "backfill") {
    inv.from = parse_time(inv.command[2], "FROM");
    inv.to = parse_time(inv.command[3], "TO");
    if (*inv.from >= *inv.to)
      throw usage_error(fmt::format("backfill: FROM ({}) must be before TO ({})", inv.command[2], inv.command[3]));
  }
  return inv;
}

system_clock::time_point parse_time(std::string_view text, std::string_view what) {
  const auto bad = [&] {
    return usage_error(fmt::format(
        "{}: \"{}\" is not an ISO 8601 UTC time (2026-11-28T21:40:00Z, 2026-11-28T21:40:00.250Z or 2026-11-28)",
        what, text));
  };
  // YYYY-MM-DD
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (text.size() < 10 || text[4] != '-' || text[7] != '-' || !to_number(text.substr(0, 4), y) ||
      !to_number(text.substr(5, 2), mo) || !to_number(text.substr(8, 2), d))
    throw bad();
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{mo}, std::chrono::day{d}};
  if (!ymd.ok()) throw bad();
  system_clock::time_point t = std::chrono::sys_days(ymd);
  std::string_view rest = text.substr(10);
  if (rest.empty()) return t;
  // THH:MM[:SS[.fraction]]
  if (rest.size() < 6 || (rest[0] != 'T' && rest[0] != 't') || rest[3] != ':' || !to_number(rest.substr(1, 2), h) ||
      !to_number(rest.substr(4, 2), mi) || h > 23 || mi > 59)
    throw bad();
  rest.remove_prefix(6);
  std::chrono::microseconds fraction{0};
  if (!rest.empty() && rest[0] == ':') {
    if (rest.size() < 3 || !to_number(rest.substr(1, 2), s) || s > 59) throw bad();
    rest.remove_prefix(3);
    if (!rest.empty() && (rest[0] == '.' || rest[0] == ',')) {
      std::size_t n = 1;
      std::int64_t us = 0;
      int digits = 0;
      while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') {
        if (digits < 6) us = us * 10 + (rest[n] - '0'), ++digits;
        ++n;
      }
      if (n == 1) throw bad();
      while (digits++ < 6) us *= 10;
      fraction = std::chrono::microseconds(us);
      rest.remove_prefix(n);
    }
  }
  // Only UTC: Z or a zero offset.
  if (rest != "Z" && rest != "z" && rest != "+00:00" && rest != "-00:00" && rest != "+0000") throw bad();
  t += std::chrono::hours(h) + std::chrono::minutes(mi) + std::chrono::seconds(s);
  return t + std::chrono::duration_cast<system_clock::duration>(fraction);
}

std::string format_time(system_clock::time_point t) {
  const auto ms = std::chrono::floor<std::chrono::milliseconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(ms);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{ms - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
                     hms.minutes().count(), hms.seconds().count(), hms.subseconds().count());
}

}  // namespace chronopool::durable::cli

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable end to end (issue 43, item 4): schedules created
// through the library on the fixture's redis-server, then the CLI binary
// run as a user would, its output and exit code checked for every command,
// bad usage included.
#define BOOST_TEST_MODULE chronopool_durable_cli
#include "../../support/quiet_use_future.hpp"  // first: see there

#include <boost/test/unit_test.hpp>

#include <chronopool/durable/scheduler.hpp>

#include "sentinel_group.hpp"
#include "test_redis.hpp"
#include "../../support/bounded_wait.hpp"

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::asio::use_future;

namespace {

struct result {
  int code = -1;
  std::string out, err;
};

std::string shell_quoted(const std::string& a) {
  std::string q = "'";
  for (const char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A namespace, a scheduler on it (which never claims) and the CLI pointed at it.
struct cli_fixture {
  std::string ns = "cli-" + std::to_string(std::random_device{}());
  boost::asio::thread_pool pool{2};
  cd::redis_options redis = dt::test_redis_options();
  cd::scheduler s{pool.get_executor(), [&] {
                    cd::scheduler_options o;
                    o.redis = redis;
                    o.name_space = ns;
                    return o;
                  }()};
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("chronopool-cli-" + ns);

  cli_fixture() { std::filesystem::create_directories(dir); }
  ~cli_fixture() {
    s.stop();
    pool.join();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  // Runs chronopool-durable with `args` after --redis and --namespace
  // (unless `bare`): its exit code, stdout and stderr.
  result run(const std::vector<std::string>& args, bool bare = false) {
    std::string cmd = shell_quoted(CHRONOPOOL_DURABLE_CLI);
    if (!bare) cmd += " --redis " + shell_quoted(redis.host + ":" + std::to_string(redis.port)) + " --namespace " + shell_quoted(ns);
    for (const auto& a : args) cmd += " " + shell_quoted(a);
    cmd += " >" + shell_quoted((dir / "out").string()) + " 2>" + shell_quoted((dir / "err").string());
    const int status = std::system(cmd.c_str());
    result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir / "out");
    r.err = slurp(dir / "err");
    return r;
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_cli, cli_fixture)

BOOST_AUTO_TEST_CASE(list_and_show_print_tables_and_json) {
  s.async_schedule_at_fixed_rate("rate-1", "report", "pl", std::chrono::system_clock::now() + 1h,
                                                  15min, {}, use_future).get();
  s.async_schedule("once-1", "mail", "", 2h, use_future).get();
  auto r = run({"list"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "ID"));
  BOOST_TEST(contains(r.out, "NEXT DUE (UTC)"));
  BOOST_TEST(contains(r.out, "once-1"));
  BOOST_TEST(contains(r.out, "one-shot"));
  BOOST_TEST(contains(r.out, "rate-1"));
  BOOST_TEST(contains(r.out, "fixed-rate"));
  BOOST_TEST(contains(r.out, "15m"));
  BOOST_TEST(r.out.find("once-1") < r.out.find("rate-1"), "in id order");
  r = run({"list", "--prefix", "rate", "--json"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "\"id\":\"rate-1\",\"task\":\"report\",\"kind\":\"fixed-rate\",\"period_ms\":900000"),
             r.out);
  BOOST_TEST(contains(r.out, "\"state\":\"active\""));
  BOOST_TEST(!contains(r.out, "once-1"));
  r = run({"show", "rate-1"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "id:            rate-1"), r.out);
  BOOST_TEST(contains(r.out, "runs:          0"), r.out);
  BOOST_TEST(contains(r.out, "last runs (newest first, up to 10):"), r.out);
  r = run({"show", "rate-1", "--json"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "\"payload\":\"pl\""), r.out);
  BOOST_TEST(contains(r.out, "\"history\":[]"), r.out);
}

BOOST_AUTO_TEST_CASE(list_and_show_print_a_cron_schedules_expression_zone_and_next_due) {
  const auto due =
      s.async_schedule_cron("cron-1", "report", "", "30 2 * * *", "America/New_York", {}, use_future).get();
  auto r = run({"list"});
  BOOST_TEST(r.code == 0, r.err);
  // The next due in UTC, as the table prints it: 02:30 in New York is 06:30 or 07:30 UTC.
  const std::time_t t = std::chrono::system_clock::to_time_t(due);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  BOOST_TEST(contains(r.out, std::string("cron-1  report  cron  30 2 * * * America/New_York  ") + when), r.out);
  r = run({"list", "--json"});
  BOOST_TEST(contains(r.out, "\"kind\":\"cron\""), r.out);
  BOOST_TEST(contains(r.out, "\"cron\":\"30 2 * * *\",\"time_zone\":\"America/New_York\""), r.out);
  r = run({"show", "cron-1"});
  BOOST_TEST(contains(r.out, "period:        30 2 * * * America/New_York"), r.out);
}

BOOST_AUTO_TEST_CASE(pause_resume_trigger_backfill_and_delete_change_the_schedule) {
  // Hourly from 2024-10-04T00:00:00Z (day 20000 of the epoch): in the past,
  // so that occurrence stays pending, as nobody claims here.
  s.async_schedule_at_fixed_rate("job", "work", "", std::chrono::system_clock::time_point(std::chrono::hours(24 * 20000)),
                                 1h, {}, use_future).get();
  auto r = run({"pause", "job"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "job paused\n");
  r = run({"pause", "job"});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out == "job was paused already\n");
  BOOST_TEST(contains(run({"list"}).out, "paused"));
  r = run({"resume", "job", "--json"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "{\"id\":\"job\",\"state\":\"active\",\"changed\":true}\n");
  r = run({"trigger", "job"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "job triggered: fire job@"), r.out);
  // The pending occurrence is 2024-10-04T00:00Z: backfill the three hours before it.
  r = run({"backfill", "job", "2024-10-03T21:00:00Z", "2024-10-04T00:00:00Z"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "job: 3 occurrences in [2024-10-03T21:00:00.000Z, 2024-10-04T00:00:00.000Z), 3 newly enqueued\n");
  r = run({"backfill", "job", "2024-10-03T21:00:00Z", "2024-10-04T00:00:00Z", "--json"});
  BOOST_TEST(r.out == "{\"id\":\"job\",\"occurrences\":3,\"added\":0}\n");
  r = run({"show", "job"});
  BOOST_TEST(contains(r.out, "extra fires:   4 2024-10-03T21:00:00.000Z 2024-10-03T22:00:00.000Z 2024-10-03T23:00:00.000Z"),
             r.out);
  r = run({"backfill", "job", "2024-01-01", "2024-10-04"});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(contains(r.err, "backfill job: "), r.err);
  BOOST_TEST(contains(r.err, "occurrences, more than 1000"), r.err);
  r = run({"delete", "job"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "job deleted\n");
  BOOST_TEST(run({"list"}).out == "ID  TASK  KIND  PERIOD  NEXT DUE (UTC)  STATE  ATTEMPTS  EXTRA\n");
}

BOOST_AUTO_TEST_CASE(unknown_ids_and_one_shots_fail_with_exit_code_1_naming_the_id) {
  s.async_schedule("single", "mail", "", 1h, use_future).get();
  for (const std::string cmd : {"show", "pause", "resume", "trigger", "delete"}) {
    const auto r = run({cmd, "ghost"});
    BOOST_TEST(r.code == 1, cmd);
    BOOST_TEST(contains(r.err, cmd + " ghost: "), r.err);
    BOOST_TEST(r.out.empty());
  }
  auto r = run({"trigger", "single"});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(contains(r.err, "trigger single: the schedule is a one-shot"), r.err);
  r = run({"dead-letters", "redrive", "ghost@1"});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(contains(r.err, "dead-letters redrive ghost@1: no dead letter"), r.err);
  r = run({"dead-letters", "delete", "ghost@1"});
  BOOST_TEST(r.code == 1);
  // Redis not there: exit code 1 with the reason.
  r = run({"--redis", "127.0.0.1:1", "time"}, true);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(contains(r.err, "time: "), r.err);
}

BOOST_AUTO_TEST_CASE(dead_letters_are_listed_redriven_and_deleted) {
  // Two one-shots with one attempt each, run by a process without their
  // handler: both become dead letters.
  {
    cd::scheduler_options o;
    o.redis = redis;
    o.name_space = ns;
    o.failure.max_attempts = 1;
    o.log_handler = [](const chronopool::log_record&) {};
    cd::scheduler runner(pool.get_executor(), o);
    runner.async_schedule("lost-1", "nobody", "", 0ms, use_future).get();
    runner.async_schedule("lost-2", "nobody", "", 0ms, use_future).get();
    runner.start();
    BOOST_TEST_REQUIRE(test_support::eventually(
        [&] { return s.async_list_dead_letters(10, use_future).get().size() == 2u; }, 10s, 10ms));
    runner.stop();
  }
  const auto dead = s.async_list_dead_letters(10, use_future).get();
  auto r = run({"dead-letters", "list"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "FIRE"));
  BOOST_TEST(contains(r.out, dead[0].fire_id));
  BOOST_TEST(contains(r.out, "no handler for task 'nobody'"), r.out);
  r = run({"dead-letters", "list", "--json", "--limit", "1"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "\"fire_id\":\"" + dead[0].fire_id + "\""), r.out);
  BOOST_TEST(!contains(r.out, dead[1].fire_id));
  r = run({"dead-letters", "redrive", dead[0].fire_id});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == dead[0].fire_id + " re-driven as schedule " + dead[0].schedule_id + "\n");
  BOOST_TEST(contains(run({"list"}).out, dead[0].schedule_id));
  r = run({"dead-letters", "delete", dead[1].fire_id});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(s.async_list_dead_letters(10, use_future).get().empty());
}

BOOST_AUTO_TEST_CASE(time_prints_redis_clock) {
  const auto before = std::chrono::system_clock::now() - 5s;
  auto r = run({"time", "--json"});
  BOOST_TEST(r.code == 0, r.err);
  const auto at = r.out.find("\"ms\":");
  BOOST_TEST_REQUIRE(at != std::string::npos, r.out);
  const long long ms = std::stoll(r.out.substr(at + 5));
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
  BOOST_TEST((t > before && t < std::chrono::system_clock::now() + 5s));
  r = run({"time"});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out.size() == 25u);  // 2026-11-28T21:40:00.250Z and a newline
  BOOST_TEST(r.out[10] == 'T');
}

BOOST_AUTO_TEST_CASE(upsert_creates_then_updates_in_place_and_replace_starts_over) {
  auto r = run({"upsert", "deploy-1", "report", "--every", "15m", "--start", "2030-01-01T00:00:00Z", "--payload",
                "v1", "--max-attempts", "3", "--misfire", "skip"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "deploy-1 created: next due 2030-01-01T00:00:00.000Z\n", r.out);
  auto d = s.async_inspect("deploy-1", use_future).get();
  BOOST_TEST((d.summary.kind == cd::schedule_kind::fixed_rate));
  BOOST_TEST((d.summary.period == 15min));
  BOOST_TEST(d.payload == "v1");
  // A later deploy changes the period and payload; the position stays
  // (the new start is not applied).
  r = run({"upsert", "deploy-1", "report", "--every", "30m", "--start", "2031-06-01T00:00:00Z", "--payload", "v2",
           "--json"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "{\"id\":\"deploy-1\",\"outcome\":\"updated\",\"next_due\":\"2030-01-01T00:00:00.000Z\"}\n",
             r.out);
  d = s.async_inspect("deploy-1", use_future).get();
  BOOST_TEST((d.summary.period == 30min));
  BOOST_TEST(d.payload == "v2");
  BOOST_TEST((d.summary.next_due == std::chrono::sys_days(std::chrono::year{2030} / 1 / 1)));
  // --replace starts it over, from the new start.
  r = run({"upsert", "deploy-1", "report", "--every", "30m", "--start", "2031-06-01T00:00:00Z", "--replace"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "deploy-1 replaced: next due 2031-06-01T00:00:00.000Z\n", r.out);
  // The other kinds.
  r = run({"upsert", "cron-2", "report", "--cron", "30 2 * * *", "--time-zone", "Europe/Paris"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "cron-2 created: next due "), r.out);
  d = s.async_inspect("cron-2", use_future).get();
  BOOST_TEST(d.summary.cron == "30 2 * * *");
  BOOST_TEST(d.summary.time_zone == "Europe/Paris");
  r = run({"upsert", "delay-1", "report", "--fixed-delay", "500ms", "--delay", "1h"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST((s.async_inspect("delay-1", use_future).get().summary.kind == cd::schedule_kind::fixed_delay));
  r = run({"upsert", "once-2", "mail", "--once", "--start", "2030-02-01"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out == "once-2 created: next due 2030-02-01T00:00:00.000Z\n", r.out);
  // What the library refuses fails with exit code 1, naming the value.
  r = run({"upsert", "cron-3", "report", "--cron", "61 * * * *"});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(contains(r.err, "upsert cron-3: "), r.err);
  BOOST_TEST(contains(r.err, "61 * * * *"), r.err);
  BOOST_TEST(s.async_list_schedules({"cron-3", "", 10}, use_future).get().schedules.empty());
}

BOOST_AUTO_TEST_CASE(bad_usage_exits_2_with_a_message_naming_what_is_wrong) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "no command given"},
      {{"frobnicate"}, "unknown command \"frobnicate\""},
      {{"show"}, "show takes 1 operand, got 0"},
      {{"pause", "a", "b"}, "pause takes 1 operand, got 2"},
      {{"backfill", "a", "2024-01-01"}, "backfill takes 3 operands, got 2"},
      {{"backfill", "a", "yesterday", "2024-01-01"}, "FROM: \"yesterday\" is not an ISO 8601 UTC time"},
      {{"backfill", "a", "2024-01-01T10:00:00+02:00", "2024-01-02"}, "FROM: \"2024-01-01T10:00:00+02:00\""},
      {{"backfill", "a", "2024-01-02", "2024-01-01"}, "FROM (2024-01-02) must be before TO (2024-01-01)"},
      {{"backfill", "a", "2024-02-30", "2024-03-01"}, "FROM: \"2024-02-30\""},
      {{"dead-letters"}, "dead-letters needs a subcommand"},
      {{"dead-letters", "purge"}, "unknown subcommand \"purge\""},
      {{"list", "--limit", "0"}, "--limit must be 1 to 100000, got \"0\""},
      {{"list", "--bogus"}, "unknown option \"--bogus\""},
      {{"--redis", "host:99999", "time"}, "port must be 1 to 65535, got \"99999\""},
      {{"--namespace", "a}b", "time"}, "name_space \"a}b\""},
      {{"--tls-ca", "/nonexistent/ca.pem", "time"}, "/nonexistent/ca.pem"},
      {{"list", "--limit"}, "--limit needs a value"},
      {{"upsert", "a"}, "upsert takes 2 operands, got 1"},
      {{"upsert", "a", "t"}, "upsert needs the schedule's kind: --every D"},
      {{"upsert", "a", "t", "--every", "5x"}, "--every: \"5x\" is not a duration"},
      {{"upsert", "a", "t", "--every", "1s", "--cron", "* * * * *"}, "--every and --cron both choose"},
      {{"upsert", "a", "t", "--once", "--start", "2030-01-01", "--delay", "1s"}, "--start and --delay both"},
      {{"upsert", "a", "t", "--every", "1s", "--time-zone", "Europe/Paris"}, "--time-zone is for --cron"},
      {{"upsert", "a", "t", "--once", "--misfire", "later"}, "--misfire must be fire-once-now, skip or catch-up"},
      {{"upsert", "a", "t", "--once", "--max-attempts", "0"}, "--max-attempts must be a whole number of at least 1"},
      {{"list", "--every", "5s"}, "--every is an option of upsert, not of list"},
      {{"--cluster", "a:7000", "--sentinel", "b:26379", "time"}, "--cluster and --sentinel exclude each other"},
      {{"--redis", "a:6379", "--cluster", "b:7000", "time"}, "--redis and --cluster exclude each other"},
      {{"--sentinel", "b:26379", "time"}, "--sentinel needs --master-name"},
      {{"--master-name", "m", "time"}, "--master-name needs --sentinel"},
      {{"--cluster", ":7000", "time"}, "--cluster: no host in \":7000\""},
      {{"--sentinel", "b:0", "--master-name", "m", "time"}, "--sentinel: port must be 1 to 65535, got \"0\""},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run(args, true);
    BOOST_TEST(r.code == 2, "exit code " << r.code << " for: " << message);
    BOOST_TEST(contains(r.err, message), "stderr \"" << r.err << "\" lacks \"" << message << "\"");
  }
  const auto help = run({"--help"}, true);
  BOOST_TEST(help.code == 0);
  BOOST_TEST(contains(help.out, "usage: chronopool-durable"));
}

BOOST_AUTO_TEST_CASE(a_partitioned_namespace_takes_its_partition_count) {
  const std::string pns = ns + "-p";
  cd::scheduler_options o;
  o.redis = redis;
  o.name_space = pns;
  o.partitions = 8;
  cd::scheduler p(pool.get_executor(), o);
  for (const char* id : {"a1", "b2", "c3", "d4", "e5"}) p.async_schedule(id, "mail", "", 2h, use_future).get();
  const std::string at = redis.host + ":" + std::to_string(redis.port);
  auto r = run({"--redis", at, "--namespace", pns, "--partitions", "8", "list", "--json"}, true);
  BOOST_TEST(r.code == 0, r.err);
  for (const char* id : {"a1", "b2", "c3", "d4", "e5"}) BOOST_TEST(contains(r.out, std::string("\"id\":\"") + id), r.out);
  BOOST_TEST(r.out.find("a1") < r.out.find("e5"), "in id order");
  r = run({"--redis", at, "--namespace", pns, "--partitions", "8", "delete", "c3"}, true);
  BOOST_TEST(r.code == 0, r.err);
  // Without the count (1): refused, naming both counts; nothing deleted.
  r = run({"--redis", at, "--namespace", pns, "delete", "d4"}, true);
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(contains(r.err, "stored with 8 partitions"), r.err);
  BOOST_TEST(contains(r.err, "partitions is 1"), r.err);
  r = run({"--redis", at, "--namespace", pns, "--partitions", "8", "list"}, true);
  BOOST_TEST(contains(r.out, "d4"), r.out);
  BOOST_TEST(!contains(r.out, "c3"), r.out);
  r = run({"--partitions", "0", "list"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(contains(r.err, "--partitions must be 1 to 1024, got \"0\""), r.err);
  p.stop();
}


BOOST_AUTO_TEST_CASE(sentinel_options_find_the_master_the_sentinels_name) {
  dt::sentinel_group group(CHRONOPOOL_TEST_REDIS_SERVER);
  const cd::redis_options via = group.client_options();
  {
    cd::scheduler_options o;
    o.redis = via;
    o.name_space = ns;
    cd::scheduler on_master(pool.get_executor(), o);
    on_master.async_schedule("via-sentinels", "t", "", 1h, use_future).get();
  }
  std::vector<std::string> args{"--namespace", ns};
  for (const auto& at : via.sentinel.sentinels) {
    args.push_back("--sentinel");
    args.push_back(at.host + ":" + std::to_string(at.port));
  }
  args.insert(args.end(), {"--master-name", via.sentinel.master_name, "list", "--json"});
  const auto r = run(args, true);
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(contains(r.out, "\"via-sentinels\""), r.out);
  // A master name the sentinels do not monitor: the operation fails (1).
  args[args.size() - 3] = "not-monitored";
  const auto wrong = run(args, true);
  BOOST_TEST(wrong.code == 1, wrong.out << wrong.err);
}

BOOST_AUTO_TEST_SUITE_END()

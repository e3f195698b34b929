// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool-durable: manages the durable schedules of a namespace from the
// shell, through chronopool::durable::scheduler's management calls (it
// never claims fires itself). Exit codes: 0 done, 1 the operation failed,
// 2 usage. See docs/durable.md, "Managing schedules".
#include "arguments.hpp"
#include "output.hpp"

#include <chronopool/durable/error.hpp>
#include <chronopool/durable/scheduler.hpp>

#include <boost/asio/thread_pool.hpp>
#include <boost/system/error_code.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <future>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cli = chronopool::durable::cli;
namespace cd = chronopool::durable;

namespace {

// The operation failed for a reason the user should read: exit code 1.
struct operation_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Starts an operation with a handler and waits for it; its error becomes an
// operation_error naming `what` (the command and the id or value it was
// about). The handler hands over the error_code itself rather than an
// exception (as use_future would): no exception_ptr crosses threads.
template <class T, class Start>
T get(Start start, const std::string& what) {
  std::promise<std::pair<boost::system::error_code, T>> done;
  auto result = done.get_future();
  start([&done](boost::system::error_code ec, T value) { done.set_value({ec, std::move(value)}); });
  auto [ec, value] = result.get();
  if (ec) throw operation_error(fmt::format("{}: {}", what, ec.message()));
  return std::move(value);
}

int run(const cli::invocation& inv) {
  cd::scheduler_options o;
  o.redis = inv.redis;
  o.name_space = inv.name_space;
  o.partitions = inv.partitions;
  o.log_handler = [](const chronopool::log_record&) {};  // failures are reported once, below
  boost::asio::thread_pool work(1);
  cd::scheduler s(work.get_executor(), o);  // connects; never claims (no start())
  const auto& c = inv.command;
  const std::string& cmd = c[0];
  const std::string what = c.size() > 1 && cmd != "dead-letters" ? fmt::format("{} {}", cmd, c[1])
                           : c.size() > 2                       ? fmt::format("{} {} {}", cmd, c[1], c[2])
                                                                : cmd;
  cli::printer out(stdout, inv.json);
  if (cmd == "list") {
    // Pages of up to 1000 until the limit.
    cd::schedule_query q;
    q.prefix = inv.prefix;
    std::vector<cd::schedule_summary> all;
    do {
      q.limit = std::min<std::size_t>(1000, inv.limit - all.size());
      auto page = get<cd::schedule_page>([&](auto h) { s.async_list_schedules(q, std::move(h)); }, what);
      for (auto& e : page.schedules) all.push_back(std::move(e));
      q.after = page.next_cursor;
    } while (!q.after.empty() && all.size() < inv.limit);
    out.schedules(all);
  } else if (cmd == "upsert") {
    const auto results = get<std::vector<cd::upsert_result>>(
        [&](auto h) { s.async_upsert_schedules({*inv.spec}, std::move(h)); }, what);
    const cd::upsert_result& r = results.at(0);
    if (r.outcome == cd::upsert_outcome::failed) throw operation_error(fmt::format("{}: {}", what, r.error));
    const char* outcome = r.outcome == cd::upsert_outcome::created    ? "created"
                          : r.outcome == cd::upsert_outcome::replaced ? "replaced"
                          : r.outcome == cd::upsert_outcome::updated  ? "updated"
                                                                      : "unchanged";
    out.message({{"id", c[1]}, {"outcome", outcome}, {"next_due", cli::format_time(r.due)}},
                fmt::format("{} {}: next due {}", c[1], outcome, cli::format_time(r.due)), {});
  } else if (cmd == "show") {
    out.details(get<cd::schedule_details>([&](auto h) { s.async_inspect(c[1], std::move(h)); }, what));
  } else if (cmd == "pause" || cmd == "resume") {
    const bool changed = get<bool>(
        [&](auto h) {
          if (cmd == "pause")
            s.async_pause(c[1], std::move(h));
          else
            s.async_resume(c[1], std::move(h));
        },
        what);
    const char* state = cmd == "pause" ? "paused" : "resumed";
    out.message({{"id", c[1]}, {"state", cmd == "pause" ? "paused" : "active"}, {"changed", changed ? "true" : "false"}},
                changed ? fmt::format("{} {}", c[1], state)
                        : fmt::format("{} was {} already", c[1], cmd == "pause" ? "paused" : "not paused"),
                {"changed"});
  } else if (cmd == "trigger") {
    const auto t = get<cd::triggered_fire>([&](auto h) { s.async_trigger_now(c[1], std::move(h)); }, what);
    out.message({{"id", c[1]},
                 {"fire_id", t.fire_id},
                 {"due", cli::format_time(t.due)},
                 {"queued_behind_running", t.queued_behind_running ? "true" : "false"}},
                fmt::format("{} triggered: fire {} due {}{}", c[1], t.fire_id, cli::format_time(t.due),
                            t.queued_behind_running ? " (queued behind the running fire)" : ""),
                {"queued_behind_running"});
  } else if (cmd == "backfill") {
    const auto r =
        get<cd::backfill_result>([&](auto h) { s.async_backfill(c[1], *inv.from, *inv.to, std::move(h)); }, what);
    out.message({{"id", c[1]}, {"occurrences", std::to_string(r.occurrences)}, {"added", std::to_string(r.added)}},
                fmt::format("{}: {} occurrence{} in [{}, {}), {} newly enqueued", c[1], r.occurrences,
                            r.occurrences == 1 ? "" : "s", cli::format_time(*inv.from), cli::format_time(*inv.to),
                            r.added),
                {"occurrences", "added"});
  } else if (cmd == "delete") {
    if (!get<bool>([&](auto h) { s.async_cancel(c[1], std::move(h)); }, what))
      throw operation_error(fmt::format("{}: no schedule with this id", what));
    out.message({{"id", c[1]}, {"deleted", "true"}}, fmt::format("{} deleted", c[1]), {"deleted"});
  } else if (cmd == "time") {
    const auto t = get<cd::scheduler::time_point>([&](auto h) { s.async_server_time(std::move(h)); }, what);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    out.message({{"time", cli::format_time(t)}, {"ms", std::to_string(ms)}}, cli::format_time(t), {"ms"});
  } else if (c[1] == "list") {
    out.dead_letters(
        get<std::vector<cd::dead_letter>>([&](auto h) { s.async_list_dead_letters(inv.limit, std::move(h)); }, what));
  } else if (c[1] == "redrive") {
    const auto id = get<std::string>([&](auto h) { s.async_redrive_dead_letter(c[2], std::move(h)); }, what);
    if (id.empty()) throw operation_error(fmt::format("{}: no dead letter with this fire id", what));
    out.message({{"fire_id", c[2]}, {"schedule_id", id}}, fmt::format("{} re-driven as schedule {}", c[2], id), {});
  } else {  // dead-letters delete
    if (!get<bool>([&](auto h) { s.async_delete_dead_letter(c[2], std::move(h)); }, what))
      throw operation_error(fmt::format("{}: no dead letter with this fire id", what));
    out.message({{"fire_id", c[2]}, {"deleted", "true"}}, fmt::format("{} deleted", c[2]), {"deleted"});
  }
  s.stop();
  work.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cli::invocation inv;
  try {
    inv = cli::parse(argc, argv);
  } catch (const cli::usage_error& e) {
    std::fprintf(stderr, "chronopool-durable: %s\n(chronopool-durable --help shows the usage)\n", e.what());
    return 2;
  }
  if (inv.help) {
    std::fputs(cli::usage().c_str(), stdout);
    return 0;
  }
  try {
    return run(inv);
  } catch (const operation_error& e) {
    std::fprintf(stderr, "chronopool-durable: %s\n", e.what());
    return 1;
  } catch (const std::invalid_argument& e) {
    // The scheduler refused an option's value (namespace, TLS files).
    std::fprintf(stderr, "chronopool-durable: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chronopool-durable: %s\n", e.what());
    return 1;
  }
}

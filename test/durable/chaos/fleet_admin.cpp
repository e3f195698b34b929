// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "fleet_admin.hpp"

#include "worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <utility>

namespace chronopool::durable::chaos {

namespace {

using namespace std::chrono_literals;

std::int64_t admin_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Starts an operation and waits for its error and value. Not use_future:
// its exception_ptr would cross threads, whose reference count libstdc++
// (not built for ThreadSanitizer) updates unseen: a false race under TSan.
template <class T, class Start>
std::pair<boost::system::error_code, T> admin_wait(Start start) {
  std::promise<std::pair<boost::system::error_code, T>> done;
  auto result = done.get_future();
  start([&done](boost::system::error_code ec, T value) { done.set_value({ec, std::move(value)}); });
  return result.get();
}

// The value, or a std::runtime_error naming `what` and the error.
template <class T>
T admin_value(std::pair<boost::system::error_code, T> r, const std::string& what) {
  if (r.first) throw std::runtime_error(fmt::format("{}: {}", what, r.first.message()));
  return std::move(r.second);
}

const char* outcome_name(upsert_outcome o) {
  switch (o) {
    case upsert_outcome::created: return "created";
    case upsert_outcome::replaced: return "replaced";
    case upsert_outcome::updated: return "updated";
    case upsert_outcome::unchanged: return "unchanged";
    case upsert_outcome::failed: return "failed";
  }
  return "?";
}

}  // namespace

fleet_admin::fleet_admin(const redis_options& redis, const std::string& ns, int lease_ms, std::uint32_t partitions) {
  auto o = worker_options(redis, ns, lease_ms, partitions);
  o.log_handler = [](const chronopool::log_record&) {};  // it sees the data losses too; the workers report them
  sched_ = std::make_unique<scheduler>(pool_.get_executor(), o);
}

fleet_admin::~fleet_admin() {
  sched_->stop();
  sched_.reset();
  pool_.shutdown();
  pool_.join();
}

void fleet_admin::create(const fleet_layout& layout, check_input& in) {
  const auto now = admin_value(
      admin_wait<scheduler::time_point>([&](auto h) { sched_->async_server_time(std::move(h)); }), "TIME");
  // On a whole second: every grid below is then easy to read in a report.
  const auto first = std::chrono::ceil<std::chrono::seconds>(now + 500ms);
  const auto add = [&](std::string id, const char* task, int period_ms, std::uint32_t max_attempts) {
    schedule_spec s;
    s.id = std::move(id);
    s.task = task;
    s.payload = std::to_string(period_ms);
    s.kind = schedule_kind::fixed_rate;
    s.start = first;
    s.period = std::chrono::milliseconds(period_ms);
    // catch_up with a large bound: after an outage every missed tick still
    // runs (or is dead-lettered), so "no fire lost" is a fair demand.
    s.options.misfire = misfire_policy::catch_up;
    s.options.catch_up_max = 1'000'000;
    if (max_attempts != 0) s.options.failure = failure_policy{max_attempts, 20ms, 2.0, 40ms};
    in.schedules[s.id] = {admin_ms(first), period_ms, max_attempts};
    specs_.push_back(std::move(s));
  };
  for (int i = 0; i < layout.tick_schedules; ++i) add(fmt::format("s{}", i), tick_task, layout.tick_period_ms, 0);
  // Periods long enough for the attempts of one occurrence (the hang
  // schedule's: three timeouts) to fit before the next is due.
  add("poison", poison_task, 400, layout.failing_attempts);
  add("hang", hang_task, 1500, layout.failing_attempts);
  add("orphan", orphan_task, 600, layout.failing_attempts);
  const auto problem = upsert(specs_, upsert_outcome::created, true);
  if (!problem.empty()) throw std::runtime_error("creating the schedules: " + problem);
}

std::string fleet_admin::upsert(std::vector<schedule_spec> specs, upsert_outcome expected, bool or_created) {
  auto [ec, results] = admin_wait<std::vector<upsert_result>>(
      [&](auto h) { sched_->async_upsert_schedules(std::move(specs), std::move(h)); });
  if (ec) return fmt::format("the upsert failed: {}", ec.message());
  for (const auto& r : results)
    if (r.outcome != expected && !(or_created && r.outcome == upsert_outcome::created))
      return fmt::format("{} came back {} ({}), not {}", r.id, outcome_name(r.outcome), r.error,
                         outcome_name(expected));
  return {};
}

std::string fleet_admin::deploy(bool update) {
  if (update) {
    // A new release: a new payload (the hang handler reads the period
    // before the space), so each schedule is really updated.
    ++deploys_;
    for (auto& s : specs_) s.payload = fmt::format("{} release-{}", s.period.count(), deploys_);
  }
  auto specs = specs_;
  for (auto& s : specs) (update ? s.options.update : s.options.replace) = true;
  // Created would mean the schedule was gone: a problem too.
  return upsert(std::move(specs), update ? upsert_outcome::updated : upsert_outcome::unchanged, false);
}

std::string fleet_admin::recreate(std::int64_t resume_ms) {
  for (auto& s : specs_) {
    const auto period = s.period.count();
    const auto first = admin_ms(*s.start);
    const auto k = resume_ms <= first ? 0 : (resume_ms - first + period - 1) / period;
    s.start = std::chrono::system_clock::time_point(std::chrono::milliseconds(first + k * period));
  }
  auto specs = specs_;
  for (auto& s : specs) s.options.update = true;  // creates what is missing, keeps what a retry made
  std::string problem;
  for (int attempt = 0; attempt < 100; ++attempt) {
    problem = upsert(specs, upsert_outcome::updated, true);
    if (problem.empty()) return {};
    std::this_thread::sleep_for(100ms);  // Redis restarting, the connection coming back
  }
  return "re-creating the schedules after the loss: " + problem;
}

bool fleet_admin::collect_dead_letters(std::map<std::string, std::uint32_t>& into) {
  auto [ec, letters] =
      admin_wait<std::vector<dead_letter>>([&](auto h) { sched_->async_list_dead_letters(100'000, std::move(h)); });
  for (const auto& d : letters) into[d.fire_id] = d.attempts;
  return !ec;
}

void fleet_admin::prepare_maxmemory_probe() {
  ++probes_;
  admin_value(admin_wait<scheduler::time_point>([&](auto h) {
                sched_->async_schedule(fmt::format("probe-free-{}", probes_), tick_task, "", std::chrono::hours(24),
                                       std::move(h));
              }),
              "creating the maxmemory probe");
}

std::string fleet_admin::probe_at_maxmemory() {
  std::string problem;
  const auto created = admin_wait<scheduler::time_point>([&](auto h) {
    sched_->async_schedule(fmt::format("probe-oom-{}", probes_), tick_task, "", std::chrono::hours(24), std::move(h));
  });
  if (!created.first)
    problem = "a schedule was created at maxmemory";
  else if (created.first != make_error_code(error::out_of_memory))
    problem = fmt::format("creation at maxmemory failed with {}, not out_of_memory", created.first.message());
  const auto cancelled = admin_wait<bool>(
      [&](auto h) { sched_->async_cancel(fmt::format("probe-free-{}", probes_), std::move(h)); });
  if (cancelled.first || !cancelled.second)
    problem += (problem.empty() ? "" : "; ") +
               (cancelled.first ? fmt::format("cancelling at maxmemory failed: {}", cancelled.first.message())
                                : std::string("the probe schedule to cancel was not found"));
  return problem;
}

void fleet_admin::cancel_all() {
  for (const auto& s : specs_)
    admin_value(admin_wait<bool>([&](auto h) { sched_->async_cancel(s.id, std::move(h)); }), "cancel " + s.id);
}

}  // namespace chronopool::durable::chaos

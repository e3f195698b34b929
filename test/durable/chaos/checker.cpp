// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "checker.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

namespace chronopool::durable::chaos {

bool parse_run(const std::string& line, run_record& out) {
  std::istringstream in(line);
  std::string fire_id;
  if (!(in >> fire_id >> out.token >> out.pid >> out.start >> out.end)) return false;
  const auto at = fire_id.rfind('@');
  if (at == std::string::npos || at == 0) return false;
  out.schedule = fire_id.substr(0, at);
  try {
    out.due = std::stoll(fire_id.substr(at + 1));
  } catch (...) {
    return false;
  }
  return out.end >= out.start;
}

bool excuses_repeats(const fault_record& f) { return f.kind != deploy_fault && f.kind != maxmemory_fault; }

namespace {

// A fault that can cause repeats near [from, to] (within the margin).
bool near_a_fault(const check_input& in, std::int64_t from, std::int64_t to) {
  return std::any_of(in.faults.begin(), in.faults.end(), [&](const fault_record& f) {
    return excuses_repeats(f) && from <= f.end + in.margin && to >= f.start - in.margin;
  });
}

bool lost_with_data(const check_input& in, std::int64_t due) {
  return std::any_of(in.faults.begin(), in.faults.end(),
                     [&](const fault_record& f) { return f.kind == data_loss_fault && f.start < due && due < f.end; });
}

// A repeat or overlap the checker cannot blame on a fault: named after a
// fault near it that cannot excuse it (a deploy: an upsert ran a completed
// occurrence again), if there is one.
std::string unexcused(const check_input& in, std::int64_t from, std::int64_t to, const std::string& what) {
  for (const auto& f : in.faults)
    if (from <= f.end + in.margin && to >= f.start - in.margin)
      return what + " during " + f.kind + " and no other fault";
  return what + " far from any fault";
}

std::string describe(const run_record& r) {
  std::ostringstream os;
  os << r.schedule << '@' << r.due << " token " << r.token << " pid " << r.pid << " [" << r.start << ", "
     << r.end << "]";
  return os.str();
}

}  // namespace

check_report check(const check_input& in) {
  check_report rep;
  std::map<std::string, std::map<std::int64_t, std::vector<run_record>>> by_tick;
  std::map<std::string, std::vector<run_record>> by_schedule;
  for (const auto& r : in.runs) {
    by_tick[r.schedule][r.due].push_back(r);
    by_schedule[r.schedule].push_back(r);
  }

  for (const auto& [name, grid] : in.schedules) {
    const auto& ticks = by_tick[name];
    for (std::int64_t t = grid.first_due; t <= in.check_until; t += grid.period) {
      ++rep.ticks_expected;
      if (ticks.find(t) == ticks.end()) {
        if (in.dead_letters.contains(name + "@" + std::to_string(t))) {
          ++rep.dead_lettered;  // given up after its attempts, and kept: not lost
          continue;
        }
        if (lost_with_data(in, t)) {
          ++rep.lost_with_data;  // Redis lost it, and said so (checked below)
          continue;
        }
        ++rep.missing;
        rep.violations.push_back("tick never ran: " + name + "@" + std::to_string(t));
      }
    }
    for (const auto& [due, runs] : ticks) {
      if ((due - grid.first_due) % grid.period != 0)
        rep.violations.push_back("run off the schedule's grid: " + describe(runs.front()));
      ++rep.ticks_run;
      if (runs.size() < 2) continue;
      ++rep.duplicated_ticks;
      std::set<std::uint64_t> tokens;
      std::int64_t from = runs.front().start;
      std::int64_t to = runs.front().end;
      for (const auto& r : runs) {
        tokens.insert(r.token);
        from = std::min(from, r.start);
        to = std::max(to, r.end);
      }
      if (tokens.size() != runs.size())
        rep.violations.push_back("a tick ran twice under one token: " + describe(runs.front()));
      if (!near_a_fault(in, from, to))
        rep.violations.push_back(unexcused(in, from, to, "a tick ran twice") + ": " + describe(runs.front()));
    }
  }

  for (const auto& [fire, attempts] : in.dead_letters) {
    std::uint32_t max = in.max_attempts;
    const auto grid = in.schedules.find(fire.substr(0, fire.rfind('@')));
    if (grid != in.schedules.end() && grid->second.max_attempts != 0) max = grid->second.max_attempts;
    if (attempts < max)
      rep.violations.push_back("dead-lettered after " + std::to_string(attempts) + " of " + std::to_string(max) +
                               " attempts: " + fire);
  }

  for (const auto& f : in.faults) {
    if (!f.problem.empty()) rep.violations.push_back(f.kind + ": " + f.problem);
    if (f.kind != data_loss_fault) continue;
    // Fencing tokens stay monotonic across the loss ...
    const run_record* before = nullptr;
    const run_record* after = nullptr;
    for (const auto& r : in.runs) {
      if (r.start < f.start && (!before || r.token > before->token)) before = &r;
      if (r.start > f.end && (!after || r.token < after->token)) after = &r;
    }
    if (before && after && after->token <= before->token)
      rep.violations.push_back("a token after the data loss is not above those before it: " + describe(*after) +
                               " after " + describe(*before));
    // ... and the loss is reported, not silent.
    if (std::none_of(in.data_lost_reports.begin(), in.data_lost_reports.end(),
                     [&](std::int64_t t) { return t >= f.start && t <= f.end + in.margin; }))
      rep.violations.push_back("no worker reported data_lost for the data loss at " + std::to_string(f.start));
  }

  // Fencing tokens grow per schedule: an occurrence is claimed only after
  // the one before it was settled by a claim whose run was logged (a run is
  // logged before its ack), so the lowest token an occurrence ran under
  // exceeds the lowest of the one before. This holds across kills, lost
  // leases, failovers that roll writes back and data losses, since a claim
  // hands out tokens above Redis's clock; a repeat may come later under a
  // higher token, which leaves the lowest alone.
  for (const auto& [name, ticks] : by_tick) {
    const run_record* previous = nullptr;
    for (const auto& [due, runs] : ticks) {
      const auto lowest = std::min_element(runs.begin(), runs.end(),
                                           [](const auto& a, const auto& b) { return a.token < b.token; });
      if (previous && lowest->token <= previous->token)
        rep.violations.push_back("a token went back: " + describe(*lowest) + " first ran under a token not above " +
                                 describe(*previous) + "'s");
      previous = &*lowest;
    }
  }

  // Overlapping runs of one schedule need an expired lease, which needs a fault.
  for (auto& [name, runs] : by_schedule) {
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    std::int64_t latest_end = std::numeric_limits<std::int64_t>::min();
    const run_record* holder = nullptr;
    for (const auto& r : runs) {
      if (holder && r.start < latest_end) {
        ++rep.overlaps;
        if (!near_a_fault(in, holder->start, holder->end) && !near_a_fault(in, r.start, r.end))
          rep.violations.push_back(unexcused(in, holder->start, r.end, "runs overlapped") + ": " +
                                   describe(*holder) + " and " + describe(r));
      }
      if (r.end > latest_end) {
        latest_end = r.end;
        holder = &r;
      }
    }
  }
  return rep;
}

}  // namespace chronopool::durable::chaos

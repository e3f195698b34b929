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

namespace {

bool near_a_fault(const check_input& in, std::int64_t from, std::int64_t to) {
  return std::any_of(in.faults.begin(), in.faults.end(), [&](const fault_record& f) {
    return from <= f.end + in.margin && to >= f.start - in.margin;
  });
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
        rep.violations.push_back("a tick ran twice far from any fault: " + describe(runs.front()));
    }
  }

  for (const auto& [fire, attempts] : in.dead_letters)
    if (attempts < in.max_attempts)
      rep.violations.push_back("dead-lettered after " + std::to_string(attempts) + " of " +
                               std::to_string(in.max_attempts) + " attempts: " + fire);

  // Overlapping runs of one schedule need an expired lease, which needs a fault.
  for (auto& [name, runs] : by_schedule) {
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    std::int64_t latest_end = std::numeric_limits<std::int64_t>::min();
    const run_record* holder = nullptr;
    for (const auto& r : runs) {
      if (holder && r.start < latest_end) {
        ++rep.overlaps;
        if (!near_a_fault(in, holder->start, holder->end) && !near_a_fault(in, r.start, r.end))
          rep.violations.push_back("runs overlapped with no fault near: " + describe(*holder) + " and " +
                                   describe(r));
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

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Running a calendar schedule; see detail/calendar/cron_run.hpp.
#include <chronopool/detail/calendar/cron_run.hpp>

#include <stdexcept>
#include <string>

namespace chronopool::detail {

std::optional<sys_time> cron_cursor::start(sys_time now) {
  budget_ = max_runs_;
  const std::optional<sys_time> first = schedule_.next_after(now);
  if (first) current_ = *first;
  return first;
}

cron_cursor::step cron_cursor::decide(sys_time now) const {
  const std::optional<sys_time> following = schedule_.next_after(current_);
  if (!following) return {std::nullopt, budget_};
  // Still ahead: an on-time run, which refills the budget.
  if (*following > now) return {following, max_runs_};
  // Missed: made up at once while the budget lasts.
  if (budget_ > 0) return {following, budget_ - 1};
  // Budget spent: the rest of the streak is dropped.
  return {schedule_.next_after(now), max_runs_};
}

std::optional<sys_time> cron_cursor::advance(sys_time now) {
  const step s = decide(now);
  budget_ = s.budget;
  if (s.instant) current_ = *s.instant;
  return s.instant;
}

std::optional<sys_time> cron_cursor::peek(sys_time now) const { return decide(now).instant; }

void validate_cron_options(const periodic_options& options, const char* where) {
  if (options.jitter != 0.0)
    throw std::invalid_argument(std::string("chronopool: ") + where +
                                ": periodic_options::jitter is a fraction of a fixed period; a calendar schedule "
                                "has none, so it must be 0");
  if (options.leeway != std::chrono::nanoseconds::zero())
    throw std::invalid_argument(std::string("chronopool: ") + where +
                                ": periodic_options::leeway must be 0 for a calendar schedule");
  // The calendar and cron_misfire decide every run; an end of its own would
  // be a second schedule to reconcile with them.
  if (options.max_runs)
    throw std::invalid_argument(std::string("chronopool: ") + where +
                                ": periodic_options::max_runs must be empty for a calendar schedule");
  if (options.until)
    throw std::invalid_argument(std::string("chronopool: ") + where +
                                ": periodic_options::until must be empty for a calendar schedule");
}

}  // namespace chronopool::detail

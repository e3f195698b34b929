// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The arithmetic of running a calendar schedule, shared by the pool's cron
// tasks, cron handlers on executors and cron_timer: which instant runs next
// (the misfire rule), and the steady deadline that stands for it.
#pragma once

#include <chronopool/cron_fire.hpp>
#include <chronopool/cron_schedule.hpp>
#include <chronopool/detail/time/clock_steps.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

/// Where a running calendar schedule stands: the instant of the current (or
/// next) run, and what is left of the misfire budget. Not synchronised: one
/// schedule's runs never overlap, and each form touches it from its run only.
class cron_cursor {
 public:
  cron_cursor(cron_schedule schedule, cron_misfire misfire)
      : schedule_(std::move(schedule)), max_runs_(misfire.max_runs), budget_(misfire.max_runs) {}

  /// The first instant strictly after @p now; empty when the schedule names
  /// none (see cron_schedule::next_after).
  std::optional<sys_time> start(sys_time now);

  /// A run for current() has ended at @p now: the instant of the next run.
  /// The one after current() when it is still ahead of @p now; when it has
  /// passed already, it still runs (at once) while the misfire budget lasts,
  /// and once the budget is spent the first instant after @p now runs. Empty
  /// when the schedule names no more instants.
  std::optional<sys_time> advance(sys_time now);

  /// What advance(@p now) would return, without moving.
  std::optional<sys_time> peek(sys_time now) const;

  /// The instant of the current (or next) run.
  sys_time current() const noexcept { return current_; }

  const cron_schedule& schedule() const noexcept { return schedule_; }

 private:
  struct step {
    std::optional<sys_time> instant;
    std::size_t budget;
  };
  step decide(sys_time now) const;

  cron_schedule schedule_;
  std::size_t max_runs_;
  std::size_t budget_;
  sys_time current_{};
};

/// Throws std::invalid_argument naming @p where unless @p options fit a
/// calendar schedule: jitter and leeway are fractions and slots of a fixed
/// period, which a calendar schedule does not have; both must be 0. The end
/// conditions (max_runs, until) must be empty: the calendar and the misfire
/// rule alone decide the runs.
void validate_cron_options(const periodic_options& options, const char* where);

/// A calendar callable is invocable with a cron_fire, or with nothing, and
/// returns void or periodic_control.
template <class F>
inline constexpr bool takes_cron_fire_v = std::is_invocable_v<F&, cron_fire>;

template <class F>
struct cron_result {
  using type = std::invoke_result_t<F&>;
};
template <class F>
  requires takes_cron_fire_v<F>
struct cron_result<F> {
  using type = std::invoke_result_t<F&, cron_fire>;
};

template <class F>
concept cron_callable = std::is_invocable_v<std::decay_t<F>&> || takes_cron_fire_v<std::decay_t<F>>;

template <class F>
inline constexpr bool cron_returns_ok_v = std::is_void_v<typename cron_result<F>::type> ||
                                          std::is_same_v<typename cron_result<F>::type, periodic_control>;

/// Calls @p f for the run at @p fire; true when it asked to end the schedule
/// (returned periodic_control::stop).
template <class F>
bool invoke_cron(F& f, cron_fire fire) {
  if constexpr (takes_cron_fire_v<F>) {
    if constexpr (std::is_same_v<typename cron_result<F>::type, periodic_control>) {
      return f(fire) == periodic_control::stop;
    } else {
      f(fire);
      return false;
    }
  } else {
    if constexpr (std::is_same_v<typename cron_result<F>::type, periodic_control>) {
      return f() == periodic_control::stop;
    } else {
      f();
      return false;
    }
  }
}

}  // namespace chronopool::detail

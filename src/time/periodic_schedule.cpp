// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/detail/time/periodic_schedule.hpp>

#include <chronopool/detail/support/emit_log.hpp>
#include <chronopool/detail/support/exception_text.hpp>
#include <chronopool/log.hpp>

#include <fmt/core.h>

#include <random>
#include <stdexcept>
#include <string>

namespace chronopool::detail {

time_point next_fixed_rate_instant(time_point ideal, duration period, time_point started,
                                   missed_tick_policy policy) noexcept {
  const time_point next = saturating_add(ideal, period);
  if (next > started || policy == missed_tick_policy::burst || is_never(next)) return next;
  if (policy == missed_tick_policy::delay) return saturating_add(started, period);
  // skip: the whole periods since ideal that started is past, then one more.
  const auto behind = (started - ideal) / period;
  return saturating_add(ideal, period * (behind + 1));
}

void validate_periodic(duration period, const periodic_options& options, const char* where) {
  if (period <= duration::zero())
    throw std::invalid_argument(std::string("chronopool: ") + where + ": period must be positive");
  if (!(options.jitter >= 0.0 && options.jitter < 1.0))  // also rejects NaN
    throw std::invalid_argument(std::string("chronopool: ") + where + ": jitter must be in [0, 1)");
  validate_leeway(period, options.leeway, where);
}

void validate_periodic_end(time_point first, const periodic_options& options) {
  if (options.max_runs && *options.max_runs == 0)
    throw std::invalid_argument("chronopool: periodic_options::max_runs must be positive (0 runs is no schedule)");
  if (options.until && *options.until <= first)
    throw std::invalid_argument(fmt::format(
        "chronopool: periodic_options::until ({} ns) must be after the first run's instant ({} ns)",
        options.until->time_since_epoch().count(), first.time_since_epoch().count()));
}

void validate_leeway(duration period, duration leeway, const char* where) {
  if (leeway < duration::zero() || leeway >= period)
    throw std::invalid_argument(std::string("chronopool: ") + where + ": leeway must be in [0, period)");
}

time_point run_deadline(time_point ideal, duration period, double jitter, duration leeway) noexcept {
  return round_up_to_slot(saturating_add(ideal, jitter_offset(period, jitter)), leeway);
}

void report_periodic_error(const std::function<void(std::exception_ptr)>& handler, std::exception_ptr error) noexcept {
  try {
    if (handler) {
      handler(std::move(error));
    } else {
      const std::string message = "a periodic handler threw: " + exception_text(error);
      emit_log({log_severity::error, "periodic", "handler_failed", message, error, {}});
    }
  } catch (...) {
  }
}

duration jitter_offset(duration period, double fraction) noexcept {
  if (fraction <= 0.0) return duration::zero();
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_real_distribution<double> dist(0.0, fraction);
  // period × fraction < period, so this cannot overflow.
  return duration(static_cast<duration::rep>(static_cast<double>(period.count()) * dist(rng)));
}

}  // namespace chronopool::detail

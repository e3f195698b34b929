// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The arithmetic of periodic schedules, shared by the pool's periodic tasks,
// periodic handlers on executors and periodic_timer.
#pragma once

#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>

#include <exception>
#include <functional>

namespace chronopool::detail {

/// The ideal instant after @p ideal in a fixed-rate schedule, decided when
/// the run for @p ideal starts, at @p started. Every periodic form (pool
/// tasks, handlers on executors, periodic_timer) uses this one rule. When
/// ideal + period is still ahead of @p started, that is the answer.
/// Otherwise the run for @p ideal was itself late; it has fired at once, and
/// @p policy places the one after it: burst keeps ideal + period (the missed
/// ticks run back to back), delay restarts the period from this run
/// (started + period), skip takes the first ideal instant after @p started.
/// Saturating.
time_point next_fixed_rate_instant(time_point ideal, duration period, time_point started,
                                   missed_tick_policy policy) noexcept;

/// Throws std::invalid_argument naming @p where unless @p period is positive
/// and the jitter is in [0, 1).
void validate_periodic(duration period, const periodic_options& options, const char* where);

/// Throws std::invalid_argument unless the end conditions of @p options
/// hold for a schedule whose first ideal instant is @p first: max_runs, if
/// set, is positive; until, if set, is after @p first (the message names
/// both instants, as nanoseconds on the steady clock).
void validate_periodic_end(time_point first, const periodic_options& options);

/// Throws std::invalid_argument naming @p where unless @p leeway is in
/// [0, @p period): a slot as wide as the period could hold two ticks.
void validate_leeway(duration period, duration leeway, const char* where);

/// Hands @p error, thrown by a periodic handler on an executor, to
/// @p handler, or, when it is empty, logs it (component "periodic", event
/// "handler_failed") to the process-wide log handler. An exception
/// from the handler itself is dropped: it has nowhere left to go.
void report_periodic_error(const std::function<void(std::exception_ptr)>& handler, std::exception_ptr error) noexcept;

/// A random offset in [0, fraction × period), to spread a fleet's ticks.
duration jitter_offset(duration period, double fraction) noexcept;

/// The deadline of the run whose ideal instant is @p ideal: plus a jitter
/// offset, then up to the end of its leeway slot (see periodic_options).
/// Saturating.
time_point run_deadline(time_point ideal, duration period, double jitter, duration leeway) noexcept;

}  // namespace chronopool::detail

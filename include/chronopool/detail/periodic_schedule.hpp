// The arithmetic of periodic schedules, shared by the pool's periodic tasks,
// periodic handlers on executors and periodic_timer.
#pragma once

#include <chronopool/detail/saturating_time.hpp>
#include <chronopool/periodic_options.hpp>

namespace chronopool::detail {

/// The next ideal instant of a fixed-rate schedule whose current ideal
/// instant is @p ideal, after a run that started at @p started and ended at
/// @p now. On time: ideal + period. Late (that instant already passed):
/// burst keeps it (catch up), delay restarts from the late run's start, skip
/// moves to the first ideal instant after now. Saturating.
time_point next_fixed_rate_instant(time_point ideal, duration period, time_point started, time_point now,
                                   missed_tick_policy policy) noexcept;

/// Throws std::invalid_argument naming @p where unless @p period is positive
/// and the jitter is in [0, 1).
void validate_periodic(duration period, const periodic_options& options, const char* where);

/// Throws std::invalid_argument naming @p where unless @p leeway is in
/// [0, @p period): a slot as wide as the period could hold two ticks.
void validate_leeway(duration period, duration leeway, const char* where);

/// A random offset in [0, fraction × period), to spread a fleet's ticks.
duration jitter_offset(duration period, double fraction) noexcept;

/// The deadline of the run whose ideal instant is @p ideal: plus a jitter
/// offset, then up to the end of its leeway slot (see periodic_options).
/// Saturating.
time_point run_deadline(time_point ideal, duration period, double jitter, duration leeway) noexcept;

}  // namespace chronopool::detail

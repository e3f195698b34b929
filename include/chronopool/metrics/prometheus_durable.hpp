// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// Exporting a chronopool::durable scheduler's counters and histograms through a
/// prometheus_collector. Header-only, so chronopool::prometheus does not
/// depend on chronopool::durable: a program that uses both links both.
#pragma once

#include <chronopool/durable/scheduler.hpp>
#include <chronopool/metrics/prometheus_collector.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace chronopool::metrics {

/// Exports @p s's stats() under the label scheduler="@p name":
/// `chronopool_durable_fires_claimed_total`, `_acked_total`,
/// `_stale_acks_total`, `_released_total`, `_dead_lettered_total`,
/// `_timed_out_total`, `_no_handler_total`, `_given_back_total`,
/// `chronopool_durable_lease_extensions_total`, `_leases_lost_total`,
/// `chronopool_durable_reconnects_total` and `chronopool_durable_data_lost_total` (counters);
/// `chronopool_durable_claim_lag_seconds` (Redis's time at the claim − due time) and
/// `chronopool_durable_handler_run_seconds` (histograms). @p s must stay alive until the
/// source is removed from @p c.
/// @throws std::invalid_argument when @p name is empty or already added.
inline void add_durable_scheduler(prometheus_collector& c, std::string name, const durable::scheduler& s) {
  c.add_source("scheduler", std::move(name), [&s](sample_sink& out) {
    const durable::scheduler_stats st = s.stats();
    auto count = [&](const char* family, const char* help, std::uint64_t v) {
      out.counter(family, help, static_cast<double>(v));
    };
    count("chronopool_durable_fires_claimed_total", "Fires leased to this process.", st.claimed);
    count("chronopool_durable_fires_acked_total", "Fires acknowledged and accepted.", st.acked);
    count("chronopool_durable_fires_stale_acks_total", "Acknowledgements rejected: the token was superseded.",
          st.stale_acks);
    count("chronopool_durable_fires_released_total", "Fires given back to be retried.", st.released);
    count("chronopool_durable_fires_dead_lettered_total", "Fires dead-lettered after their last attempt.",
          st.dead_lettered);
    count("chronopool_durable_fires_timed_out_total", "Handlers abandoned past their timeout.", st.timed_out);
    count("chronopool_durable_fires_no_handler_total", "Fires claimed for a task nobody registered here.",
          st.no_handler);
    count("chronopool_durable_lease_extensions_total", "Successful lease extensions.", st.extended);
    count("chronopool_durable_leases_lost_total", "Fires whose lease was lost.", st.leases_lost);
    count("chronopool_durable_reconnects_total", "Command connections re-established after a loss.", st.reconnects);
    count("chronopool_durable_fires_given_back_total", "Claimed fires stop() gave back unstarted.", st.given_back);
    count("chronopool_durable_data_lost_total", "Times the namespace's epoch changed or vanished (Redis lost data).",
          st.data_lost);
    out.histogram("chronopool_durable_claim_lag_seconds", "How late fires were claimed (Redis time at claim - due).",
                  st.claim_lag_histogram);
    out.histogram("chronopool_durable_handler_run_seconds", "How long fire handlers ran.", st.run_time_histogram);
  });
}

}  // namespace chronopool::metrics

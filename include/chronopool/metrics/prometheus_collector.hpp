// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// chronopool's figures for Prometheus (target chronopool::prometheus, built
/// when prometheus-cpp is installed): a `prometheus::Collectable` that reads
/// pools, timer services and durable schedulers when it is scraped.
///
/// Register it with a `prometheus::Exposer` (or any registry that takes
/// collectables); every scrape takes each source's figures at that moment,
/// so nothing is copied between scrapes and nothing is recorded twice.
/// Metric names follow Prometheus's conventions: a `chronopool_` prefix,
/// base units (seconds), `_total` on counters; each source is told apart by
/// a label (`pool`, `context`, `schedule`, `scheduler`) holding the name it
/// was added under.
#pragma once

#include <chronopool/latency_histogram.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace chronopool {
class scheduled_thread_pool;
class periodic_handle;
}  // namespace chronopool

namespace chronopool::metrics {

/// Upper bounds, in seconds, of the Prometheus histogram buckets latency
/// histograms are exported in unless others are given: 1 µs to 10 s in
/// steps of 1, 2.5, 5 (the last bucket, +Inf, is implied).
std::vector<double> default_latency_buckets();

/// The figures one source reports at a scrape. A source adds samples to
/// named families; the collector gives every sample the source's label.
class sample_sink {
 public:
  /// A monotonic count (the family's name should end in `_total`).
  virtual void counter(std::string_view family, std::string_view help, double value) = 0;
  /// A value that goes up and down.
  virtual void gauge(std::string_view family, std::string_view help, double value) = 0;
  /// A latency histogram, exported in seconds with the collector's bucket
  /// bounds (the family's name should end in `_seconds`).
  virtual void histogram(std::string_view family, std::string_view help, const latency_histogram& h) = 0;

 protected:
  ~sample_sink() = default;
};

/// A `prometheus::Collectable` over chronopool's sources. Sources are read
/// at each scrape (Collect()); a source must stay alive until it is removed
/// or the collector is destroyed (or unregistered from its exposer).
///
/// Pools export: `chronopool_pool_threads`, `_core_threads`,
/// `_largest_threads`, `_active_threads`, `_queued_tasks` (gauges);
/// `chronopool_pool_tasks_completed_total`, `_failed_total`,
/// `_rejected_total`, `_cancelled_total` (counters);
/// `chronopool_pool_task_lateness_seconds` and
/// `chronopool_pool_task_run_seconds` (histograms), labelled `pool`.
/// Timer services export `chronopool_timer_pending_waits` (gauge),
/// `chronopool_timer_waits_completed_total`, `_cancelled_total` (counters)
/// and `chronopool_timer_wait_lateness_seconds` (histogram), labelled
/// `context`. Periodic handlers export `chronopool_periodic_runs_total`
/// (counter), `chronopool_periodic_lateness_seconds` and
/// `chronopool_periodic_run_seconds` (histograms), labelled `schedule`.
/// Durable schedulers (<chronopool/metrics/prometheus_durable.hpp>) export
/// `chronopool_durable_*_total` counters and the
/// `chronopool_durable_claim_lag_seconds` and
/// `chronopool_durable_handler_run_seconds` histograms, labelled `scheduler`.
///
/// @par Thread Safety
/// Every member may be called from any thread, scrapes included.
class prometheus_collector final : public ::prometheus::Collectable {
 public:
  /// A source: reports its figures into the sink when scraped.
  using source = std::function<void(sample_sink&)>;

  /// A collector exporting latency histograms with bucket upper bounds
  /// @p latency_buckets (seconds; strictly increasing, positive and finite:
  /// std::invalid_argument naming the offending bound otherwise).
  explicit prometheus_collector(std::vector<double> latency_buckets = default_latency_buckets());
  ~prometheus_collector() override;
  prometheus_collector(const prometheus_collector&) = delete;             ///< not copyable
  prometheus_collector& operator=(const prometheus_collector&) = delete;  ///< not copyable

  /// Exports @p pool's stats() under the label pool="@p name".
  /// @throws std::invalid_argument when @p name is empty or already added.
  void add_pool(std::string name, const scheduled_thread_pool& pool);
  /// Exports the stats() of @p ctx's chronopool timer service (pending,
  /// completed and cancelled waits, their lateness) under the label
  /// context="@p name" (the context's timer service is made if need be).
  /// @throws std::invalid_argument when @p name is empty or already added.
  void add_timer_service(std::string name, asio_ns::execution_context& ctx);
  /// Exports the stats() of the periodic handler @p schedule (its runs,
  /// their lateness and run time) under the label schedule="@p name". The
  /// collector keeps a copy of the handle, so the figures stay readable
  /// after the schedule stops, until the source is removed.
  /// @throws std::invalid_argument when @p name is empty or already added.
  void add_periodic(std::string name, const periodic_handle& schedule);
  /// Exports what @p report adds to its sink, each sample labelled
  /// @p label_name="@p name" (a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*).
  /// @throws std::invalid_argument for an empty or duplicate @p name, an
  /// invalid @p label_name, or an empty @p report.
  void add_source(std::string label_name, std::string name, source report);
  /// Stops exporting the source added under @p name; false when there is none.
  bool remove(std::string_view name);

  /// The families of every source, read now (called by the exposer at each
  /// scrape). A source that throws is left out of this scrape.
  std::vector<::prometheus::MetricFamily> Collect() const override;

  /// @p h as a Prometheus histogram sample with upper bounds @p bounds
  /// (seconds): a value is counted under the first bound at or above its
  /// bucket's midpoint, so within 1/128 of that bound.
  static ::prometheus::ClientMetric to_prometheus(const latency_histogram& h, const std::vector<double>& bounds);

 private:
  struct entry {
    std::string label_name;
    std::string name;
    source report;
  };
  std::vector<double> bounds_;
  mutable std::mutex mutex_;  // guards sources_
  std::vector<std::shared_ptr<const entry>> sources_;
};

}  // namespace chronopool::metrics

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The Prometheus collector: sources read at each scrape, their samples
// gathered into families, latency histograms turned into cumulative buckets.
#include <chronopool/metrics/prometheus_collector.hpp>

#include <chronopool/periodic.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace chronopool::metrics {
namespace {

bool valid_label_name(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

double seconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

// Gathers one scrape's samples by family, in the order families first appear.
class family_sink final : public sample_sink {
 public:
  family_sink(const std::vector<double>& bounds, std::vector<::prometheus::MetricFamily>& out)
      : bounds_(bounds), out_(out) {}

  void label(const std::string& name, const std::string& value) { label_ = {name, value}; }

  void counter(std::string_view family, std::string_view help, double value) override {
    add(family, help, ::prometheus::MetricType::Counter).counter.value = value;
  }
  void gauge(std::string_view family, std::string_view help, double value) override {
    add(family, help, ::prometheus::MetricType::Gauge).gauge.value = value;
  }
  void histogram(std::string_view family, std::string_view help, const latency_histogram& h) override {
    auto sample = prometheus_collector::to_prometheus(h, bounds_);
    sample.label = {label_};
    add(family, help, ::prometheus::MetricType::Histogram) = std::move(sample);
  }

 private:
  ::prometheus::ClientMetric& add(std::string_view family, std::string_view help, ::prometheus::MetricType type) {
    auto [it, inserted] = index_.try_emplace(std::string(family), out_.size());
    if (inserted) {
      ::prometheus::MetricFamily f;
      f.name = std::string(family);
      f.help = std::string(help);
      f.type = type;
      out_.push_back(std::move(f));
    } else if (out_[it->second].type != type) {
      throw std::logic_error(fmt::format("chronopool: metric family {} reported with two types", family));
    }
    auto& metric = out_[it->second].metric.emplace_back();
    metric.label = {label_};
    return metric;
  }

  const std::vector<double>& bounds_;
  std::vector<::prometheus::MetricFamily>& out_;
  std::map<std::string, std::size_t, std::less<>> index_;
  ::prometheus::ClientMetric::Label label_;
};

void report_pool(const scheduled_thread_pool& pool, sample_sink& out) {
  const pool_stats s = pool.stats();
  out.gauge("chronopool_pool_threads", "Threads alive in the pool.", static_cast<double>(s.pool_size));
  out.gauge("chronopool_pool_core_threads", "The pool's core size.", static_cast<double>(s.core_pool_size));
  out.gauge("chronopool_pool_largest_threads", "Most threads alive at once.", static_cast<double>(s.largest_pool_size));
  out.gauge("chronopool_pool_active_threads", "Threads running a task.", static_cast<double>(s.active_count));
  out.gauge("chronopool_pool_queued_tasks", "Tasks in the pool's queue.", static_cast<double>(s.queued_count));
  out.counter("chronopool_pool_tasks_completed_total", "Task runs and posted functions completed.",
              static_cast<double>(s.completed_task_count));
  out.counter("chronopool_pool_tasks_failed_total", "Task runs that threw.", static_cast<double>(s.failed_task_count));
  out.counter("chronopool_pool_tasks_rejected_total", "Submissions refused by the rejection policy or handler.",
              static_cast<double>(s.rejected_task_count));
  out.counter("chronopool_pool_tasks_cancelled_total", "Tasks cancelled before a run.",
              static_cast<double>(s.cancelled_task_count));
  out.histogram("chronopool_pool_task_lateness_seconds", "How late task runs started (start - deadline).",
                s.lateness_histogram);
  out.histogram("chronopool_pool_task_run_seconds", "How long task runs took.", s.run_time_histogram);
}

}  // namespace

std::vector<double> default_latency_buckets() {
  std::vector<double> b;
  for (double decade = 1e-6; decade < 10.0; decade *= 10)
    for (double step : {1.0, 2.5, 5.0}) b.push_back(decade * step);
  b.push_back(10.0);
  return b;
}

prometheus_collector::prometheus_collector(std::vector<double> latency_buckets) : bounds_(std::move(latency_buckets)) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    const double b = bounds_[i];
    if (!std::isfinite(b) || b <= 0 || (i > 0 && b <= bounds_[i - 1]))
      throw std::invalid_argument(fmt::format(
          "chronopool: prometheus_collector: latency_buckets[{}] = {} must be positive, finite and above the one "
          "before",
          i, b));
  }
}

prometheus_collector::~prometheus_collector() = default;

void prometheus_collector::add_pool(std::string name, const scheduled_thread_pool& pool) {
  add_source("pool", std::move(name), [&pool](sample_sink& out) { report_pool(pool, out); });
}

void prometheus_collector::add_timer_service(std::string name, asio_ns::execution_context& ctx) {
  const timer_service& service = asio_ns::use_service<timer_service>(ctx);
  add_source("context", std::move(name), [&service](sample_sink& out) {
    const timer_service_stats s = service.stats();
    out.gauge("chronopool_timer_pending_waits", "Timer waits started and not yet handed to their handlers.",
              static_cast<double>(s.pending_waits));
    out.counter("chronopool_timer_waits_completed_total", "Timer waits completed with success.",
                static_cast<double>(s.completed_waits));
    out.counter("chronopool_timer_waits_cancelled_total", "Timer waits completed with operation_aborted.",
                static_cast<double>(s.cancelled_waits));
    out.histogram("chronopool_timer_wait_lateness_seconds",
                  "How late timer waits fired (time found due - deadline).", s.lateness_histogram);
  });
}

void prometheus_collector::add_periodic(std::string name, const periodic_handle& schedule) {
  add_source("schedule", std::move(name), [schedule](sample_sink& out) {
    const periodic_stats s = schedule.stats();
    out.counter("chronopool_periodic_runs_total", "Periodic handler runs that ended.", static_cast<double>(s.runs));
    out.histogram("chronopool_periodic_lateness_seconds", "How late periodic runs started (start - deadline).",
                  s.lateness_histogram);
    out.histogram("chronopool_periodic_run_seconds", "How long periodic runs took.", s.run_time_histogram);
  });
}

void prometheus_collector::add_source(std::string label_name, std::string name, source report) {
  if (!valid_label_name(label_name))
    throw std::invalid_argument(
        fmt::format("chronopool: prometheus_collector: label_name \"{}\" is not a Prometheus label name", label_name));
  if (name.empty()) throw std::invalid_argument("chronopool: prometheus_collector: name must not be empty");
  if (!report) throw std::invalid_argument("chronopool: prometheus_collector: report must not be empty");
  std::lock_guard lock(mutex_);
  for (const auto& e : sources_)
    if (e->name == name)
      throw std::invalid_argument(fmt::format("chronopool: prometheus_collector: name \"{}\" is already added", name));
  sources_.push_back(std::make_shared<const entry>(entry{std::move(label_name), std::move(name), std::move(report)}));
}

bool prometheus_collector::remove(std::string_view name) {
  // Under the lock: once remove() returns, no scrape reads the source.
  std::lock_guard lock(mutex_);
  auto it = std::find_if(sources_.begin(), sources_.end(), [&](const auto& e) { return e->name == name; });
  if (it == sources_.end()) return false;
  sources_.erase(it);
  return true;
}

std::vector<::prometheus::MetricFamily> prometheus_collector::Collect() const {
  std::vector<::prometheus::MetricFamily> out;
  family_sink sink(bounds_, out);
  std::lock_guard lock(mutex_);
  for (const auto& e : sources_) {
    sink.label(e->label_name, e->name);
    std::vector<::prometheus::MetricFamily> saved = out;
    try {
      e->report(sink);
    } catch (...) {
      out = std::move(saved);  // a source that failed is left out of this scrape
    }
  }
  return out;
}

::prometheus::ClientMetric prometheus_collector::to_prometheus(const latency_histogram& h,
                                                              const std::vector<double>& bounds) {
  ::prometheus::ClientMetric m;
  m.histogram.sample_count = h.count();
  m.histogram.sample_sum = seconds(h.sum());
  std::vector<std::uint64_t> per_bound(bounds.size() + 1, 0);  // the last: above every bound (+Inf)
  for (const auto& b : h.buckets()) {
    const double mid = (static_cast<double>(b.lower.count()) + static_cast<double>(b.upper.count() - 1)) / 2e9;
    const auto at = std::lower_bound(bounds.begin(), bounds.end(), mid);
    per_bound[static_cast<std::size_t>(at - bounds.begin())] += b.count;
  }
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += per_bound[i];
    m.histogram.bucket.push_back({cumulative, bounds[i]});
  }
  m.histogram.bucket.push_back({h.count(), std::numeric_limits<double>::infinity()});
  return m;
}

}  // namespace chronopool::metrics

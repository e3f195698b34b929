// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::metrics::prometheus_collector: the families a pool and a timer
// service export, checked against their own figures, and a real scrape of
// /metrics over loopback through prometheus-cpp's Exposer.
#include "../../support/bounded_wait.hpp"

#include <chronopool/latency_histogram.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/metrics/prometheus_collector.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <prometheus/exposer.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using chronopool::metrics::prometheus_collector;

namespace {

const prometheus::MetricFamily* family(const std::vector<prometheus::MetricFamily>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

// The one histogram sample of family @p name, checked to be a histogram
// equal (count, sum, +Inf bucket) to @p h, labelled @p label="@p value".
void check_histogram(const std::vector<prometheus::MetricFamily>& fs, const std::string& name,
                     const chronopool::latency_histogram& h, const std::string& label, const std::string& value) {
  const auto* f = family(fs, name);
  BOOST_TEST_REQUIRE(f != nullptr, name);
  BOOST_TEST((f->type == prometheus::MetricType::Histogram), name);
  BOOST_TEST_REQUIRE(f->metric.size() == 1u, name);
  BOOST_TEST(f->metric[0].label.at(0).name == label);
  BOOST_TEST(f->metric[0].label.at(0).value == value);
  const auto& m = f->metric[0].histogram;
  BOOST_TEST(m.sample_count == h.count(), name);
  BOOST_TEST(m.sample_sum == static_cast<double>(h.sum().count()) / 1e9, name);
  BOOST_TEST_REQUIRE(!m.bucket.empty());
  BOOST_TEST(m.bucket.back().cumulative_count == h.count(), name);
  BOOST_TEST(std::isinf(m.bucket.back().upper_bound));
}

double counter_of(const std::vector<prometheus::MetricFamily>& fs, const std::string& name) {
  const auto* f = family(fs, name);
  BOOST_TEST_REQUIRE(f != nullptr, name);
  BOOST_TEST((f->type == prometheus::MetricType::Counter), name);
  BOOST_TEST_REQUIRE(f->metric.size() == 1u, name);
  return f->metric[0].counter.value;
}

// GET /metrics over loopback with a plain socket: the scrape a Prometheus
// server makes.
std::string scrape(int port) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  asio::write(s, asio::buffer(request));
  std::string response;
  sys_ns::error_code ec;
  asio::read(s, asio::dynamic_buffer(response), ec);  // HTTP/1.0: the server closes at the end
  BOOST_REQUIRE(ec == asio::error::eof);
  return response;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(prometheus_collector_families)

BOOST_AUTO_TEST_CASE(a_pool_exports_its_gauges_counters_and_histograms_labelled_with_its_name) {
  chronopool::scheduled_thread_pool pool(2);
  for (int i = 0; i < 5; ++i) pool.submit([] {}).get();
  auto bad = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  bad.wait();
  auto far = pool.schedule(1h, [] {});
  BOOST_REQUIRE(test_support::eventually([&] { return pool.stats().completed_task_count == 6; }, std::chrono::seconds(10)));

  prometheus_collector c;
  c.add_pool("main", pool);
  const auto fs = c.Collect();
  const auto s = pool.stats();
  auto gauge = [&](const char* name) {
    const auto* f = family(fs, name);
    BOOST_TEST_REQUIRE(f != nullptr, name);
    BOOST_TEST((f->type == prometheus::MetricType::Gauge), name);
    BOOST_TEST_REQUIRE(f->metric.size() == 1u);
    BOOST_TEST(f->metric[0].label.size() == 1u);
    BOOST_TEST(f->metric[0].label[0].name == "pool");
    BOOST_TEST(f->metric[0].label[0].value == "main");
    return f->metric[0].gauge.value;
  };
  auto counter = [&](const char* name) {
    const auto* f = family(fs, name);
    BOOST_TEST_REQUIRE(f != nullptr, name);
    BOOST_TEST((f->type == prometheus::MetricType::Counter), name);
    BOOST_TEST_REQUIRE(f->metric.size() == 1u);
    return f->metric[0].counter.value;
  };
  BOOST_TEST(gauge("chronopool_pool_core_threads") == 2.0);
  BOOST_TEST(gauge("chronopool_pool_threads") == static_cast<double>(s.pool_size));
  BOOST_TEST(gauge("chronopool_pool_queued_tasks") == 1.0);
  BOOST_TEST(gauge("chronopool_pool_active_threads") == 0.0);
  BOOST_TEST(gauge("chronopool_pool_largest_threads") == static_cast<double>(s.largest_pool_size));
  BOOST_TEST(counter("chronopool_pool_tasks_completed_total") == 6.0);
  BOOST_TEST(counter("chronopool_pool_tasks_failed_total") == 1.0);
  BOOST_TEST(counter("chronopool_pool_tasks_rejected_total") == 0.0);
  BOOST_TEST(counter("chronopool_pool_tasks_cancelled_total") == 0.0);
  for (const char* name : {"chronopool_pool_task_lateness_seconds", "chronopool_pool_task_run_seconds"}) {
    const auto* f = family(fs, name);
    BOOST_TEST_REQUIRE(f != nullptr, name);
    BOOST_TEST((f->type == prometheus::MetricType::Histogram));
    const auto& h = f->metric.at(0).histogram;
    BOOST_TEST(h.sample_count == 6u);
    BOOST_TEST(h.bucket.back().cumulative_count == 6u);
    BOOST_TEST(std::isinf(h.bucket.back().upper_bound));
    for (std::size_t i = 1; i < h.bucket.size(); ++i) BOOST_TEST(h.bucket[i].cumulative_count >= h.bucket[i - 1].cumulative_count);
  }
  far.cancel(false);
}

BOOST_AUTO_TEST_CASE(histogram_buckets_count_values_at_or_below_each_bound) {
  chronopool::latency_histogram h;
  h.record(500ns);
  h.record(2us);
  h.record(3ms);
  h.record(20s);  // above every bound: only in +Inf
  const auto m = prometheus_collector::to_prometheus(h, {1e-6, 1e-3, 1.0});
  BOOST_TEST_REQUIRE(m.histogram.bucket.size() == 4u);
  BOOST_TEST(m.histogram.bucket[0].cumulative_count == 1u);  // ≤ 1 µs
  BOOST_TEST(m.histogram.bucket[1].cumulative_count == 2u);  // ≤ 1 ms
  BOOST_TEST(m.histogram.bucket[2].cumulative_count == 3u);  // ≤ 1 s
  BOOST_TEST(m.histogram.bucket[3].cumulative_count == 4u);  // +Inf
  BOOST_TEST(m.histogram.sample_count == 4u);
  BOOST_TEST(std::abs(m.histogram.sample_sum - 20.0030025) < 1e-9);
}

BOOST_AUTO_TEST_CASE(a_timer_service_exports_its_pending_waits) {
  asio::io_context io;
  chronopool::steady_timer a(io, 1h), b(io, 1h);
  a.async_wait([](sys_ns::error_code) {});
  b.async_wait([](sys_ns::error_code) {});
  prometheus_collector c;
  c.add_timer_service("io", io);
  const auto fs = c.Collect();
  const auto* f = family(fs, "chronopool_timer_pending_waits");
  BOOST_TEST_REQUIRE(f != nullptr);
  BOOST_TEST(f->metric.at(0).gauge.value == 2.0);
  BOOST_TEST(f->metric.at(0).label.at(0).name == "context");
  a.cancel();
  b.cancel();
  io.run();
  BOOST_TEST(family(c.Collect(), "chronopool_timer_pending_waits")->metric.at(0).gauge.value == 0.0);
}

// On a manual clock: two waits fire 0 and 4 ms late, one is cancelled.
BOOST_AUTO_TEST_CASE(a_timer_service_exports_its_wait_counters_and_lateness) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  chronopool::steady_timer on_time(io, 10ms), late(io, 16ms), cancelled(io, 1h);
  for (auto* t : {&on_time, &late, &cancelled}) t->async_wait([](sys_ns::error_code) {});
  clock.advance(10ms);  // on_time, on time
  clock.stall(10ms);    // late, due at 16 ms, found at 20 ms
  BOOST_TEST(cancelled.cancel() == 1u);
  clock.advance(0ms);
  prometheus_collector c;
  c.add_timer_service("io", io);
  const auto fs = c.Collect();
  const chronopool::timer_service_stats s = chronopool::timer_stats(io);
  BOOST_TEST(s.completed_waits == 2u);
  BOOST_TEST(s.cancelled_waits == 1u);
  BOOST_TEST(counter_of(fs, "chronopool_timer_waits_completed_total") == 2.0);
  BOOST_TEST(counter_of(fs, "chronopool_timer_waits_cancelled_total") == 1.0);
  check_histogram(fs, "chronopool_timer_wait_lateness_seconds", s.lateness_histogram, "context", "io");
  // 4 ms late exactly: in the 5 ms bucket, not the 2.5 ms one.
  const auto& buckets = family(fs, "chronopool_timer_wait_lateness_seconds")->metric[0].histogram.bucket;
  int seen = 0;
  for (const auto& b : buckets) {
    if (std::abs(b.upper_bound - 0.0025) < 1e-12) {
      BOOST_TEST(b.cumulative_count == 1u);
      ++seen;
    }
    if (std::abs(b.upper_bound - 0.005) < 1e-12) {
      BOOST_TEST(b.cumulative_count == 2u);
      ++seen;
    }
  }
  BOOST_TEST(seen == 2);
  BOOST_TEST(family(fs, "chronopool_timer_wait_lateness_seconds")->metric[0].histogram.sample_sum == 0.004);
}

// A periodic handler's runs on a manual clock: 3 runs of exactly 1 ms.
BOOST_AUTO_TEST_CASE(a_periodic_handler_exports_its_runs_lateness_and_run_time) {
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);
  auto handle = chronopool::schedule_at_fixed_rate(io.get_executor(), 10ms, 10ms, [&] { clock.stall(1ms); });
  clock.advance(35ms);
  prometheus_collector c;
  c.add_periodic("tick", handle);
  handle.cancel();
  clock.advance(0ms);
  const auto fs = c.Collect();  // the collector's copy of the handle keeps the figures readable
  const chronopool::periodic_stats s = handle.stats();
  BOOST_TEST(s.runs == 3u);
  BOOST_TEST(counter_of(fs, "chronopool_periodic_runs_total") == 3.0);
  check_histogram(fs, "chronopool_periodic_lateness_seconds", s.lateness_histogram, "schedule", "tick");
  check_histogram(fs, "chronopool_periodic_run_seconds", s.run_time_histogram, "schedule", "tick");
  BOOST_TEST(family(fs, "chronopool_periodic_run_seconds")->metric[0].histogram.sample_sum == 0.003);
  BOOST_TEST(family(fs, "chronopool_periodic_lateness_seconds")->metric[0].histogram.sample_sum == 0.0);
}

BOOST_AUTO_TEST_CASE(two_pools_are_two_samples_of_one_family_and_remove_drops_one) {
  chronopool::scheduled_thread_pool a(1), b(3);
  prometheus_collector c;
  c.add_pool("a", a);
  c.add_pool("b", b);
  auto fs = c.Collect();
  const auto* f = family(fs, "chronopool_pool_core_threads");
  BOOST_TEST_REQUIRE(f != nullptr);
  BOOST_TEST_REQUIRE(f->metric.size() == 2u);
  BOOST_TEST(f->metric[0].label[0].value == "a");
  BOOST_TEST(f->metric[1].gauge.value == 3.0);
  BOOST_TEST(c.remove("a"));
  BOOST_TEST(!c.remove("a"));
  fs = c.Collect();
  BOOST_TEST(family(fs, "chronopool_pool_core_threads")->metric.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_source_that_throws_is_left_out_of_that_scrape_only) {
  prometheus_collector c;
  bool fail = true;
  c.add_source("job", "flaky", [&](chronopool::metrics::sample_sink& out) {
    out.gauge("chronopool_test_half", "Half a report.", 1.0);
    if (fail) throw std::runtime_error("source down");
    out.gauge("chronopool_test_other", "The other half.", 2.0);
  });
  c.add_source("job", "steady", [](chronopool::metrics::sample_sink& out) { out.counter("chronopool_test_total", "A count.", 7.0); });
  auto fs = c.Collect();
  BOOST_TEST(family(fs, "chronopool_test_half") == nullptr);
  BOOST_TEST(family(fs, "chronopool_test_total")->metric.at(0).counter.value == 7.0);
  fail = false;
  fs = c.Collect();
  BOOST_TEST(family(fs, "chronopool_test_other")->metric.at(0).gauge.value == 2.0);
}

BOOST_AUTO_TEST_CASE(bad_input_is_refused_naming_the_parameter) {
  auto message_of = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  BOOST_TEST(message_of([] { prometheus_collector c({1.0, 0.5}); }).find("latency_buckets[1] = 0.5") != std::string::npos);
  BOOST_TEST(message_of([] { prometheus_collector c({-1.0}); }).find("latency_buckets[0]") != std::string::npos);
  BOOST_TEST(message_of([] { prometheus_collector c({std::numeric_limits<double>::infinity()}); }).find("latency_buckets[0]") !=
             std::string::npos);
  chronopool::scheduled_thread_pool pool(1);
  prometheus_collector c;
  c.add_pool("p", pool);
  BOOST_TEST(message_of([&] { c.add_pool("p", pool); }).find("name \"p\" is already added") != std::string::npos);
  BOOST_TEST(message_of([&] { c.add_pool("", pool); }).find("name must not be empty") != std::string::npos);
  BOOST_TEST(message_of([&] { c.add_source("9lives", "x", [](auto&) {}); }).find("label_name \"9lives\"") !=
             std::string::npos);
  BOOST_TEST(message_of([&] { c.add_source("ok", "x", {}); }).find("report must not be empty") != std::string::npos);
  BOOST_TEST(c.Collect().size() > 0u);  // what was accepted is still exported
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(prometheus_scrape)

BOOST_AUTO_TEST_CASE(an_exposer_on_loopback_serves_the_pool_in_the_text_format) {
  chronopool::scheduled_thread_pool pool(1);
  for (int i = 0; i < 3; ++i) pool.submit([] {}).get();
  BOOST_REQUIRE(test_support::eventually([&] { return pool.stats().completed_task_count == 3; }, std::chrono::seconds(10)));
  auto collector = std::make_shared<prometheus_collector>();
  collector->add_pool("web", pool);
  prometheus::Exposer exposer("127.0.0.1:0");
  exposer.RegisterCollectable(collector);
  const auto ports = exposer.GetListeningPorts();
  BOOST_TEST_REQUIRE(ports.size() == 1u);
  const std::string text = scrape(ports[0]);
  BOOST_TEST((text.starts_with("HTTP/1.1 200") || text.starts_with("HTTP/1.0 200")), text.substr(0, 40));
  auto has = [&](const std::string& line) {
    BOOST_TEST(text.find(line) != std::string::npos, "missing: " << line);
  };
  has("# TYPE chronopool_pool_tasks_completed_total counter\n");
  has("chronopool_pool_tasks_completed_total{pool=\"web\"} 3\n");
  has("# TYPE chronopool_pool_core_threads gauge\n");
  has("chronopool_pool_core_threads{pool=\"web\"} 1\n");
  has("# TYPE chronopool_pool_task_lateness_seconds histogram\n");
  has("chronopool_pool_task_lateness_seconds_count{pool=\"web\"} 3\n");
  has("chronopool_pool_task_lateness_seconds_bucket{pool=\"web\",le=\"+Inf\"} 3\n");
  has("chronopool_pool_task_run_seconds_bucket{pool=\"web\",le=\"10\"} 3\n");
}

BOOST_AUTO_TEST_SUITE_END()

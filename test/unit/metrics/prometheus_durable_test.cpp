// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// add_durable_scheduler: a durable scheduler's counters and histograms as
// Prometheus counters and histograms labelled with its name, equal to its
// stats(). Built only with
// chronopool::durable; no Redis is needed (the figures are read locally).
#include <chronopool/metrics/prometheus_durable.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

BOOST_AUTO_TEST_SUITE(prometheus_durable)

BOOST_AUTO_TEST_CASE(a_durable_scheduler_exports_every_counter_of_its_stats) {
  chronopool::scheduled_thread_pool pool(1);
  chronopool::durable::scheduler_options o;
  o.name_space = "metrics-test";
  o.redis.port = 1;  // nothing listens: the scheduler keeps trying, its counters stay readable
  chronopool::durable::scheduler s(pool.get_executor(), o);
  chronopool::metrics::prometheus_collector c;
  chronopool::metrics::add_durable_scheduler(c, "jobs", s);
  const auto families = c.Collect();
  const auto st = s.stats();
  const std::vector<std::pair<std::string, std::uint64_t>> expected = {
      {"chronopool_durable_fires_claimed_total", st.claimed},
      {"chronopool_durable_fires_acked_total", st.acked},
      {"chronopool_durable_fires_stale_acks_total", st.stale_acks},
      {"chronopool_durable_fires_released_total", st.released},
      {"chronopool_durable_fires_dead_lettered_total", st.dead_lettered},
      {"chronopool_durable_fires_timed_out_total", st.timed_out},
      {"chronopool_durable_fires_no_handler_total", st.no_handler},
      {"chronopool_durable_lease_extensions_total", st.extended},
      {"chronopool_durable_leases_lost_total", st.leases_lost},
      {"chronopool_durable_reconnects_total", st.reconnects},
      {"chronopool_durable_fires_given_back_total", st.given_back},
      {"chronopool_durable_data_lost_total", st.data_lost},
  };
  BOOST_TEST(families.size() == expected.size() + 2);
  for (const auto& [name, value] : expected) {
    const prometheus::MetricFamily* f = nullptr;
    for (const auto& x : families)
      if (x.name == name) f = &x;
    BOOST_TEST_REQUIRE(f != nullptr, name);
    BOOST_TEST((f->type == prometheus::MetricType::Counter), name);
    BOOST_TEST_REQUIRE(f->metric.size() == 1u);
    BOOST_TEST(f->metric[0].label.at(0).name == "scheduler");
    BOOST_TEST(f->metric[0].label.at(0).value == "jobs");
    BOOST_TEST(f->metric[0].counter.value == static_cast<double>(value), name);
  }
  // Nothing claimed without Redis: empty histograms, still exported (a
  // scrape sees every family from the start).
  for (const auto& [name, h] : {std::pair{"chronopool_durable_claim_lag_seconds", &st.claim_lag_histogram},
                                std::pair{"chronopool_durable_handler_run_seconds", &st.run_time_histogram}}) {
    const prometheus::MetricFamily* f = nullptr;
    for (const auto& x : families)
      if (x.name == name) f = &x;
    BOOST_TEST_REQUIRE(f != nullptr, name);
    BOOST_TEST((f->type == prometheus::MetricType::Histogram), name);
    BOOST_TEST_REQUIRE(f->metric.size() == 1u);
    BOOST_TEST(f->metric[0].label.at(0).value == "jobs");
    BOOST_TEST(f->metric[0].histogram.sample_count == h->count());
    BOOST_TEST(f->metric[0].histogram.bucket.back().cumulative_count == 0u);
  }
  BOOST_TEST(c.remove("jobs"));
}

BOOST_AUTO_TEST_SUITE_END()

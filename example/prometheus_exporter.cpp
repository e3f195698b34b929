// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A pool's and an io_context's timer figures served to Prometheus over HTTP
// on loopback: a prometheus_collector registered with prometheus-cpp's
// Exposer, read at each scrape.
//
// Usage: prometheus_exporter [seconds]   (default 2; 0 runs until killed)
// Point Prometheus (or curl) at the address it prints.
#include <chronopool/metrics/prometheus_collector.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include <boost/asio/io_context.hpp>

#include <prometheus/exposer.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  const long seconds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2;

  chronopool::scheduled_thread_pool pool(2);
  auto tick = pool.schedule_at_fixed_rate(0ms, 10ms, [] {});  // some work to measure
  boost::asio::io_context io;
  chronopool::steady_timer idle(io, 1h);
  idle.async_wait([](boost::system::error_code) {});

  auto collector = std::make_shared<chronopool::metrics::prometheus_collector>();
  collector->add_pool("workers", pool);
  collector->add_timer_service("io", io);

  prometheus::Exposer exposer("127.0.0.1:0");  // port 0: any free port
  exposer.RegisterCollectable(collector);
  fmt::print("serving http://127.0.0.1:{}/metrics\n", exposer.GetListeningPorts().at(0));
  std::fflush(stdout);

  for (long s = 0; seconds == 0 || s < seconds; ++s) std::this_thread::sleep_for(1s);

  // The pool goes before the collector would read it: stop exporting first.
  collector->remove("workers");
  tick.cancel(false);
  fmt::print("{}\n", pool.stats());
  idle.cancel();
  io.run();
  return 0;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// nightly_report: a calendar schedule on a pool. By default the report runs
// at 02:30 every night, Berlin time (DST handled by cron_schedule); each run
// is told the instant it stands for, so a run made up after a suspend
// (cron_misfire::fire_once_now, the default) still reports the right night.
//
//   nightly_report                    # 02:30 Europe/Berlin, until killed
//   nightly_report --every-second 2   # every second, exits after 2 runs (the smoke test)
#include <chronopool/scheduled_thread_pool.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>

int main(int argc, char** argv) {
  const bool every_second = argc >= 2 && std::strcmp(argv[1], "--every-second") == 0;
  const int runs_wanted = every_second && argc >= 3 ? std::atoi(argv[2]) : 0;  // 0: forever
  const chronopool::cron_schedule schedule(every_second ? "* * * * * *" : "0 30 2 * * *", "Europe/Berlin");

  chronopool::scheduled_thread_pool pool(1);
  std::atomic<int> runs{0};
  auto report = pool.schedule_cron(schedule, [&](chronopool::cron_fire fire) {
    const auto night = std::chrono::floor<std::chrono::seconds>(fire.scheduled);
    fmt::print("report for {:%F %T} UTC\n", night);
    const bool last = runs_wanted > 0 && ++runs >= runs_wanted;
    return last ? chronopool::periodic_control::stop : chronopool::periodic_control::keep;
  });
  if (auto next = schedule.next_after(std::chrono::system_clock::now()))
    fmt::print("schedule '{}' in {}; first run {:%F %T} UTC\n", schedule.expression(), schedule.time_zone(),
               std::chrono::floor<std::chrono::seconds>(*next));

  report.get();  // returns after the last run (periodic_control::stop); rethrows a run's exception
  pool.shutdown();
  pool.wait_for_termination(std::chrono::seconds(10));
  return EXIT_SUCCESS;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A user of the installed library: a pool task, and a calendar schedule, whose
// time zones link a dependency (date-tz) the package must bring along.
#include <chronopool/cron_schedule.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <chrono>

int main() {
    chronopool::scheduled_thread_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(1), [] { return 42; });
    const chronopool::cron_schedule nightly("0 2 * * *", "Europe/Berlin");
    const auto next = nightly.next_after(std::chrono::system_clock::now());
    return f.get() == 42 && next.has_value() ? 0 : 1;
}

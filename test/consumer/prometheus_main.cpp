// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/metrics/prometheus_collector.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

// Links chronopool::prometheus (and through it prometheus-cpp) from an
// installed tree: a pool's figures come out as metric families.
int main() {
    chronopool::scheduled_thread_pool pool(1);
    chronopool::metrics::prometheus_collector collector;
    collector.add_pool("main", pool);
    const auto families = collector.Collect();
    for (const auto& f : families)
        if (f.name == "chronopool_pool_core_threads" && f.metric.size() == 1 && f.metric[0].gauge.value == 1.0)
            return 0;
    return 1;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/durable/scheduler.hpp>
#include <chronopool/scheduled_thread_pool.hpp>

#include <stdexcept>

// Links chronopool::durable (and through it hiredis) from an installed tree.
int main() {
    chronopool::scheduled_thread_pool pool(1);
    chronopool::durable::scheduler_options o;
    o.name_space.clear();  // refused before any connection is made
    try {
        chronopool::durable::scheduler s(pool.get_executor(), o);
    } catch (const std::invalid_argument&) {
        return 0;
    }
    return 1;
}

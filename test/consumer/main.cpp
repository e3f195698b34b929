// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/scheduled_thread_pool.hpp>

#include <chrono>

int main() {
    chronopool::scheduled_thread_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(1), [] { return 42; });
    return f.get() == 42 ? 0 : 1;
}

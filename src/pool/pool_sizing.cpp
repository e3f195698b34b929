// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The core pool size: its one validation against max_pool_threads, changing
// it at run time, prestarting core threads and core thread time-outs.
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/pool/pool_limits.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace chronopool::detail {

void check_core_pool_size(std::size_t n) {
  if (n > max_pool_threads)
    throw std::invalid_argument(
        fmt::format("chronopool: core_pool_size {} exceeds the maximum of {}", n, max_pool_threads));
}

void pool_core::set_core_pool_size(std::size_t n) {
  check_core_pool_size(n);
  const std::size_t old = core_size_.exchange(n);
  if (live_.load() > n) {
    queue_.interrupt_waiters();  // idle threads re-check and retire after keep_alive
  } else if (n > old) {
    // Start threads for work already queued, as Java does.
    std::size_t k = std::min(n - old, queue_.size());
    while (k-- > 0 && add_worker(n)) {
    }
  }
}

bool pool_core::prestart_core_thread() { return add_worker(core_size_.load()); }

std::size_t pool_core::prestart_core_threads() {
  std::size_t started = 0;
  while (add_worker(core_size_.load())) ++started;
  return started;
}

void pool_core::allow_core_thread_timeout(bool allow) {
  if (allow_core_timeout_.exchange(allow) != allow && allow) queue_.interrupt_waiters();
}

}  // namespace chronopool::detail

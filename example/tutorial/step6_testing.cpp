// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 6: testing code that schedules work, without sleeping.
#include <chronopool/chronopool.hpp>

#include <atomic>
#include <cassert>
#include <chrono>
#include <iostream>

using namespace std::chrono_literals;

// The code under test: it schedules retries on the pool.
void retry(chronopool::scheduled_thread_pool& pool, std::atomic<int>& attempts, int left) {
  ++attempts;
  if (left > 1) pool.schedule(2ms, [&pool, &attempts, left] { retry(pool, attempts, left - 1); });
}

int main() {
  chronopool::scheduled_thread_pool pool(1);
  std::atomic<int> attempts{0};
  pool.execute([&] { retry(pool, attempts, 5); });
  pool.schedule(1h, [] {});  // unrelated work far away

  // Wait until nothing is running and nothing is due in the next 100 ms:
  // every retry has run, the far task is not waited for.
  const bool quiet = pool.wait_until_quiet(std::chrono::steady_clock::now() + 100ms, 5s);
  assert(quiet && attempts == 5);
  std::cout << "quiet: " << quiet << ", attempts: " << attempts << "\n";
  return quiet && attempts == 5 ? 0 : 1;
}

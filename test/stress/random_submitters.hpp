// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The producers of the manual-clock ledgers: threads that each submit a
// share of the tasks, with the same random mix in every ledger: 1 % "never"
// tasks, the rest due after -5..50 ms, a tenth of those cancelled at once.
// What a submission records is the ledger's own business (the callbacks).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace stress {

struct submission_mix {
  int producers = 3;
  std::size_t per_producer = 0;
  std::uint64_t seed = 0;
};

/// Starts mix.producers threads. Producer p submits the ids
/// [p * per_producer, (p + 1) * per_producer): for each, never(id) or
/// timed(id, delay, cancel_at_once). The caller joins the threads.
template <class Never, class Timed>
std::vector<std::thread> start_random_submitters(const submission_mix& mix, Never never, Timed timed) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(mix.producers));
  for (int p = 0; p < mix.producers; ++p) {
    threads.emplace_back([mix, p, never, timed]() mutable {
      std::mt19937_64 rng(mix.seed + static_cast<std::uint64_t>(p));
      std::uniform_int_distribution<int> delay_ms(-5, 50);
      std::uniform_int_distribution<int> pick(0, 99);
      for (std::size_t k = 0; k < mix.per_producer; ++k) {
        const std::size_t id = static_cast<std::size_t>(p) * mix.per_producer + k;
        const int choice = pick(rng);
        if (choice == 0) {
          never(id);
          continue;
        }
        timed(id, std::chrono::milliseconds(delay_ms(rng)), choice < 10);
      }
    });
  }
  return threads;
}

}  // namespace stress

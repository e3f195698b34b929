// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See workload.hpp.
#include "workload.hpp"

#include "../support/bounded_wait.hpp"

#include <chronopool/async_sleep.hpp>

#include "../support/asio.hpp"

#include <atomic>
#include <deque>
#include <random>
#include <thread>

namespace soak {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

constexpr int producers = 2;
constexpr std::size_t timer_count = 8;
constexpr auto settle_limit = 20s;  // everything a cycle started must end within this

struct one_shot {
  std::atomic<int> runs{0};
  chronopool::scheduled_future<int> future;
};

struct periodic {
  std::atomic<int> runs{0};
  std::atomic<int> in_flight{0};
  std::atomic<bool> overlapped{false};
  chronopool::scheduled_future<void> future;

  void run() {
    if (in_flight.fetch_add(1) != 0) overlapped.store(true);
    runs.fetch_add(1);
    in_flight.fetch_sub(1);
  }
};

void violation(counts& c, const std::string& what) {
  if (c.violations++ == 0) c.first_violation = what;
}

/// Waits (bounded) for @p f to be done; false when it is not.
bool settled(const chronopool::scheduled_future_base& f) {
  return f.wait_for(settle_limit) == std::future_status::ready;
}

template <class Pred>
bool eventually(Pred pred) {
  return test_support::eventually(pred, settle_limit);
}

/// A short-lived pool: filled, stopped with shutdown_now() while busy, its
/// returned tasks half run and half dropped, then destroyed.
void short_lived_pool(std::mt19937_64& rng, counts& c) {
  std::deque<one_shot> tasks(200);
  {
    chronopool::scheduled_thread_pool pool(2);
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      one_shot& t = tasks[i];
      auto body = [&t] {
        t.runs.fetch_add(1);
        return 1;
      };
      t.future = (i % 3 == 0) ? pool.schedule(1h, body) : pool.submit(body);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 500)(rng)));
    auto pending = pool.shutdown_now();
    for (std::size_t i = 0; i < pending.size(); i += 2) pending[i].run();
  }  // the rest of pending is dropped (cancelled), then the pool is destroyed
  ++c.pools;
  for (one_shot& t : tasks) {
    ++c.tasks;
    if (!t.future.done()) violation(c, "a task of a destroyed pool is not done");
    const int runs = t.runs.load();
    if (t.future.cancelled()) {
      ++c.cancelled;
      if (runs != 0) violation(c, "a cancelled task of a short-lived pool ran");
    } else {
      ++c.ran;
      if (runs != 1) violation(c, "a task of a short-lived pool ran " + std::to_string(runs) + " times");
    }
  }
}

}  // namespace

void counts::add(const counts& o) {
  tasks += o.tasks;
  ran += o.ran;
  cancelled += o.cancelled;
  periodic_runs += o.periodic_runs;
  timer_waits += o.timer_waits;
  handler_calls += o.handler_calls;
  pools += o.pools;
  if (violations == 0 && o.violations != 0) first_violation = o.first_violation;
  violations += o.violations;
}

struct io_runner {
  explicit io_runner(asio::io_context& io) : guard(io.get_executor()), thread([&io] { io.run(); }) {}
  ~io_runner() {
    guard.reset();
    thread.join();
  }
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  std::thread thread;
};

workload::workload(std::uint64_t seed) : seed_(seed), pool_(3) {
  for (std::size_t i = 0; i < timer_count; ++i) timers_.push_back(std::make_unique<chronopool::steady_timer>(io_));
  runner_ = std::make_unique<io_runner>(io_);
}

workload::~workload() {
  for (auto& t : timers_) t->cancel();
  runner_.reset();  // run() returns once the aborted handlers ran
  timers_.clear();
}

counts workload::cycle(std::chrono::milliseconds length) {
  counts c;
  std::mt19937_64 cycle_rng(seed_ + cycles_++);
  // Shared with the handlers, so a late (lost and then found) one cannot
  // touch a finished cycle's stack.
  struct completions {
    std::atomic<std::uint64_t> waits{0};
    std::atomic<std::uint64_t> calls{0};
    std::atomic<std::uint64_t> posted{0};
    std::atomic<std::uint64_t> posts_ran{0};
  };
  const auto done = std::make_shared<completions>();
  auto& waits = done->waits;
  auto& calls = done->calls;
  auto& posted = done->posted;
  auto& posts_ran = done->posts_ran;
  std::vector<std::deque<one_shot>> one_shots(producers);
  std::vector<std::deque<periodic>> periodics(producers);
  auto on_wait = [done](const sys_ns::error_code&) { done->calls.fetch_add(1); };

  const auto end = steady::now() + length;
  {
    // Seeds drawn here, on this thread: the producers must not share cycle_rng.
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(producers));
    for (auto& s : seeds) s = cycle_rng();
    std::vector<std::jthread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        std::mt19937_64 rng(seeds[static_cast<std::size_t>(p)]);
        std::uniform_int_distribution<int> percent(0, 99);
        auto& mine = one_shots[static_cast<std::size_t>(p)];
        auto& ticks = periodics[static_cast<std::size_t>(p)];
        for (int k = 0; k < 2; ++k) {
          periodic& t = ticks.emplace_back();
          t.future = k == 0 ? pool_.schedule_at_fixed_rate(0ms, 1ms, [&t] { t.run(); })
                            : pool_.schedule_with_fixed_delay(0ms, 1ms, [&t] { t.run(); });
        }
        while (steady::now() < end) {
          const int r = percent(rng);
          if (r < 50) {
            one_shot& t = mine.emplace_back();
            auto body = [&t] {
              t.runs.fetch_add(1);
              return 1;
            };
            const int delay_us = std::uniform_int_distribution<int>(-1000, 2000)(rng);
            t.future = r % 2 == 0 ? pool_.submit(body) : pool_.schedule(std::chrono::microseconds(delay_us), body);
          } else if (r < 60) {
            if (!mine.empty()) mine[std::uniform_int_distribution<std::size_t>(0, mine.size() - 1)(rng)].future.cancel(r % 2 == 0);
          } else if (r < 70) {
            auto& t = *timers_[std::uniform_int_distribution<std::size_t>(0, timer_count - 1)(rng)];
            t.expires_after(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(rng)));
            waits.fetch_add(1);
            t.async_wait(on_wait);
          } else if (r < 73) {
            timers_[std::uniform_int_distribution<std::size_t>(0, timer_count - 1)(rng)]->cancel();
          } else if (r < 83) {
            posted.fetch_add(1);
            asio::post(pool_.get_executor(), [done] { done->posts_ran.fetch_add(1); });
          } else if (r < 88) {
            waits.fetch_add(1);
            chronopool::async_sleep(pool_.get_executor(),
                                    std::chrono::microseconds(std::uniform_int_distribution<int>(0, 1000)(rng)), on_wait);
          } else {
            std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(20, 200)(rng)));
          }
        }
      });
    }
  }
  short_lived_pool(cycle_rng, c);

  // Everything this cycle started must end: periodic tasks by cancel, the
  // rest by running (or having been cancelled) within the settle limit.
  for (auto& ticks : periodics) {
    for (periodic& t : ticks) {
      t.future.cancel();
      if (!settled(t.future)) violation(c, "a cancelled periodic task did not end");
      if (t.overlapped.load()) violation(c, "periodic runs overlapped");
      c.periodic_runs += static_cast<std::uint64_t>(t.runs.load());
    }
  }
  for (auto& mine : one_shots) {
    for (one_shot& t : mine) {
      ++c.tasks;
      if (!settled(t.future)) {
        violation(c, "a one-shot task was lost");
        continue;
      }
      const int runs = t.runs.load();
      if (runs > 1) violation(c, "a one-shot task ran " + std::to_string(runs) + " times");
      if (t.future.cancelled()) {
        ++c.cancelled;  // before it ran, or while running (result discarded)
      } else if (runs == 1) {
        ++c.ran;
      } else {
        violation(c, "a one-shot task succeeded without running");
      }
    }
  }
  for (auto& t : timers_) t->cancel();
  if (!eventually([&] { return calls.load() >= waits.load() && posts_ran.load() >= posted.load(); }))
    violation(c, "timer handlers or posted functions were lost");
  if (calls.load() > waits.load()) violation(c, "a timer handler ran twice");
  c.timer_waits = waits.load();
  c.handler_calls = calls.load();
  return c;
}

}  // namespace soak

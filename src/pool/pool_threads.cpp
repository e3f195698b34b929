// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Starting and reaping the pool's threads: the thread factory, the default
// one, and what a failure to start a thread does to the task that needed it.
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/detail/platform/thread_naming.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace chronopool::detail {
namespace {

void set_thread_name(const std::string& prefix, std::size_t index) {
  // Cut to what the system keeps (15 bytes on Linux) by the platform call.
  platform::set_current_thread_name(fmt::format("{}-{}", prefix, index));
}

// Who runs a thread's body: the body itself, at most once, or the pool,
// which gives it up when the factory failed. Whoever claims first wins, so a
// body called late (by a thread the factory started before it threw) or
// twice does nothing.
enum class body_claim : int { unclaimed, running, abandoned };

}  // namespace

void pool_core::ensure_prestart() {
  const std::size_t live = live_.load();
  const std::size_t core = core_size_.load();
  if (live < core) {
    add_worker(core);
  } else if (live == 0) {
    add_worker(1);  // core size 0: one thread made on demand
  }
}

void pool_core::ensure_thread_for(task_base& t) {
  try {
    ensure_prestart();
  } catch (...) {
    // No thread could be started. If none runs at all, the task would sit in
    // a queue nobody serves: take it back out and let the caller see the
    // error. Otherwise a running thread will take it; report the failure.
    if (live_.load() == 0 && queue_.remove(t)) throw;
    report_untied_error(std::current_exception(), "starting a pool thread", "thread_start_failed");
  }
}

bool pool_core::add_worker(std::size_t limit) {
  reap_threads(false);
  std::exception_ptr late_failure;
  {
    std::lock_guard lock(mutex_);
    const run_state s = state_.load();
    if (s >= run_state::stop) return false;
    if (s == run_state::shutdown && queue_.empty()) return false;
    if (live_.load() >= limit) return false;
    worker& w = workers_.emplace_back();
    w.index = next_index_++;
    try {
      late_failure = start_thread(w);
    } catch (...) {
      workers_.pop_back();
      throw;
    }
    const std::size_t live = live_.load() + 1;
    live_.store(live);
    largest_ = std::max(largest_, live);
  }
  // Not under mutex_: the error handler may call the pool.
  if (late_failure) report_untied_error(late_failure, "the thread factory", "thread_start_failed");
  return true;
}

std::exception_ptr pool_core::start_thread(worker& w) {
  // The new thread may reach get_work() before we count it below: it then
  // waits for mutex_, which we hold, so it is counted before it can retire.
  auto claim = std::make_shared<std::atomic<body_claim>>(body_claim::unclaimed);
  std::function<void()> body = [self = shared_from_this(), &w, claim] {
    auto expected = body_claim::unclaimed;
    if (claim->compare_exchange_strong(expected, body_claim::running)) self->run_worker(w);
  };
  std::exception_ptr failure;
  try {
    if (options_.thread_factory) {
      w.thread = options_.thread_factory(w.index, std::move(body));
      if (!w.thread.joinable())
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                fmt::format("chronopool: the thread factory returned no thread (thread index {})",
                                            w.index));
    } else {
      w.thread = std::thread([prefix = &options_.thread_name_prefix, index = w.index, body = std::move(body)] {
        set_thread_name(*prefix, index);
        body();
      });
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (!failure) return nullptr;
  auto expected = body_claim::unclaimed;
  if (claim->compare_exchange_strong(expected, body_claim::abandoned)) {
    // The body will never run the worker. A thread the factory did start
    // (and then failed) may still call it: the call returns at once.
    if (w.thread.joinable()) w.thread.detach();
    std::rethrow_exception(failure);
  }
  // The body already runs on a thread the factory started before it failed:
  // that thread is a pool thread now. Without a handle to join it, the pool
  // lets it end on its own (it holds the pool's core alive until then).
  return failure;
}

void pool_core::reap_threads(bool all) {
  std::vector<pool_thread> done;
  {
    std::lock_guard lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (all || it->exited) {
        retired_finished_ += it->finished.load(std::memory_order_acquire);
        retired_completed_ += it->completed.load(std::memory_order_relaxed);
        try {
          it->lateness.add_to(retired_lateness_);
          it->run_time.add_to(retired_run_time_);
        } catch (const std::bad_alloc&) {
          // Out of memory: the reaped thread's figures are lost, not its join.
        }
        done.push_back(std::move(it->thread));
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Exited threads are at most finishing try_terminate(), which does not wait
  // for anything we hold; once terminated, the same holds for every thread.
  for (auto& th : done)
    if (th.joinable()) th.join();
}

}  // namespace chronopool::detail

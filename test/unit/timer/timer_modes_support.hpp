// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the timer-mode tests share: outcome recorders for a handler, an io_context
// run on a thread of its own or bounded, and expiry-order checks.
#pragma once

#include <chronopool/detail/timer/timer_shard.hpp>  // testing::before_claim
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "timer_test_support.hpp"

using chronopool::scheduled_thread_pool;

namespace {

/// Completions that failed or came before their timer's expiry, counted
/// from any thread.
struct timeliness {
  std::atomic<int> early{0};
  std::atomic<int> failures{0};
  void record(const timer& t, const error_code& ec) {
    if (ec) ++failures;
    if (steady::now() < t.expiry()) ++early;
  }
};

/// Completions (indexes into @p expiry, in the order they ran) that ran
/// before one with a later expiry.
inline int out_of_expiry_order(const std::vector<steady::time_point>& expiry, const std::vector<std::size_t>& order) {
  int n = 0;
  for (std::size_t k = 1; k < order.size(); ++k)
    if (expiry[order[k]] < expiry[order[k - 1]]) ++n;
  return n;
}

/// What one completion handler saw, readable from another thread.
class sync_outcome {
 public:
  explicit sync_outcome(const scheduled_thread_pool* pool = nullptr) : pool_(pool) {}

  auto handler() {
    return [this](const error_code& e) {
      std::lock_guard lock(mutex_);
      ++calls_;
      ec_ = e;
      at_ = steady::now();
      thread_ = std::this_thread::get_id();
      on_pool_ = pool_ != nullptr && pool_->running_in_this_thread();
      cv_.notify_all();
    };
  }
  /// True when the handler ran within @p timeout.
  bool wait(steady::duration timeout = long_wait) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return calls_ > 0; });
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  error_code ec() {
    std::lock_guard lock(mutex_);
    return ec_;
  }
  steady::time_point at() {
    std::lock_guard lock(mutex_);
    return at_;
  }
  std::thread::id thread() {
    std::lock_guard lock(mutex_);
    return thread_;
  }
  bool on_pool() {
    std::lock_guard lock(mutex_);
    return on_pool_;
  }

 private:
  const scheduled_thread_pool* pool_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int calls_ = 0;
  error_code ec_;
  steady::time_point at_{};
  std::thread::id thread_{};
  bool on_pool_ = false;
};

/// @p o's handler ran once, with success, at or after @p expiry, on this
/// thread (an io_context's, run here) and not on its pool's.
inline void check_completed_here(sync_outcome& o, steady::time_point expiry) {
  BOOST_TEST(o.calls() == 1);
  BOOST_TEST(!o.ec());
  BOOST_TEST((o.at() >= expiry));
  BOOST_TEST((o.thread() == std::this_thread::get_id()));
  BOOST_TEST(!o.on_pool());
}

/// Runs an io_context on a thread of its own until destroyed (always joined).
class io_thread {
 public:
  explicit io_thread(asio::io_context& io) : io_(io), guard_(io.get_executor()), thread_([this] { io_.run(); }) {}
  ~io_thread() {
    io_.stop();
    thread_.join();
  }
  std::thread::id id() const { return thread_.get_id(); }
  /// Waits until everything posted to the context so far has run.
  bool drain() {
    std::promise<void> p;
    auto f = p.get_future();
    asio::post(io_, [&p] { p.set_value(); });
    return f.wait_for(long_wait) == std::future_status::ready;
  }

 private:
  asio::io_context& io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

/// An io_context whose services can be shut down while objects still exist,
/// as ~io_context does first.
struct shutdownable_io_context : asio::io_context {
  using asio::io_context::shutdown;
};

/// A token whose lifetime shows whether a handler still exists.
struct lifetime_probe {
  std::shared_ptr<int> token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
};

}  // namespace

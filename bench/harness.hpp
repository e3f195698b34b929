// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The execution set-ups a run measures, and a switch that builds the one a
// variant names. A run creates its set-up, does its work, and must call
// finish() before its own locals go away: handlers still queued (a cancelled
// wait's operation_aborted, say) may refer to them.
#pragma once

#include "model.hpp"

#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace bench {

/// An io_context run by n threads, as a server runs one.
class io_runner {
 public:
  explicit io_runner(unsigned n) : guard_(io_.get_executor()) {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~io_runner() { finish(); }
  io_runner(const io_runner&) = delete;
  io_runner& operator=(const io_runner&) = delete;

  boost::asio::io_context& context() { return io_; }
  /// Lets run() return once the context is out of work, and joins the threads.
  void finish() {
    guard_.reset();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::vector<std::thread> threads_;
};

class asio_pool_runner {
 public:
  explicit asio_pool_runner(unsigned n) : pool_(n) {}
  ~asio_pool_runner() { finish(); }
  boost::asio::thread_pool& context() { return pool_; }
  void finish() { pool_.join(); }

 private:
  boost::asio::thread_pool pool_;
};

class cp_pool_runner {
 public:
  // Threads start on demand; start them now, as asio::thread_pool does, so
  // that no run pays for thread creation.
  explicit cp_pool_runner(unsigned n, std::chrono::nanoseconds spin_limit = {}) : pool_(options(n, spin_limit)) {
    pool_.prestart_core_threads();
  }
  ~cp_pool_runner() { finish(); }
  chronopool::scheduled_thread_pool& context() { return pool_; }
  void finish() {
    if (!finished_) pool_.join();
    finished_ = true;
  }

 private:
  static chronopool::scheduled_thread_pool_options options(unsigned n, std::chrono::nanoseconds spin_limit) {
    chronopool::scheduled_thread_pool_options o;
    o.core_pool_size = n;
    o.precision_spin_limit = spin_limit;
    if (wakeup_slack) o.wakeup_slack = *wakeup_slack;
    return o;
  }

  chronopool::scheduled_thread_pool pool_;
  bool finished_ = false;
};

/// An io_context run by n threads whose timers are kept by a one-thread
/// scheduled_thread_pool (chronopool::use_pool): time-keeping runs off the I/O
/// threads, handlers still run on them. The pool is declared first so that it
/// outlives the context's timer service.
class io_pool_runner {
 public:
  explicit io_pool_runner(unsigned n) : pool_(pool_options()), io_(n) {
    chronopool::use_pool(io_.context(), pool_);
    if (wakeup_slack) chronopool::set_wakeup_slack(io_.context(), *wakeup_slack);
    pool_.prestart_core_threads();
  }
  ~io_pool_runner() { finish(); }
  boost::asio::io_context& context() { return io_.context(); }
  void finish() { io_.finish(); }

 private:
  static chronopool::scheduled_thread_pool_options pool_options() {
    chronopool::scheduled_thread_pool_options o;
    if (wakeup_slack) o.wakeup_slack = *wakeup_slack;
    return o;
  }

  chronopool::scheduled_thread_pool pool_;
  io_runner io_;
};

/// Builds the set-up of @p v with @p threads threads and calls
/// `f.template operator()<Timer>(runner)`, Timer being the variant's timer type.
template <class F>
auto with_variant(variant v, unsigned threads, F&& f) {
  switch (v) {
    case variant::asio_io: {
      io_runner r(threads);
      return f.template operator()<boost::asio::steady_timer>(r);
    }
    case variant::cp_io: {
      io_runner r(threads);
      if (wakeup_slack) chronopool::set_wakeup_slack(r.context(), *wakeup_slack);
      return f.template operator()<chronopool::steady_timer>(r);
    }
    case variant::cp_io_pool: {
      io_pool_runner r(threads);
      return f.template operator()<chronopool::steady_timer>(r);
    }
    case variant::asio_pool: {
      asio_pool_runner r(threads);
      return f.template operator()<boost::asio::steady_timer>(r);
    }
    case variant::cp_io_precise: {
      io_runner r(threads);
      chronopool::set_poll_window(r.context(), precise_spin_limit);
      return f.template operator()<chronopool::steady_timer>(r);
    }
    case variant::cp_precise: {
      cp_pool_runner r(threads, precise_spin_limit);
      return f.template operator()<chronopool::steady_timer>(r);
    }
    case variant::cp_pool:
    default: {
      cp_pool_runner r(threads);
      return f.template operator()<chronopool::steady_timer>(r);
    }
  }
}

/// Counts arrivals down to zero; wait() returns once the last one arrived.
class countdown {
 public:
  explicit countdown(std::int64_t n) : left_(n), done_(n <= 0) {}
  void arrive() noexcept {
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      done_.store(true, std::memory_order_release);
      done_.notify_all();
    }
  }
  bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  void wait() const noexcept { done_.wait(false, std::memory_order_acquire); }

 private:
  std::atomic<std::int64_t> left_;
  std::atomic<bool> done_;
};

/// Keeps a value alive in the compiler's eyes (the work of a handler must not
/// be optimised away).
template <class T>
inline void do_not_optimize(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

using clock = std::chrono::steady_clock;

inline std::int64_t ns_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

}  // namespace bench

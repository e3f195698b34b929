// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// See timer_churn.hpp.
#include "timer_churn.hpp"

#include <chronopool/timer_service.hpp>

#include "../support/asio.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <utility>

namespace stress {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

/// Counts live handler objects: a handler that is never destroyed (leaked
/// with its wait) leaves the count above zero.
class live_token {
 public:
  explicit live_token(std::atomic<long>& n) noexcept : n_(&n) { n_->fetch_add(1); }
  live_token(const live_token& o) noexcept : live_token(*o.n_) {}
  live_token& operator=(const live_token&) = delete;
  ~live_token() { n_->fetch_sub(1); }

 private:
  std::atomic<long>* n_;
};

/// Expiry delays an untrusted caller might pass: now, the past, the extremes
/// of the type, and short real delays.
clock::duration random_delay(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: return clock::duration::zero();
    case 1: return -1ms;
    case 2: return clock::duration::max();
    case 3: return clock::duration::min();
    default: return std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(rng));
  }
}

clock::time_point random_time_point(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: return clock::time_point::max();
    case 1: return clock::time_point::min();
    case 2: return clock::now() - 1ms;
    default: return clock::now() + std::chrono::microseconds(std::uniform_int_distribution<int>(0, 2000)(rng));
  }
}

}  // namespace

std::string timer_counts::str() const {
  std::ostringstream os;
  os << "timer waits=" << waits << " (rearmed in handler=" << rearmed_in_handler << ") succeeded=" << succeeded
     << " aborted=" << aborted << " cancel_reported=" << cancel_reported;
  return os.str();
}

timer_churn::timer_churn(std::uint64_t seed, std::size_t waits_per_armer)
    : seed_(seed), waits_per_armer_(waits_per_armer) {
  // Room for the armers' waits plus as many again re-armed from handlers.
  capacity_ = 2 * armers * waits_per_armer;
  records_ = std::make_unique<wait_record[]>(capacity_);
  for (std::size_t i = 0; i < timer_count; ++i) timers_.push_back(std::make_unique<chronopool::steady_timer>(io_));
}

timer_churn::~timer_churn() {
  if (started_) {
    violation_log ignored;
    stop(ignored);
  }
}

void timer_churn::start() {
  started_ = true;
  work_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
      io_.get_executor());
  for (int i = 0; i < io_threads; ++i)
    io_threads_.emplace_back([this] {
      io_.run();
      io_threads_done_.fetch_add(1);
    });
  for (int a = 0; a < armers; ++a) armer_threads_.emplace_back([this, a] { arm_loop(a); });
}

timer_churn::wait_record* timer_churn::claim_record() {
  const std::size_t i = next_record_.fetch_add(1);
  return i < capacity_ ? &records_[i] : nullptr;
}

/// A handler of one or two words (@p Extra: nothing, or a second word) that
/// moves without throwing: its wait lives in its timer (see
/// chronopool::detail::timer_impl) when the timer has none. It counts
/// itself live as live_token does (moved-from ones are empty).
template <class Extra>
class timer_churn::small_handler {
 public:
  explicit small_handler(wait_record* rec) noexcept : rec_(rec) { rec_->owner->live_handlers_.fetch_add(1); }
  small_handler(small_handler&& o) noexcept : rec_(std::exchange(o.rec_, nullptr)), extra_(o.extra_) {}
  small_handler& operator=(small_handler&&) = delete;
  ~small_handler() {
    if (rec_ != nullptr) rec_->owner->live_handlers_.fetch_sub(1);
  }
  void operator()(const sys_ns::error_code& ec) { rec_->owner->on_complete(*rec_, rec_->timer_index, ec); }

 private:
  wait_record* rec_;
  [[no_unique_address]] Extra extra_{};
};

namespace {
struct no_second_word {};
}  // namespace

void timer_churn::start_wait(std::size_t timer_index, bool from_handler) {
  wait_record* rec = claim_record();
  if (rec == nullptr) return;
  if (from_handler) rearmed_in_handler_.fetch_add(1);
  if ((rec - records_.get()) % 2 == 0) {
    // Half the waits with a handler of one or two words: inline in their timers.
    rec->owner = this;
    rec->timer_index = timer_index;
    if ((rec - records_.get()) % 4 == 0) {
      timers_[timer_index]->async_wait(small_handler<no_second_word>(rec));
    } else {
      timers_[timer_index]->async_wait(small_handler<std::uintptr_t>(rec));
    }
    return;
  }
  timers_[timer_index]->async_wait([this, rec, timer_index, token = live_token(live_handlers_)](
                                       const sys_ns::error_code& ec) {
    (void)token;
    on_complete(*rec, timer_index, ec);
  });
}

void timer_churn::on_complete(wait_record& rec, std::size_t timer_index, const sys_ns::error_code& ec) {
  rec.calls.fetch_add(1);
  if (!ec) {
    succeeded_.fetch_add(1);
  } else if (ec == asio::error::operation_aborted) {
    aborted_.fetch_add(1);
  } else {
    other_errors_.fetch_add(1);
  }
  // The usual Asio pattern: re-arm the timer from its own handler.
  thread_local std::mt19937_64 rng{seed_ ^ std::hash<std::thread::id>()(std::this_thread::get_id())};
  if (stopping_.load() || std::uniform_int_distribution<int>(0, 4)(rng) != 0) return;
  const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 500)(rng));
  cancel_reported_.fetch_add(timers_[timer_index]->expires_after(delay));
  start_wait(timer_index, true);
}

void timer_churn::arm_loop(int armer) {
  std::mt19937_64 rng(seed_ * 7919 + static_cast<std::uint64_t>(armer));
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<std::size_t> pick(0, timer_count - 1);
  for (std::size_t made = 0; made < waits_per_armer_;) {
    const std::size_t index = pick(rng);
    chronopool::steady_timer& t = *timers_[index];
    const int r = percent(rng);
    if (r < 45) {
      if (next_record_.load() >= capacity_) break;  // the ledger is full
      start_wait(index, false);
      ++made;
    } else if (r < 65) {
      cancel_reported_.fetch_add(t.expires_after(random_delay(rng)));
    } else if (r < 72) {
      cancel_reported_.fetch_add(t.expires_at(random_time_point(rng)));
    } else if (r < 85) {
      cancel_reported_.fetch_add(t.cancel());
    } else if (r < 95) {
      cancel_reported_.fetch_add(t.cancel_one());
    } else {
      (void)t.expiry();
      // Let the io threads catch up now and then.
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 300)(rng)));
    }
  }
}

timer_counts timer_churn::stop(violation_log& log) {
  if (!started_) return {};
  started_ = false;
  stopping_.store(true);
  for (auto& th : armer_threads_) th.join();
  armer_threads_.clear();

  // Cancel whatever still waits (far or "never" expiries), then let run()
  // return: it must, once every wait has completed.
  for (auto& t : timers_) cancel_reported_.fetch_add(t->cancel());
  work_.reset();
  const auto limit = clock::now() + 30s;
  while (io_threads_done_.load() < io_threads && clock::now() < limit) std::this_thread::sleep_for(1ms);
  if (io_threads_done_.load() < io_threads) {
    log.add("io_context::run() did not return: " +
            std::to_string(asio::use_service<chronopool::timer_service>(io_).pending_waits()) +
            " waits still pending");
    io_.stop();
  }
  for (auto& th : io_threads_) th.join();
  io_threads_.clear();

  const std::size_t pending = asio::use_service<chronopool::timer_service>(io_).pending_waits();
  if (pending != 0) log.add("the timer service still counts " + std::to_string(pending) + " pending waits");
  timers_.clear();

  timer_counts c;
  c.waits = std::min(next_record_.load(), capacity_);
  c.rearmed_in_handler = rearmed_in_handler_.load();
  c.succeeded = succeeded_.load();
  c.aborted = aborted_.load();
  c.cancel_reported = cancel_reported_.load();
  for (std::size_t i = 0; i < c.waits; ++i) {
    const int calls = records_[i].calls.load();
    if (calls != 1) log.add("timer wait " + std::to_string(i) + " completed " + std::to_string(calls) + " times");
  }
  if (other_errors_.load() != 0)
    log.add(std::to_string(other_errors_.load()) + " timer handlers saw an error other than operation_aborted");
  if (c.succeeded + c.aborted + other_errors_.load() != c.waits)
    log.add("timer handler calls (" + std::to_string(c.succeeded + c.aborted) + ") != waits (" +
            std::to_string(c.waits) + ")");
  if (c.aborted != c.cancel_reported)
    log.add("aborted timer handlers (" + std::to_string(c.aborted) + ") != cancellations reported by the timers (" +
            std::to_string(c.cancel_reported) + ")");
  if (live_handlers_.load() != 0)
    log.add(std::to_string(live_handlers_.load()) + " timer handler objects were never destroyed");
  return c;
}

}  // namespace stress

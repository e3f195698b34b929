// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Shared helpers for the delayed_work_queue / task_base unit tests.
#pragma once

#include "../../support/bounded_wait.hpp"

#include <chronopool/detail/queue/delayed_work_queue.hpp>
#include <chronopool/detail/time/saturating_time.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/pool/task_impl.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <thread>

// Lets BOOST_TEST print the enums it compares (Boost.Test's customization
// point, found by argument-dependent lookup).
namespace chronopool::detail {
inline std::ostream& boost_test_print_type(std::ostream& os, task_status s) {
  switch (s) {
    case task_status::pending: return os << "pending";
    case task_status::running: return os << "running";
    case task_status::paused: return os << "paused";
    case task_status::succeeded: return os << "succeeded";
    case task_status::failed: return os << "failed";
    case task_status::cancelled: return os << "cancelled";
  }
  return os << "task_status(" << static_cast<int>(s) << ")";
}
inline std::ostream& boost_test_print_type(std::ostream& os, delayed_work_queue::wait_status s) {
  using ws = delayed_work_queue::wait_status;
  switch (s) {
    case ws::task: return os << "task";
    case ws::function: return os << "function";
    case ws::timeout: return os << "timeout";
    case ws::interrupted: return os << "interrupted";
    case ws::closed: return os << "closed";
  }
  return os << "wait_status(" << static_cast<int>(s) << ")";
}
inline std::ostream& boost_test_print_type(std::ostream& os, delayed_work_queue::mode m) {
  using md = delayed_work_queue::mode;
  switch (m) {
    case md::open: return os << "open";
    case md::draining: return os << "draining";
    case md::closed: return os << "closed";
  }
  return os << "mode(" << static_cast<int>(m) << ")";
}
inline std::ostream& boost_test_print_type(std::ostream& os, delayed_work_queue::offer_status o) {
  using os_t = delayed_work_queue::offer_status;
  switch (o) {
    case os_t::queued: return os << "queued";
    case os_t::cancelled: return os << "cancelled";
    case os_t::full: return os << "full";
  }
  return os << "offer_status(" << static_cast<int>(o) << ")";
}
}  // namespace chronopool::detail

namespace queue_test {

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;
using cpd::clock;
using cpd::time_point;

/// Upper bound for every wait in these tests: far above any expected latency,
/// so it only ever fires on a real hang.
inline constexpr auto hang_limit = std::chrono::seconds(5);

/// A time point as a printable tick count (Boost.Test prints operands).
inline time_point::rep ticks(time_point t) noexcept { return t.time_since_epoch().count(); }

/// A deadline index's node and nothing else, for tests of the index alone.
struct bare_node : cpd::index_node {};

/// Counts live instances; a callable capturing one tells when it is destroyed.
struct life_counter {
  std::atomic<long> live{0};
  std::atomic<long> created{0};
};

class tracked {
 public:
  explicit tracked(life_counter& c) noexcept : c_(&c) {
    c_->live.fetch_add(1);
    c_->created.fetch_add(1);
  }
  tracked(const tracked& o) noexcept : tracked(*o.c_) {}
  tracked& operator=(const tracked&) = delete;
  ~tracked() { c_->live.fetch_sub(1); }

 private:
  life_counter* c_;
};

/// A one-shot no-op task with the given heap key.
inline cpd::task_ptr make_noop(time_point deadline, std::uint64_t sequence) {
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {});
  t->set_deadline(deadline);
  t->set_sequence(sequence);
  return t;
}

/// A one-shot no-op task whose callable is counted by @p c.
inline cpd::task_ptr make_tracked(life_counter& c, time_point deadline, std::uint64_t sequence) {
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [g = tracked(c)] { (void)g; });
  t->set_deadline(deadline);
  t->set_sequence(sequence);
  return t;
}

/// An allocator that counts deallocations: a task made with it tells when the
/// task object itself (not just its callable) is freed, i.e. when the last
/// reference, such as the queue's, is dropped.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::atomic<int>* freed;

  explicit counting_allocator(std::atomic<int>& f) noexcept : freed(&f) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : freed(o.freed) {}

  T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept {
    std::allocator<T>().deallocate(p, n);
    freed->fetch_add(1);
  }
  template <class U>
  friend bool operator==(const counting_allocator& a, const counting_allocator<U>& b) noexcept {
    return a.freed == b.freed;
  }
};

/// A no-op task whose deallocation increments @p freed.
inline cpd::task_ptr make_probe(std::atomic<int>& freed, time_point deadline, std::uint64_t sequence) {
  cpd::task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {}, counting_allocator<void>(freed));
  t->set_deadline(deadline);
  t->set_sequence(sequence);
  return t;
}

/// Polls @p pred every millisecond until it holds or hang_limit passes.
template <class Pred>
bool eventually(Pred pred) {
  return test_support::eventually(pred, hang_limit);
}

/// Runs @p f on its own thread and waits for it up to hang_limit. If it is
/// still blocked then (a bug), calls @p rescue to release it before joining.
/// Returns whether @p f finished in time. Keeps a broken blocking call from
/// hanging the whole suite.
template <class F, class Rescue>
bool finishes_in_time(F f, Rescue rescue) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    f();
    done.store(true);
  });
  const bool ok = eventually([&] { return done.load(); });
  if (!ok) rescue();
  t.join();
  return ok;
}

}  // namespace queue_test

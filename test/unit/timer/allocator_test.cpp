// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A wait is allocated with its handler's associated allocator, as Asio's
// operations are.
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>

using namespace std::chrono_literals;

namespace {

struct allocation_counts {
  std::atomic<int> allocated{0};
  std::atomic<int> freed{0};
};

template <class T>
struct counting_allocator {
  using value_type = T;
  allocation_counts* counts;
  explicit counting_allocator(allocation_counts* c) noexcept : counts(c) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : counts(o.counts) {}
  T* allocate(std::size_t n) {
    counts->allocated.fetch_add(1);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    counts->freed.fetch_add(1);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept { return counts == o.counts; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(wait_allocation)

BOOST_AUTO_TEST_CASE(timer_wait_uses_the_handlers_allocator_and_frees_it) {
  allocation_counts counts;
  {
    asio::io_context io;
    chronopool::steady_timer t(io, 1ms);
    bool called = false;
    t.async_wait(asio::bind_allocator(counting_allocator<int>(&counts), [&](sys_ns::error_code ec) {
      called = !ec;
    }));
    BOOST_TEST(counts.allocated.load() >= 1);  // the wait itself came from the handler's allocator
    io.run();
    BOOST_TEST(called);
  }
  BOOST_TEST(counts.freed.load() == counts.allocated.load());  // and went back to it
}

BOOST_AUTO_TEST_CASE(a_cancelled_wait_returns_its_memory_to_the_handlers_allocator) {
  allocation_counts counts;
  {
    asio::io_context io;
    chronopool::steady_timer t(io, 1h);
    t.async_wait(asio::bind_allocator(counting_allocator<int>(&counts), [](sys_ns::error_code) {}));
    t.cancel();
    io.run();
  }
  BOOST_TEST(counts.allocated.load() >= 1);
  BOOST_TEST(counts.freed.load() == counts.allocated.load());
}

BOOST_AUTO_TEST_SUITE_END()

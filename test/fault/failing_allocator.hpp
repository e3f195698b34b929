// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// An allocator that throws std::bad_alloc at a chosen allocation, for
// injecting allocation failure through an Asio handler's associated
// allocator (asio::bind_allocator): the pool's executor and chronopool's
// timers allocate their work with it.
#pragma once

#include "fault_counter.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>

namespace fault {

/// Shared by all copies (and rebinds) of one failing_allocator.
struct allocation_budget {
  std::atomic<std::size_t> fail_at{0};  // 1-based index of the allocation that throws; 0: none
  std::atomic<std::size_t> attempts{0};
  std::atomic<std::size_t> failures{0};
  std::atomic<std::size_t> deallocations{0};

  std::size_t successful() const { return attempts.load() - failures.load(); }
  /// Everything allocated was given back.
  bool balanced() const { return deallocations.load() == successful(); }
};

template <class T>
struct failing_allocator {
  using value_type = T;
  allocation_budget* budget;

  explicit failing_allocator(allocation_budget& b) noexcept : budget(&b) {}
  template <class U>
  failing_allocator(const failing_allocator<U>& o) noexcept : budget(o.budget) {}

  T* allocate(std::size_t n) {
    if (budget->attempts.fetch_add(1) + 1 == budget->fail_at.load()) {
      budget->failures.fetch_add(1);
      injected("std::bad_alloc from a handler's associated allocator");
      throw std::bad_alloc();
    }
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    budget->deallocations.fetch_add(1);
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  friend bool operator==(const failing_allocator& a, const failing_allocator<U>& b) noexcept {
    return a.budget == b.budget;
  }
};

}  // namespace fault

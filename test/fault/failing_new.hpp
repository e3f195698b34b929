// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Allocation failure on demand for code that allocates with plain `new`
// (std::allocator, std::vector growth, std::thread): this test program
// replaces the global operator new, and a thread can arm it to throw
// std::bad_alloc at its n-th allocation from now. Only the arming thread is
// affected, and only while a scoped_allocation_failure is alive.
#pragma once

#include <cstddef>

namespace fault {

class scoped_allocation_failure {
 public:
  /// The @p nth (1-based) allocation on this thread from now on throws;
  /// with @p from_then_on, every one after it too (memory that stays short).
  explicit scoped_allocation_failure(std::size_t nth, bool from_then_on = false);
  ~scoped_allocation_failure();
  scoped_allocation_failure(const scoped_allocation_failure&) = delete;
  scoped_allocation_failure& operator=(const scoped_allocation_failure&) = delete;

  /// Whether the armed allocation happened (and threw).
  bool fired() const;
  /// Allocations seen on this thread since arming (including the one that threw).
  std::size_t allocations() const;
};

}  // namespace fault

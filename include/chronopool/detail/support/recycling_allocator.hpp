// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A per-thread cache of recently freed operation blocks.
//
// A timer wait is one allocation that is freed when the wait completes or is
// cancelled, and the next wait usually starts on the same thread moments
// later (a timeout re-armed for every request). Keeping the last few freed
// blocks of each thread makes that steady state allocation-free, as Asio's
// own recycling allocator does for its operations. A block freed on another
// thread than the one that allocated it joins that thread's cache. Blocks
// beyond the cache come from and go back to the handoff allocator's slabs
// (handoff_allocator.hpp): a wait armed on one thread is often completed on
// another.
//
// Under AddressSanitizer the cache is bypassed, so that a use after free of
// an operation is still reported.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace chronopool::detail {

/// Allocates @p size bytes at the default new alignment, from this thread's
/// cache when a block of exactly that size is there.
void* recycled_allocate(std::size_t size);
/// Gives back a block from recycled_allocate() with the same @p size; it is
/// kept in this thread's cache when there is room, else freed.
void recycled_deallocate(void* p, std::size_t size) noexcept;
/// Blocks in this thread's cache (a testing aid).
std::size_t recycled_cached_blocks() noexcept;
/// Frees every block in this thread's cache (a testing aid).
void recycled_flush() noexcept;
/// False in builds where the cache is bypassed (AddressSanitizer).
bool recycling_enabled() noexcept;

/// A standard allocator over recycled_allocate(). Used for the operations of
/// handlers whose associated allocator is the default std::allocator.
template <class T>
class recycling_allocator {
 public:
  using value_type = T;

  recycling_allocator() noexcept = default;
  template <class U>
  recycling_allocator(const recycling_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      return std::allocator<T>().allocate(n);
    } else {
      if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
      return static_cast<T*>(recycled_allocate(n * sizeof(T)));
    }
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      std::allocator<T>().deallocate(p, n);
    } else {
      recycled_deallocate(p, n * sizeof(T));
    }
  }

  template <class U>
  friend bool operator==(const recycling_allocator&, const recycling_allocator<U>&) noexcept {
    return true;
  }
};

/// The allocator an operation of a handler with associated allocator @p A
/// uses for itself (rebound to @p Op): the handler's own, except that the
/// default std::allocator becomes the recycling one.
template <class A, class Op>
using operation_allocator_t =
    std::conditional_t<std::is_same_v<typename std::allocator_traits<A>::template rebind_alloc<void>, std::allocator<void>>,
                       recycling_allocator<Op>, typename std::allocator_traits<A>::template rebind_alloc<Op>>;

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The replaced global operator new behind scoped_allocation_failure.
#include "failing_new.hpp"

#include "fault_counter.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace fault {
namespace {

// Constant-initialised thread_locals: safe to touch from operator new at any
// point of a thread's life.
thread_local std::size_t countdown = 0;  // 0: disarmed
thread_local std::size_t seen = 0;
thread_local bool did_fire = false;
thread_local bool keep_failing = false;

void count_or_fail() {
  if (countdown != 0) {
    ++seen;
    if (--countdown == 0) {
      did_fire = true;
      if (keep_failing) countdown = 1;  // the next one fails too
      throw std::bad_alloc();
    }
  }
}

void* allocate(std::size_t n) {
  count_or_fail();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t n, std::align_val_t a) {
  count_or_fail();
  const auto align = static_cast<std::size_t>(a);
  // aligned_alloc wants a size that is a multiple of the alignment.
  if (void* p = std::aligned_alloc(align, (std::max<std::size_t>(n, 1) + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}

}  // namespace

scoped_allocation_failure::scoped_allocation_failure(std::size_t nth, bool from_then_on) {
  seen = 0;
  did_fire = false;
  keep_failing = from_then_on;
  countdown = nth;
}

scoped_allocation_failure::~scoped_allocation_failure() {
  countdown = 0;
  keep_failing = false;
  if (did_fire) injected("std::bad_alloc from operator new (n-th allocation)");
}

bool scoped_allocation_failure::fired() const { return did_fire; }
std::size_t scoped_allocation_failure::allocations() const { return seen; }

}  // namespace fault

// The replacements. The sized forms of libstdc++ forward to these or to
// malloc/free; the aligned forms are replaced as well, so that an aligned
// allocation (a pool task's slab, see detail/support/handoff_allocator.hpp)
// can be failed too. The nothrow forms are replaced too: under ASan they
// would otherwise be the sanitizer's, paired with our free-based delete (an
// alloc-dealloc mismatch); replaced, a nothrow allocation can be failed too
// (it returns null).
void* operator new(std::size_t n) { return fault::allocate(n); }
void* operator new[](std::size_t n) { return fault::allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return fault::allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return fault::allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void* operator new(std::size_t n, std::align_val_t a) { return fault::allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return fault::allocate_aligned(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return fault::allocate_aligned(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return fault::allocate_aligned(n, a);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

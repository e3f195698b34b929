// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Memory for objects made on one thread and destroyed on another.
//
// A pool task is allocated by the thread that submits it and freed by the
// pool thread that runs it. Under glibc's malloc every such free returns the
// block to the submitter's arena under that arena's lock, and at a million
// tasks a second the pool threads spend their time waiting on it. This
// allocator gives each thread its own slabs (64 KiB, one block size each).
// The owner allocates and frees in them without atomics; any other thread
// frees a block by pushing it onto its slab's lock-free list, which the
// owner takes back whole the next time it runs out of blocks. A slab whose
// blocks are all back is then freed (one spare is kept per thread), so
// memory follows the blocks in use rather than their peak, as of the
// owner's last look: a thread that made a burst of tasks and allocates no
// more holds the burst's slabs until its current slab runs out or it ends.
// Up to handoff_kept_max empty slabs are kept process-wide instead of
// going back to the system, for any thread's next slab: fresh pages cost a
// fault each at their first touch.
//
// A thread that ends leaves its slabs to the next thread that allocates;
// blocks still out are freed into them as usual. No packaged allocator
// offers per-object cross-thread frees without replacing malloc for the
// whole process, which a library must not do; hence this one.
//
// Under AddressSanitizer the slabs are bypassed, so that a use after free
// of a task is still reported.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace chronopool::detail {

/// The largest block the slabs serve; larger sizes go to operator new.
inline constexpr std::size_t handoff_max_block = 512;

/// Allocates @p size bytes at the default new alignment.
void* handoff_allocate(std::size_t size);
/// Frees a block from handoff_allocate() of the same @p size, on any thread.
void handoff_deallocate(void* p, std::size_t size) noexcept;

/// The slabs the calling thread owns, its spare included, after taking back
/// the blocks other threads freed (a testing aid).
std::size_t handoff_thread_slabs() noexcept;
/// Makes the calling thread's next allocation of every size take a new slab,
/// and every new slab of this thread come from operator new, not from the
/// kept empty ones (a testing aid: it lets a test fail that allocation).
/// Slabs with blocks out are set aside until one of them comes back.
void handoff_start_new_slabs() noexcept;
/// Empty slabs kept, process-wide, for any thread's next new slab (a testing aid).
std::size_t handoff_kept_slabs() noexcept;
/// The most empty slabs kept.
inline constexpr std::size_t handoff_kept_max = 64;
/// False in builds where the slabs are bypassed (AddressSanitizer).
bool handoff_enabled() noexcept;

/// A standard allocator over handoff_allocate().
template <class T>
class handoff_allocator {
 public:
  using value_type = T;

  handoff_allocator() noexcept = default;
  template <class U>
  handoff_allocator(const handoff_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      return std::allocator<T>().allocate(n);
    } else {
      if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
      return static_cast<T*>(handoff_allocate(n * sizeof(T)));
    }
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      std::allocator<T>().deallocate(p, n);
    } else {
      handoff_deallocate(p, n * sizeof(T));
    }
  }

  template <class U>
  friend bool operator==(const handoff_allocator&, const handoff_allocator<U>&) noexcept {
    return true;
  }
};

}  // namespace chronopool::detail

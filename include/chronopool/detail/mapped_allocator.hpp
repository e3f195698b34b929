// An allocator for the deadline index's far-tier buffers that takes buffers
// of a few pages and more straight from the kernel (mmap), not from malloc.
//
// Why: a server that cancels a million far timeouts frees a million small
// wait blocks; glibc keeps them in its fast bins until the next request of
// a kilobyte or more, which first consolidates them all (~10 ms here) while
// holding its arena's lock. The index's next buffer was that request: when
// the cancels left a bucket sparse, its smaller replacement paid the whole
// consolidation, and every thread that touched the arena meanwhile (one
// freeing a wait, one starting a timer) waited for it. Mapped buffers never
// reach malloc, so shrinking or growing a bucket neither triggers nor waits
// for that work, and a freed buffer goes back to the system at once.
// Smaller buffers (under 8 KiB: every bucket starts small) come from malloc
// as usual, where a mapping would waste most of a page.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace chronopool::detail {

/// Maps @p bytes (rounded up to pages) of zeroed memory; throws std::bad_alloc.
void* map_pages(std::size_t bytes);
/// Unmaps what map_pages(@p bytes) returned.
void unmap_pages(void* p, std::size_t bytes) noexcept;
/// Diagnostics: the bytes mapped by map_pages() and not unmapped yet, in the
/// whole process (what malloc's statistics do not see).
std::size_t mapped_bytes() noexcept;

template <class T>
class mapped_allocator {
 public:
  using value_type = T;
  /// Buffers of this many bytes or more are mapped.
  static constexpr std::size_t mapped_from = 8 * 1024;

  mapped_allocator() noexcept = default;
  template <class U>
  mapped_allocator(const mapped_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    if (n * sizeof(T) >= mapped_from) return static_cast<T*>(map_pages(n * sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  /// @p n is what allocate() was given (the standard containers keep it).
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= mapped_from) return unmap_pages(p, n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }

  template <class U>
  friend bool operator==(const mapped_allocator&, const mapped_allocator<U>&) noexcept {
    return true;
  }
};

}  // namespace chronopool::detail

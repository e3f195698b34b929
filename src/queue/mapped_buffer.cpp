// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Page mappings and growable buffers for the deadline index. See detail/queue/mapped_buffer.hpp.
#include <chronopool/detail/queue/mapped_buffer.hpp>
#include <chronopool/detail/platform/page_mapping.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <atomic>

// ThreadSanitizer follows mmap and munmap but not mremap: the pages a remap
// moves would keep no history, and the range they leave its stale one, which
// a later remap to that address would take for the new buffer's. Under it a
// mapping grows by copying, as a small buffer does.
#define CHRONOPOOL_REMAP (!CHRONOPOOL_THREAD_SANITIZER)

namespace chronopool::detail {

namespace {

std::size_t whole_pages(std::size_t bytes) noexcept {
  const std::size_t page = platform::page_size();
  return (bytes + page - 1) / page * page;
}

std::atomic<std::size_t> mapped_total{0};

}  // namespace

void* map_pages(std::size_t bytes) {
  const std::size_t size = whole_pages(bytes);
  void* p = platform::map_pages(size);
  if (p == nullptr) throw std::bad_alloc();
  mapped_total.fetch_add(size, std::memory_order_relaxed);
  return p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept {
  const std::size_t size = whole_pages(bytes);
  platform::unmap_pages(p, size);
  mapped_total.fetch_sub(size, std::memory_order_relaxed);
}

std::size_t mapped_bytes() noexcept { return mapped_total.load(std::memory_order_relaxed); }

void* buffer_allocate(std::size_t bytes) {
  if (bytes >= mapped_from) return map_pages(bytes);
  return ::operator new(bytes);
}

void buffer_deallocate(void* p, std::size_t bytes) noexcept {
  if (bytes >= mapped_from) return unmap_pages(p, bytes);
#if defined(__cpp_sized_deallocation)
  ::operator delete(p, bytes);
#else
  ::operator delete(p);
#endif
}

void* buffer_grow(void* p, std::size_t old_bytes, std::size_t used_bytes, std::size_t new_bytes) {
  if (CHRONOPOOL_REMAP && old_bytes >= mapped_from) {
    const std::size_t old_size = whole_pages(old_bytes);
    const std::size_t new_size = whole_pages(new_bytes);
    if (new_size == old_size) return p;  // the last page had room
    void* q = platform::remap_pages(p, old_size, new_size);
    if (q == nullptr) throw std::bad_alloc();  // the old mapping is left as it was
    mapped_total.fetch_add(new_size - old_size, std::memory_order_relaxed);
    return q;
  }
  void* q = buffer_allocate(new_bytes);
  if (used_bytes != 0) std::memcpy(q, p, used_bytes);
  buffer_deallocate(p, old_bytes);
  return q;
}

}  // namespace chronopool::detail

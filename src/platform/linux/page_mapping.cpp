// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Page mappings on Linux: anonymous private mmap, grown with mremap (which
// moves page table entries: no byte is copied). See
// detail/platform/page_mapping.hpp.
#include <chronopool/detail/platform/page_mapping.hpp>

#include <sys/mman.h>
#include <unistd.h>

namespace chronopool::detail::platform {

std::size_t page_size() noexcept {
  static const std::size_t page = [] {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return page;
}

bool pages_are_kernel_mappings() noexcept { return true; }

void* map_pages(std::size_t bytes) noexcept {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

void* remap_pages(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
  void* q = ::mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE);
  return q == MAP_FAILED ? nullptr : q;  // on failure the old mapping is left as it was
}

}  // namespace chronopool::detail::platform

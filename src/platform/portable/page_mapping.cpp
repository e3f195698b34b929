// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Page mappings, portable fallback: the C heap. map_pages is calloc (zeroed,
// as a fresh mapping is), remap_pages is realloc (which copies where it
// cannot grow in place). The buffers keep their contents and their
// guarantees; they only lose the copy-free growth and the distance from
// malloc's arenas. See detail/platform/page_mapping.hpp.
#include <chronopool/detail/platform/page_mapping.hpp>

#include <cstdlib>

namespace chronopool::detail::platform {

std::size_t page_size() noexcept { return 4096; }

bool pages_are_kernel_mappings() noexcept { return false; }

void* map_pages(std::size_t bytes) noexcept { return std::calloc(1, bytes); }

void unmap_pages(void* p, std::size_t) noexcept { std::free(p); }

void* remap_pages(void* p, std::size_t, std::size_t new_bytes) noexcept {
  return std::realloc(p, new_bytes);  // on failure p is left as it was
}

}  // namespace chronopool::detail::platform

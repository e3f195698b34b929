// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Whole pages of memory for the deadline index's large buffers (see
// detail/queue/mapped_buffer.hpp), taken from the kernel rather than from
// malloc, and grown in place or by moving page table entries rather than by
// copying. Where the system has no such calls they come from the C heap: the
// buffers then behave the same, and only growing them copies.
//
// Sizes passed here are multiples of page_size(); the caller rounds them.
#pragma once

#include <cstddef>

namespace chronopool::detail::platform {

/// The unit map_pages() rounds to: the system's page size, or 4096 where it
/// cannot be asked.
std::size_t page_size() noexcept;

/// True when map_pages() takes memory straight from the kernel (page-aligned,
/// unseen by malloc); false on the heap fallback.
bool pages_are_kernel_mappings() noexcept;

/// @p bytes of zeroed memory; nullptr when there is none.
void* map_pages(std::size_t bytes) noexcept;

/// Gives back what map_pages(@p bytes) or remap_pages(..., @p bytes) returned.
void unmap_pages(void* p, std::size_t bytes) noexcept;

/// Grows the pages at @p p from @p old_bytes to @p new_bytes, keeping the
/// first @p old_bytes; the rest holds unspecified values. The result may be
/// at another address. nullptr when there is no memory, @p p then being left
/// as it was.
void* remap_pages(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept;

}  // namespace chronopool::detail::platform

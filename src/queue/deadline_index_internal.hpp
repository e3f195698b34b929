// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What the parts of a deadline index share: when a far-tier buffer counts as
// sparse, and the capacity it is given back down to.
#pragma once

#include <algorithm>
#include <cstddef>

namespace chronopool::detail {

/// A tier bucket (or the "never" list) gives most of its buffer back once it
/// holds less than a 64th of it. A server that drops its connections, or a
/// pool whose far tasks are cancelled, would otherwise keep the buffers of
/// its peak for good. The heap is left alone: it empties as its nodes fire,
/// and freeing a big buffer is slow (milliseconds for megabytes) where it
/// matters most, while the last timers of a burst fire.
/// Shrinking to four times the size keeps pushes and erases amortised O(1).
constexpr std::size_t keep_capacity = 1024;  // small buffers are not worth a copy

template <class Buffer>
bool sparse(const Buffer& v) noexcept {
  return v.capacity() > keep_capacity && v.size() < v.capacity() / 64;
}

inline std::size_t shrunk_capacity(std::size_t size) noexcept { return std::max(keep_capacity, 4 * size); }

}  // namespace chronopool::detail

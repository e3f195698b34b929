// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The most threads a pool keeps, and the one check every core pool size
// (the constructor's and set_core_pool_size()'s) goes through.
#pragma once

#include <cstddef>

namespace chronopool::detail {

/// The largest core pool size accepted (scheduled_thread_pool::max_core_pool_size).
inline constexpr std::size_t max_pool_threads = 4096;

/// Throws std::invalid_argument when @p n exceeds max_pool_threads; the
/// message names core_pool_size, @p n and the maximum.
void check_core_pool_size(std::size_t n);

}  // namespace chronopool::detail

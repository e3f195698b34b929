// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The process's table of inline wait operations: a timer keeps its inline
// wait's operations as a 16-bit number in the word it shares with its home
// shard's address (see timer_impl), not as a pointer of its own.
#include <chronopool/detail/timer/inline_wait_ops.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace chronopool::detail {

// Number 0 means "free": its entry stays null.
std::atomic<const inline_wait_ops*> inline_ops_table[std::size_t{1} << 16];

namespace {

constexpr std::size_t table_size = std::size(inline_ops_table);
std::atomic<std::uint32_t> next_number{1};

}  // namespace

std::uint16_t register_inline_ops(const inline_wait_ops* ops) noexcept {
  // Once per handler type (a function-local static of its operations), so
  // the count cannot wrap around.
  const std::uint32_t n = next_number.fetch_add(1, std::memory_order_relaxed);
  if (n >= table_size) return 0;
  inline_ops_table[n].store(ops, std::memory_order_release);
  return static_cast<std::uint16_t>(n);
}

}  // namespace chronopool::detail

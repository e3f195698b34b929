// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// How a timer's inline wait handles its handler: one table of operations per
// handler type, numbered process-wide, so that a timer keeps a 16-bit number
// in the word it shares with its home shard's address (see timer_impl), not
// a pointer of its own. The tables are filled by inline_wait_ops_for
// (inline_wait_handler.hpp).
#pragma once

#include <chronopool/detail/config/asio.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace chronopool::detail {

class wait_op_base;
struct timer_impl;

/// How a timer's inline wait handles its handler, which is at most two
/// words, moves without throwing, has the default allocator, no
/// cancellation slot, and completes on the context's own executor (see
/// timer_impl). One table per handler type, known to the timer by its
/// number (register_inline_ops).
struct inline_wait_ops {
  /// Moves the handler out of @p t into a new block wait (constructed,
  /// `starting`, linked nowhere); null when no block can be had, the
  /// handler left where it was.
  wait_op_base* (*evacuate)(timer_impl& t) noexcept;
  /// Move-constructs the handler at @p to from @p from and destroys it there.
  void (*relocate)(void* to, void* from) noexcept;
  /// Moves the handler out of @p storage and calls it with @p ec.
  void (*complete)(void* storage, const sys_ns::error_code& ec);
  /// Destroys the handler uncalled.
  void (*destroy)(void* storage) noexcept;
  /// The handler's size in words (1 or 2): an abort chunk's record stride.
  std::size_t words;
};

/// The number of @p ops in the process's table of inline operations (from
/// 1); 0 once the table is full (65,535 handler types), and then a handler
/// of that type waits in a block. Thread-safe; each table is numbered once.
std::uint16_t register_inline_ops(const inline_wait_ops* ops) noexcept;
/// That table (src/inline_wait_ops.cpp). An entry is written once, before
/// its number is handed out; whoever reads a number from a timer learnt it
/// after that write.
extern std::atomic<const inline_wait_ops*> inline_ops_table[std::size_t{1} << 16];
/// The operations numbered @p id (not 0).
inline const inline_wait_ops* inline_ops_by_id(std::uint16_t id) noexcept {
  return inline_ops_table[id].load(std::memory_order_acquire);
}

}  // namespace chronopool::detail

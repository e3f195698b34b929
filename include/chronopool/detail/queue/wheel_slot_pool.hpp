// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where a deadline index's wheel slots keep their entries: a slot is a view
// of one block (wheel_slot), and the blocks come from a pool of size classes
// that the index keeps and recycles (wheel_slot_pool).
#pragma once

#include <chronopool/detail/queue/index_node.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronopool::detail {

/// A wheel slot's entries, in a block of the index's wheel_slot_pool (none
/// while it never held an entry or after it moved onto the run).
struct wheel_slot {
  using entry = index_entry;
  static constexpr std::uint8_t no_block = 0xff;
  entry* data = nullptr;
  std::size_t count = 0;
  std::uint8_t block_class = no_block;

  std::size_t size() const noexcept { return count; }
  bool empty() const noexcept { return count == 0; }
  entry& operator[](std::size_t i) noexcept { return data[i]; }
  const entry& operator[](std::size_t i) const noexcept { return data[i]; }
  entry& back() noexcept { return data[count - 1]; }
  entry* begin() noexcept { return data; }
  entry* end() noexcept { return data + count; }
  const entry* begin() const noexcept { return data; }
  const entry* end() const noexcept { return data + count; }
  void pop_back() noexcept { --count; }
  void truncate(std::size_t n) noexcept { count = n; }
  void clear() noexcept { count = 0; }
};

/// The blocks wheel slots keep their entries in, recycled within one index,
/// so that a slot growing under the owner's lock never waits for malloc.
/// Blocks come in size classes, each holding 16 times the one below (16,
/// 256, 4,096 ... entries), so a slot reaches its size in few copies; they
/// are cut as first needed from page mappings that double per class from
/// 64 KiB (pages are touched only when used), and stay with the index: its
/// reserved memory is its peak.
class wheel_slot_pool {
 public:
  using entry = index_entry;
  static constexpr unsigned classes = 7;
  static std::size_t capacity_of(unsigned c) noexcept { return std::size_t{16} << (4 * c); }
  wheel_slot_pool() = default;
  wheel_slot_pool(const wheel_slot_pool&) = delete;
  wheel_slot_pool& operator=(const wheel_slot_pool&) = delete;
  ~wheel_slot_pool();
  /// A block of class @p c; throws std::bad_alloc (nothing changed).
  entry* take(unsigned c);
  void give(entry* block, unsigned c) noexcept {
    auto* b = reinterpret_cast<free_block*>(block);
    b->next = class_[c].free;
    class_[c].free = b;
  }
  std::size_t reserved_bytes() const noexcept { return bytes_; }

 private:
  struct free_block {
    free_block* next;
  };
  struct chunk {
    void* p;
    std::size_t bytes;
  };
  struct class_state {
    free_block* free = nullptr;  // blocks given back
    char* next = nullptr;        // the rest of the newest chunk, not cut yet
    char* end = nullptr;
    std::size_t chunk_bytes = 0;  // the newest chunk's size
  };
  class_state class_[classes];
  std::vector<chunk> chunks_;
  std::size_t bytes_ = 0;
};

}  // namespace chronopool::detail

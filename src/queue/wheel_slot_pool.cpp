// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The wheel slot pool's blocks: cut from page mappings per size class,
// recycled through a free list per class, unmapped with the pool.
#include <chronopool/detail/queue/wheel_slot_pool.hpp>

#include <chronopool/detail/queue/mapped_buffer.hpp>

#include <algorithm>

namespace chronopool::detail {

wheel_slot_pool::~wheel_slot_pool() {
  for (const chunk& c : chunks_) buffer_deallocate(c.p, c.bytes);
}

wheel_slot_pool::entry* wheel_slot_pool::take(unsigned c) {
  class_state& k = class_[c];
  if (k.free != nullptr) {
    free_block* b = k.free;
    k.free = b->next;
    return reinterpret_cast<entry*>(b);
  }
  const std::size_t block = capacity_of(c) * sizeof(entry);
  if (static_cast<std::size_t>(k.end - k.next) < block) {
    // A new chunk, twice the last one of this class (64 KiB at first, at
    // most 16 MiB), and at least one block.
    constexpr std::size_t first = std::size_t{64} << 10, most = std::size_t{16} << 20;
    const std::size_t want = k.chunk_bytes == 0 ? first : std::min(2 * k.chunk_bytes, most);
    const std::size_t bytes = std::max(want, block) / block * block;
    chunks_.reserve(chunks_.size() + 1);  // may throw: nothing changed yet
    void* p = buffer_allocate(bytes);     // may throw: nothing changed yet
    chunks_.push_back({p, bytes});
    bytes_ += bytes;
    k.next = static_cast<char*>(p);
    k.end = k.next + bytes;
    k.chunk_bytes = bytes;
  }
  entry* b = reinterpret_cast<entry*>(k.next);
  k.next += block;
  return b;
}

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The per-thread block cache behind detail::recycling_allocator.
#include <chronopool/detail/support/recycling_allocator.hpp>

#include <chronopool/detail/support/handoff_allocator.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <new>

#define CHRONOPOOL_RECYCLING (!CHRONOPOOL_ADDRESS_SANITIZER)

namespace chronopool::detail {
namespace {

// A few blocks per thread: enough for the waits a thread has in flight at
// once in the usual patterns, few enough that the cache is never a memory
// cost worth counting.
constexpr std::size_t slots = 8;

// Blocks the cache does not hold come from the handoff allocator: a wait is
// often made on one thread (a submitter arming timers) and freed on another
// (the context's thread that completes it), and there a malloc'd block
// would go back to the submitter's arena under its lock, where the
// submitter's own next allocation then merges what piled up.

// Trivially destructible, so it is never destroyed: a block freed after this
// thread's cache was flushed (by a thread_local destructor running later)
// finds `closed` set and goes straight back to the heap.
struct block_cache {
  void* block[slots];
  std::size_t size[slots];
  std::size_t next_evicted;
  bool flush_registered;
  bool closed;
};
constinit thread_local block_cache cache{};

void free_cached_blocks() noexcept {
  for (std::size_t i = 0; i < slots; ++i) {
    if (cache.block[i] != nullptr) handoff_deallocate(cache.block[i], cache.size[i]);
    cache.block[i] = nullptr;
  }
}

struct cache_flusher {
  ~cache_flusher() {
    cache.closed = true;
    free_cached_blocks();
  }
};

void register_flush() {
  thread_local cache_flusher flusher;  // constructed here, destroyed at thread exit
  (void)flusher;
  cache.flush_registered = true;
}

}  // namespace

void* recycled_allocate(std::size_t size) {
  // A cached block serves only a request of exactly its size: an operation
  // type always asks for the same size, and rounding up to a coarser class
  // would cost every pending wait the difference.
  if (CHRONOPOOL_RECYCLING && !cache.closed) {
    for (std::size_t i = 0; i < slots; ++i) {
      if (cache.block[i] != nullptr && cache.size[i] == size) {
        void* p = cache.block[i];
        cache.block[i] = nullptr;
        return p;
      }
    }
  }
  return handoff_allocate(size);
}

void recycled_deallocate(void* p, std::size_t size) noexcept {
  if (CHRONOPOOL_RECYCLING && !cache.closed) {
    for (std::size_t i = 0; i < slots; ++i) {
      if (cache.block[i] == nullptr) {
        if (!cache.flush_registered) {
          try {
            register_flush();
          } catch (...) {
            break;  // cannot promise to free it at thread exit: free it now
          }
        }
        cache.block[i] = p;
        cache.size[i] = size;
        return;
      }
    }
    // Full: the newest block is the likeliest to be asked for next (the
    // pattern changed), so it takes a slot in turn and that slot's goes.
    if (cache.flush_registered) {
      const std::size_t i = cache.next_evicted;
      cache.next_evicted = (i + 1) % slots;
      handoff_deallocate(cache.block[i], cache.size[i]);
      cache.block[i] = p;
      cache.size[i] = size;
      return;
    }
  }
  handoff_deallocate(p, size);
}

bool recycling_enabled() noexcept { return CHRONOPOOL_RECYCLING != 0; }

void recycled_flush() noexcept { free_cached_blocks(); }

std::size_t recycled_cached_blocks() noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < slots; ++i) n += cache.block[i] != nullptr ? 1 : 0;
  return n;
}

}  // namespace chronopool::detail

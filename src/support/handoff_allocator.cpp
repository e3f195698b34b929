// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The per-thread slabs behind detail::handoff_allocator.
//
// What holds:
// - A slab's owner is its heap, fixed for the slab's life; a heap is never
//   freed (a thread that ends leaves it for the next thread to adopt), so
//   a free on any thread may always reach it.
// - `local`, `bump`, `live` and the lists are touched by the heap's current
//   owner only. Other threads touch `remote`, `next_notified` and the heap's
//   `notified` list.
// - `remote` packs the offset of the last block another thread freed into
//   the slab with the number of such blocks, so that the owner takes the
//   list and its length in one exchange, without walking it.
// - A slab is on its heap's `notified` list exactly while its `remote` list
//   is non-empty and the owner has not yet taken that list: the free that
//   makes `remote` non-empty pushes the slab, and the owner pops the slab
//   before it empties `remote`. So a slab is never on the list twice.
// - `live` counts blocks handed out and not yet back with the owner; blocks
//   on `remote` still count. A slab with `live` zero has no block anywhere
//   else, and no other thread will touch it again: a remote free's last
//   access to its slab is the push that precedes the owner seeing it.
// - Blocks back with the owner are in `local`, then in the lists stacked on
//   `chains` (each taken whole from `remote`, linked through its first
//   block's second word), or beyond `bump`.
#include <chronopool/detail/support/handoff_allocator.hpp>

#include <chronopool/detail/support/sanitizers.hpp>
#include <chronopool/detail/support/sized_delete.hpp>

#include <atomic>
#include <cstdint>
#include <new>
#include <utility>

#define CHRONOPOOL_HANDOFF (!CHRONOPOOL_ADDRESS_SANITIZER)

namespace chronopool::detail {
namespace {

#if CHRONOPOOL_HANDOFF

constexpr std::size_t slab_bytes = std::size_t{1} << 16;
constexpr std::size_t granule = 16;
constexpr std::size_t classes = handoff_max_block / granule;

struct free_block {
  free_block* next;
  free_block* next_chain;  // in a chain's first block only
};
static_assert(sizeof(free_block) <= granule);

struct heap;

// The header at the start of each slab; its blocks follow.
struct slab {
  // Written by other threads (their frees); one cache line of its own so
  // that they do not disturb the owner's allocations.
  alignas(64) std::atomic<std::uint64_t> remote{0};  // count << 32 | offset of the first block
  slab* next_notified = nullptr;
  heap* owner = nullptr;

  alignas(64) free_block* local = nullptr;
  free_block* chains = nullptr;
  char* bump = nullptr;
  char* end = nullptr;
  std::uint32_t live = 0;
  std::uint32_t block_size = 0;
  std::uint32_t cls = 0;
  bool listed = false;
  slab* prev = nullptr;  // the heap's partial list of this size
  slab* next = nullptr;
};
static_assert(sizeof(slab) % granule == 0);

slab* slab_of(void* p) noexcept {
  return reinterpret_cast<slab*>(reinterpret_cast<std::uintptr_t>(p) & ~(slab_bytes - 1));
}

struct heap {
  // Slabs other threads freed blocks into since the owner last looked.
  alignas(64) std::atomic<slab*> notified{nullptr};

  // Where each size allocates now; partial slabs (some blocks free, not
  // current) wait in a list per size.
  alignas(64) slab* current[classes] = {};
  slab* partial[classes] = {};
  // One emptied slab kept for the next size that needs one.
  slab* spare = nullptr;
  std::size_t slabs = 0;
  // New slabs come from operator new, not the kept ones (a testing aid).
  bool new_slabs_only = false;
  heap* next_abandoned = nullptr;
};

constinit thread_local heap* this_heap = nullptr;

// Heaps whose threads ended, waiting for a thread to adopt them. Guarded by
// a spin flag: taken once per thread's life, and trivially destructible, so
// threads that end during static destruction may still use it.
constinit std::atomic_flag abandoned_lock;
constinit heap* abandoned = nullptr;

void lock_flag(std::atomic_flag& f) noexcept {
  while (f.test_and_set(std::memory_order_acquire)) f.wait(true, std::memory_order_relaxed);
}
void unlock_flag(std::atomic_flag& f) noexcept {
  f.clear(std::memory_order_release);
  f.notify_one();
}

// Empty slabs kept for any thread's next slab, up to handoff_kept_max: a
// slab given back to the system returns as fresh pages, and each page's
// first touch is a fault that zeroes it (microseconds in a virtual
// machine), paid by the thread that allocates. Under a steady flow of
// blocks from one thread to another, slabs empty as fast as new ones are
// needed, so a few kept ones serve every new slab; after a burst, those
// beyond the most go back. Linked through their first word, under a spin
// flag that is trivially destructible, like the abandoned heaps'.
constinit std::atomic_flag kept_lock;
constinit void* kept = nullptr;
constinit std::size_t kept_count = 0;

void* take_kept_slab() noexcept {
  lock_flag(kept_lock);
  void* mem = kept;
  if (mem != nullptr) {
    kept = *static_cast<void**>(mem);
    --kept_count;
  }
  unlock_flag(kept_lock);
  return mem;
}

void free_slab_memory(heap& h, slab* s) noexcept {
  --h.slabs;
  s->~slab();
  void* const mem = s;
  lock_flag(kept_lock);
  if (kept_count < handoff_kept_max) {
    *static_cast<void**>(mem) = kept;
    kept = mem;
    ++kept_count;
    unlock_flag(kept_lock);
    return;
  }
  unlock_flag(kept_lock);
  ::operator delete(mem, std::align_val_t{slab_bytes});
}

void unlink(heap& h, slab* s) noexcept {
  if (s->prev != nullptr) {
    s->prev->next = s->next;
  } else {
    h.partial[s->cls] = s->next;
  }
  if (s->next != nullptr) s->next->prev = s->prev;
  s->prev = s->next = nullptr;
  s->listed = false;
}

void link(heap& h, slab* s) noexcept {
  s->prev = nullptr;
  s->next = h.partial[s->cls];
  if (s->next != nullptr) s->next->prev = s;
  h.partial[s->cls] = s;
  s->listed = true;
}

// A slab none of whose blocks is out: kept as the spare, or freed.
void release(heap& h, slab* s) noexcept {
  if (s->listed) unlink(h, s);
  if (h.current[s->cls] == s) h.current[s->cls] = nullptr;
  if (h.spare == nullptr) {
    h.spare = s;
  } else {
    free_slab_memory(h, s);
  }
}

// Blocks came back to @p s: unless it is the current slab of its size, it is
// listed for allocation again, or freed once all of them are back.
void blocks_returned(heap& h, slab* s) noexcept {
  if (h.current[s->cls] == s) return;
  if (s->live == 0) {
    release(h, s);
  } else if (!s->listed) {
    link(h, s);
  }
}

free_block* block_at(slab* s, std::uint64_t offset) noexcept {
  return offset == 0 ? nullptr : reinterpret_cast<free_block*>(reinterpret_cast<char*>(s) + offset);
}

// Gives the owner every block other threads freed, slab by slab.
void take_back(heap& h) noexcept {
  slab* s = h.notified.exchange(nullptr, std::memory_order_acquire);
  while (s != nullptr) {
    slab* const next = s->next_notified;  // read before `remote` empties: then s may be pushed again
    const std::uint64_t taken = s->remote.exchange(0, std::memory_order_acq_rel);
    s->live -= static_cast<std::uint32_t>(taken >> 32);
    free_block* const first = block_at(s, taken & 0xffffffffu);
    if (s->live == 0) {
      s->local = s->chains = nullptr;  // all blocks free: the slab is released or starts afresh
      s->bump = reinterpret_cast<char*>(s) + sizeof(slab);
    } else if (s->local == nullptr) {
      s->local = first;
    } else {
      first->next_chain = s->chains;
      s->chains = first;
    }
    blocks_returned(h, s);
    s = next;
  }
}

void push_remote(slab* s, free_block* b) noexcept {
  const auto offset = static_cast<std::uint64_t>(reinterpret_cast<char*>(b) - reinterpret_cast<char*>(s));
  std::uint64_t head = s->remote.load(std::memory_order_relaxed);
  do {
    b->next = block_at(s, head & 0xffffffffu);
    // acq_rel: releases the block's link to the owner, and (when the list
    // was empty) acquires the owner's emptying of it, which came after the
    // owner's last read of next_notified, written below.
  } while (!s->remote.compare_exchange_weak(head, (((head >> 32) + 1) << 32) | offset, std::memory_order_acq_rel,
                                            std::memory_order_relaxed));
  if (head != 0) return;  // the slab is already on its owner's list
  heap* const h = s->owner;
  slab* top = h->notified.load(std::memory_order_relaxed);
  do {
    s->next_notified = top;
  } while (!h->notified.compare_exchange_weak(top, s, std::memory_order_release, std::memory_order_relaxed));
}

slab* new_slab(heap& h, std::uint32_t cls) {
  void* mem = std::exchange(h.spare, nullptr);
  if (mem == nullptr) {
    if (!h.new_slabs_only) mem = take_kept_slab();
    if (mem == nullptr) mem = ::operator new(slab_bytes, std::align_val_t{slab_bytes});  // may throw: nothing changed yet
    ++h.slabs;
    mem = new (mem) slab();
  }
  slab* s = static_cast<slab*>(mem);
  const auto size = static_cast<std::uint32_t>((cls + 1) * granule);
  char* const first = reinterpret_cast<char*>(s) + sizeof(slab);
  s->owner = &h;
  s->local = nullptr;
  s->chains = nullptr;
  s->bump = first;
  s->end = first + (slab_bytes - sizeof(slab)) / size * size;
  s->live = 0;
  s->block_size = size;
  s->cls = cls;
  return s;
}

// Runs when a thread that allocated ends: gives back what it can and leaves
// the heap for the next thread.
struct heap_release {
  heap_release() = default;
  heap_release(const heap_release&) = delete;
  heap_release& operator=(const heap_release&) = delete;
  ~heap_release() {
    heap* h = std::exchange(this_heap, nullptr);
    if (h == nullptr) return;
    take_back(*h);
    for (slab* s : h->current) {
      if (s != nullptr && s->live == 0) release(*h, s);
    }
    if (h->spare != nullptr) free_slab_memory(*h, std::exchange(h->spare, nullptr));
    lock_flag(abandoned_lock);
    h->next_abandoned = abandoned;
    abandoned = h;
    unlock_flag(abandoned_lock);
  }
};

heap& acquire_heap() {
  // Registers the release at this thread's end. A thread that allocates
  // again after that (from a later thread_local destructor) keeps a heap
  // nobody adopts; its blocks are still freed into it.
  thread_local heap_release at_exit;
  (void)at_exit;
  lock_flag(abandoned_lock);
  heap* h = abandoned;
  if (h != nullptr) abandoned = h->next_abandoned;
  unlock_flag(abandoned_lock);
  if (h == nullptr) h = new heap();
  h->new_slabs_only = false;
  this_heap = h;
  return *h;
}

void* allocate_slow(std::uint32_t cls) {
  heap& h = this_heap != nullptr ? *this_heap : acquire_heap();
  take_back(h);
  slab* s = h.current[cls];
  if (s == nullptr || (s->local == nullptr && s->chains == nullptr && s->bump == s->end)) {
    // The current slab (if any) is full; it is listed again when blocks
    // come back to it.
    s = h.partial[cls];
    if (s != nullptr) {
      unlink(h, s);
    } else {
      s = new_slab(h, cls);
    }
    h.current[cls] = s;
  }
  ++s->live;
  if (s->local == nullptr && s->chains != nullptr) {
    s->local = s->chains;
    s->chains = s->chains->next_chain;
  }
  if (free_block* b = s->local) {
    s->local = b->next;
    return b;
  }
  void* p = s->bump;
  s->bump += s->block_size;
  return p;
}

#endif  // CHRONOPOOL_HANDOFF

}  // namespace

void* handoff_allocate(std::size_t size) {
#if CHRONOPOOL_HANDOFF
  if (size - 1 < handoff_max_block) {
    const auto cls = static_cast<std::uint32_t>((size - 1) / granule);
    if (heap* h = this_heap) [[likely]] {
      if (slab* s = h->current[cls]) [[likely]] {
        if (free_block* b = s->local) {
          s->local = b->next;
          ++s->live;
          return b;
        }
        if (s->bump != s->end) {
          void* p = s->bump;
          s->bump += s->block_size;
          ++s->live;
          return p;
        }
      }
    }
    return allocate_slow(cls);
  }
#endif
  return ::operator new(size);
}

void handoff_deallocate(void* p, std::size_t size) noexcept {
#if CHRONOPOOL_HANDOFF
  if (size - 1 < handoff_max_block) {
    slab* const s = slab_of(p);
    auto* const b = static_cast<free_block*>(p);
    if (heap* h = this_heap; s->owner == h) {
      b->next = s->local;
      s->local = b;
      --s->live;
      blocks_returned(*h, s);
    } else {
      push_remote(s, b);
    }
    return;
  }
#endif
  sized_delete(p, size);
}

void handoff_start_new_slabs() noexcept {
#if CHRONOPOOL_HANDOFF
  heap* h = this_heap;
  if (h == nullptr) {
    try {
      h = &acquire_heap();  // an adopted heap may have room in its slabs: set aside below
    } catch (...) {
      return;  // no heap: the next allocation makes one, and a new slab with it
    }
  }
  take_back(*h);
  h->new_slabs_only = true;
  // Slabs with blocks out are set aside: listed again when one comes back.
  for (std::uint32_t cls = 0; cls < classes; ++cls) {
    while (slab* s = h->partial[cls]) unlink(*h, s);
    if (slab* s = std::exchange(h->current[cls], nullptr); s != nullptr && s->live == 0) release(*h, s);
  }
  if (h->spare != nullptr) free_slab_memory(*h, std::exchange(h->spare, nullptr));
#endif
}

std::size_t handoff_thread_slabs() noexcept {
#if CHRONOPOOL_HANDOFF
  heap* h = this_heap;
  if (h == nullptr) return 0;
  take_back(*h);
  return h->slabs;
#else
  return 0;
#endif
}

std::size_t handoff_kept_slabs() noexcept {
#if CHRONOPOOL_HANDOFF
  lock_flag(kept_lock);
  const std::size_t n = kept_count;
  unlock_flag(kept_lock);
  return n;
#else
  return 0;
#endif
}

bool handoff_enabled() noexcept { return CHRONOPOOL_HANDOFF; }

}  // namespace chronopool::detail

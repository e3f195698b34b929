// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail::handoff_allocator: blocks freed on the thread that made them and
// on others, slabs given back or kept, a thread's slabs outliving it, and many
// threads handing blocks to each other at once.
#include <chronopool/detail/support/handoff_allocator.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace cd = chronopool::detail;

namespace {

constexpr std::uintptr_t slab_mask = ~(std::uintptr_t{1 << 16} - 1);

std::uintptr_t slab_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p) & slab_mask; }

// Runs @p f on a thread of its own and waits for it.
template <class F>
void on_another_thread(F f) {
  std::thread t(f);
  t.join();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(handoff_allocator)

BOOST_AUTO_TEST_CASE(a_block_freed_on_its_own_thread_is_the_next_one_of_its_size) {
  if (!cd::handoff_enabled()) return;  // AddressSanitizer build: plain new/delete by design
  void* a = cd::handoff_allocate(100);
  void* other = cd::handoff_allocate(200);  // another size: another slab
  BOOST_TEST(slab_of(a) != slab_of(other));
  cd::handoff_deallocate(a, 100);
  void* b = cd::handoff_allocate(97);  // the same 16-byte size class
  BOOST_TEST(b == a);
  cd::handoff_deallocate(b, 97);
  cd::handoff_deallocate(other, 200);
}

BOOST_AUTO_TEST_CASE(blocks_are_aligned_for_any_object_new_would_make) {
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t size = 1; size <= 600; size += 7) blocks.emplace_back(cd::handoff_allocate(size), size);
  for (auto [p, size] : blocks) {
    BOOST_TEST(reinterpret_cast<std::uintptr_t>(p) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0u);
    std::memset(p, 0xab, size);  // the whole block is usable (ASan/valgrind would see an overrun)
  }
  for (auto [p, size] : blocks) cd::handoff_deallocate(p, size);
}

BOOST_AUTO_TEST_CASE(blocks_freed_by_another_thread_come_back_and_emptied_slabs_are_given_back) {
  if (!cd::handoff_enabled()) return;
  cd::handoff_start_new_slabs();
  const std::size_t before = cd::handoff_thread_slabs();
  // Enough 128-byte blocks for several slabs.
  constexpr std::size_t n = 5000;
  std::vector<void*> blocks(n);
  for (auto& p : blocks) p = cd::handoff_allocate(128);
  const std::size_t grown = cd::handoff_thread_slabs();
  BOOST_TEST(grown >= before + 9);
  on_another_thread([&] {
    for (void* p : blocks) cd::handoff_deallocate(p, 128);
  });
  // All back: every emptied slab is freed except one kept as the spare
  // (and the current one, if it is not the spare).
  BOOST_TEST(cd::handoff_thread_slabs() <= before + 2);
  // And the memory is used again rather than grown.
  for (auto& p : blocks) p = cd::handoff_allocate(128);
  BOOST_TEST(cd::handoff_thread_slabs() <= grown);
  const std::set<void*> distinct(blocks.begin(), blocks.end());
  BOOST_TEST(distinct.size() == n);
  for (void* p : blocks) cd::handoff_deallocate(p, 128);
  BOOST_TEST(cd::handoff_thread_slabs() <= before + 2);
}

BOOST_AUTO_TEST_CASE(emptied_slabs_are_kept_for_the_next_new_slab_of_any_thread) {
  if (!cd::handoff_enabled()) return;
  // A burst of about ten slabs, all freed here: every emptied slab but the
  // spare and the current one is kept (the store may hold others already).
  const std::size_t kept_before = cd::handoff_kept_slabs();
  constexpr std::size_t n = 5000;
  std::vector<void*> blocks(n);
  for (auto& p : blocks) p = cd::handoff_allocate(128);
  std::set<std::uintptr_t> burst;
  for (void* p : blocks) burst.insert(slab_of(p));
  BOOST_TEST(burst.size() >= 9u);
  for (void* p : blocks) cd::handoff_deallocate(p, 128);
  BOOST_TEST(cd::handoff_kept_slabs() >= std::min(kept_before + burst.size() - 2, cd::handoff_kept_max));

  // Another thread's new slabs are those pages, not fresh ones: blocks of a
  // size nothing else here uses, enough for a few slabs.
  std::size_t reused = 0;
  on_another_thread([&] {
    std::vector<void*> other(400);
    for (auto& p : other) p = cd::handoff_allocate(496);
    for (void* p : other) reused += burst.count(slab_of(p));
    for (void* p : other) cd::handoff_deallocate(p, 496);
  });
  BOOST_TEST(reused > 0u);
}

BOOST_AUTO_TEST_CASE(no_more_empty_slabs_are_kept_than_the_most) {
  if (!cd::handoff_enabled()) return;
  // More than the most kept, all emptied at once: the rest go back.
  const std::size_t n = (cd::handoff_kept_max + 8) * 520;
  std::vector<void*> blocks(n);
  for (auto& p : blocks) p = cd::handoff_allocate(128);
  for (void* p : blocks) cd::handoff_deallocate(p, 128);
  BOOST_TEST(cd::handoff_kept_slabs() == cd::handoff_kept_max);
}

BOOST_AUTO_TEST_CASE(sizes_above_the_largest_class_come_from_operator_new) {
  if (!cd::handoff_enabled()) return;
  void* small = cd::handoff_allocate(cd::handoff_max_block);
  const std::size_t slabs = cd::handoff_thread_slabs();
  std::vector<void*> large;
  for (int i = 0; i < 200; ++i) large.push_back(cd::handoff_allocate(cd::handoff_max_block + 1));
  BOOST_TEST(cd::handoff_thread_slabs() == slabs);
  for (void* p : large) cd::handoff_deallocate(p, cd::handoff_max_block + 1);
  cd::handoff_deallocate(small, cd::handoff_max_block);
}

BOOST_AUTO_TEST_CASE(a_thread_that_ends_leaves_its_slabs_to_the_next_thread) {
  if (!cd::handoff_enabled()) return;
  std::vector<void*> left_behind;
  on_another_thread([&] {
    for (int i = 0; i < 10; ++i) left_behind.push_back(cd::handoff_allocate(48));
  });
  // Its blocks outlive it, and may be freed anywhere.
  for (void* p : left_behind) cd::handoff_deallocate(p, 48);
  void* adopted = nullptr;
  on_another_thread([&] {
    adopted = cd::handoff_allocate(48);
    cd::handoff_deallocate(adopted, 48);
  });
  // The next thread to allocate took over the ended thread's slabs.
  BOOST_TEST(slab_of(adopted) == slab_of(left_behind.front()));
}

BOOST_AUTO_TEST_CASE(threads_handing_blocks_to_each_other_never_share_a_live_block) {
  // Producers allocate and stamp blocks; consumers check the stamp and
  // free them. A block handed out twice while live would be stamped twice.
  constexpr int producers = 3;
  constexpr int consumers = 3;
  constexpr std::uint64_t per_producer = 20000;
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::pair<std::uint64_t*, std::size_t>> handed;
  std::atomic<int> producing{producers};
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> freed{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < producers; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::pair<std::uint64_t*, std::size_t>> mine;  // some blocks freed here
      for (std::uint64_t i = 0; i < per_producer; ++i) {
        const std::size_t size = 16 + (i * 37 + static_cast<std::uint64_t>(t)) % 400;
        auto* p = static_cast<std::uint64_t*>(cd::handoff_allocate(size));
        const std::uint64_t stamp = (static_cast<std::uint64_t>(t) << 32) | i;
        p[0] = stamp;
        p[1] = ~stamp;
        if (i % 4 == 0) {
          mine.emplace_back(p, size);
          if (mine.size() == 64) {
            for (auto [q, s] : mine) {
              if (q[1] != ~q[0]) bad.fetch_add(1);
              cd::handoff_deallocate(q, s);
            }
            freed.fetch_add(mine.size());
            mine.clear();
          }
        } else {
          std::lock_guard lock(m);
          handed.emplace_back(p, size);
          cv.notify_one();
        }
      }
      for (auto [q, s] : mine) cd::handoff_deallocate(q, s);
      freed.fetch_add(mine.size());
      producing.fetch_sub(1);
      cv.notify_all();
    });
  }
  for (int t = 0; t < consumers; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        std::pair<std::uint64_t*, std::size_t> item;
        {
          std::unique_lock lock(m);
          cv.wait(lock, [&] { return !handed.empty() || producing.load() == 0; });
          if (handed.empty()) return;
          item = handed.front();
          handed.pop_front();
        }
        if (item.first[1] != ~item.first[0]) bad.fetch_add(1);
        cd::handoff_deallocate(item.first, item.second);
        freed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  BOOST_TEST(bad.load() == 0u);
  BOOST_TEST(freed.load() == producers * per_producer);
}

BOOST_AUTO_TEST_SUITE_END()

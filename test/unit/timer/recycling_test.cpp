// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The per-thread block cache that timer waits are allocated from when their
// handler uses the default allocator.
#include <chronopool/detail/support/recycling_allocator.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace cd = chronopool::detail;
using namespace std::chrono_literals;

namespace {

// Each case starts from an empty cache on this thread.
void flush_cache() { cd::recycled_flush(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(recycling_allocator)

BOOST_AUTO_TEST_CASE(a_freed_block_is_reused_by_the_next_request_of_its_size_on_the_same_thread) {
  if (!cd::recycling_enabled()) return;  // AddressSanitizer build: plain new/delete by design
  flush_cache();
  void* a = cd::recycled_allocate(100);
  cd::recycled_deallocate(a, 100);
  BOOST_TEST(cd::recycled_cached_blocks() == 1u);
  void* other_size = cd::recycled_allocate(112);  // another size: not the cached block
  BOOST_TEST(other_size != a);
  BOOST_TEST(cd::recycled_cached_blocks() == 1u);
  void* b = cd::recycled_allocate(100);  // the same size
  BOOST_TEST(b == a);
  BOOST_TEST(cd::recycled_cached_blocks() == 0u);
  cd::recycled_deallocate(b, 100);
  cd::recycled_deallocate(other_size, 112);
  flush_cache();
}

BOOST_AUTO_TEST_CASE(the_cache_holds_at_most_eight_blocks_and_the_newest_takes_a_slot) {
  if (!cd::recycling_enabled()) return;
  flush_cache();
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(cd::recycled_allocate(64));
  for (void* p : blocks) cd::recycled_deallocate(p, 64);
  BOOST_TEST(cd::recycled_cached_blocks() == 8u);
  // The last one freed was kept (it evicted an older block).
  std::vector<void*> again;
  for (int i = 0; i < 8; ++i) again.push_back(cd::recycled_allocate(64));
  const bool kept_newest = std::find(again.begin(), again.end(), blocks.back()) != again.end();
  BOOST_TEST(kept_newest);
  BOOST_TEST(cd::recycled_cached_blocks() == 0u);
  for (void* p : again) cd::recycled_deallocate(p, 64);
  flush_cache();
}

BOOST_AUTO_TEST_CASE(a_block_freed_on_another_thread_joins_that_threads_cache) {
  if (!cd::recycling_enabled()) return;
  flush_cache();
  void* p = cd::recycled_allocate(200);
  std::size_t cached_there = 0;
  std::thread([&] {
    cd::recycled_deallocate(p, 200);
    cached_there = cd::recycled_cached_blocks();
  }).join();  // the thread's exit frees its cache
  BOOST_TEST(cached_there == 1u);
  BOOST_TEST(cd::recycled_cached_blocks() == 0u);
}

BOOST_AUTO_TEST_CASE(a_timer_rearmed_on_its_own_thread_recycles_its_wait_blocks) {
  if (!cd::recycling_enabled()) return;
  flush_cache();
  asio::io_context io;
  chronopool::steady_timer t(io);
  int runs = 0;
  std::size_t cached_max = 0;
  std::function<void(sys_ns::error_code)> again = [&](sys_ns::error_code ec) {
    BOOST_TEST(!ec);
    cached_max = std::max(cached_max, cd::recycled_cached_blocks());
    if (++runs == 200) return;
    t.expires_after(0ms);
    t.async_wait(again);
  };
  t.expires_after(0ms);
  t.async_wait(again);
  io.run();
  BOOST_TEST(runs == 200);
  // Each finished wait's block went to this thread's cache and the next wait
  // took it from there: the cache saw blocks, and never filled up.
  BOOST_TEST(cached_max >= 1u);
  BOOST_TEST(cached_max < 8u);
}

BOOST_AUTO_TEST_SUITE_END()

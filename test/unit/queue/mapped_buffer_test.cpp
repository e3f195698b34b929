// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// mapped_buffer: the deadline index's large buffers (its heap, its far-tier
// buckets) are page mappings, not malloc's, and grow without a copy (see
// detail/queue/mapped_buffer.hpp).
#include <chronopool/detail/platform/page_mapping.hpp>
#include <chronopool/detail/platform/process_memory.hpp>
#include <chronopool/detail/queue/deadline_index.hpp>
#include <chronopool/detail/queue/mapped_buffer.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <boost/test/unit_test.hpp>

#include "queue_test_support.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace cpd = chronopool::detail;
namespace cpp = chronopool::detail::platform;

namespace {

// Large buffers stay out of malloc's count where they are kernel mappings
// (not on the portable heap fallback, detail/platform/page_mapping.hpp), and
// that count is seen only where the allocator reports it (not on the portable
// platform, nor under a sanitizer, whose malloc leaves glibc's count still).
const bool glibc_counts_malloc = !CHRONOPOOL_ADDRESS_SANITIZER && !CHRONOPOOL_THREAD_SANITIZER &&
                                 cpp::pages_are_kernel_mappings() && cpp::allocator_in_use_bytes() != 0;

/// Bytes malloc has handed out and not had back, the allocator's count.
std::size_t malloc_in_use() { return static_cast<std::size_t>(cpp::allocator_in_use_bytes()); }

std::size_t page_size() { return cpp::page_size(); }

std::size_t whole_pages(std::size_t bytes) { return (bytes + page_size() - 1) / page_size() * page_size(); }

}  // namespace

using queue_test::bare_node;

BOOST_AUTO_TEST_SUITE(mapped_buffer)

BOOST_AUTO_TEST_CASE(large_buffers_bypass_malloc_and_small_ones_use_it) {
  const std::size_t large = std::size_t{8} << 20;
  const std::size_t before = malloc_in_use();
  const std::size_t mapped_before = cpd::mapped_bytes();
  auto* p = static_cast<std::uint64_t*>(cpd::buffer_allocate(large));
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() == before);
  BOOST_TEST(cpd::mapped_bytes() == mapped_before + large);  // counted instead
  if (cpp::pages_are_kernel_mappings()) BOOST_TEST(reinterpret_cast<std::uintptr_t>(p) % page_size() == 0u);
  const std::size_t words = large / sizeof(std::uint64_t);
  for (std::size_t i = 0; i < words; i += 512) p[i] = i;  // usable, one write a page
  for (std::size_t i = 0; i < words; i += 512) BOOST_TEST_REQUIRE(p[i] == i);
  cpd::buffer_deallocate(p, large);
  BOOST_TEST(cpd::mapped_bytes() == mapped_before);

  // Under 8 KiB: malloc's, which counts it.
  const std::size_t small = cpd::mapped_from - 1;
  void* q = cpd::buffer_allocate(small);
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() >= before + small);
  BOOST_TEST(cpd::mapped_bytes() == mapped_before);
  cpd::buffer_deallocate(q, small);
}

BOOST_AUTO_TEST_CASE(growing_keeps_every_value_and_the_mapped_count) {
  // A million pushes: the buffer crosses from malloc to a mapping, then
  // grows as one (remapped; copied under ThreadSanitizer). Every value
  // survives every growth, and the mapped count follows the capacity.
  const std::size_t mapped_before = cpd::mapped_bytes();
  {
    cpd::mapped_buffer<std::uint64_t> b;
    std::size_t growths = 0;
    for (std::uint64_t i = 0; i < 1'000'000; ++i) {
      const std::size_t cap = b.capacity();
      b.push_back(i * 7);
      if (b.capacity() != cap) {
        ++growths;
        const std::size_t bytes = b.capacity() * sizeof(std::uint64_t);
        BOOST_TEST_REQUIRE(cpd::mapped_bytes() == mapped_before + (bytes >= cpd::mapped_from ? whole_pages(bytes) : 0));
        for (std::uint64_t k = 0; k <= i; k += 97) BOOST_TEST_REQUIRE(b[k] == k * 7);
      }
    }
    BOOST_TEST(growths > 10u);
    BOOST_TEST(b.size() == 1'000'000u);
    for (std::uint64_t k = 0; k < b.size(); ++k) BOOST_TEST_REQUIRE(b[k] == k * 7);
    BOOST_TEST(b.back() == 999'999u * 7);
  }
  BOOST_TEST(cpd::mapped_bytes() == mapped_before);  // all of it given back
}

BOOST_AUTO_TEST_CASE(a_growth_that_cannot_be_had_changes_nothing) {
  cpd::mapped_buffer<std::uint64_t> b;
  for (std::uint64_t i = 0; i < 4096; ++i) b.push_back(i);  // a mapping (32 KiB)
  const std::size_t mapped = cpd::mapped_bytes();
  const std::uint64_t* data = b.data();
  // 2^61 bytes: no machine maps that.
  BOOST_CHECK_THROW(b.reserve(std::size_t{1} << 58), std::bad_alloc);
  BOOST_TEST(b.data() == data);
  BOOST_TEST(b.size() == 4096u);
  BOOST_TEST(b.capacity() == 4096u);
  BOOST_TEST(cpd::mapped_bytes() == mapped);
  for (std::uint64_t i = 0; i < 4096; ++i) BOOST_TEST_REQUIRE(b[i] == i);
  // More values than a size_t of bytes can count.
  BOOST_CHECK_THROW(b.reserve(std::size_t{1} << 62), std::bad_array_new_length);
  BOOST_TEST(b.size() == 4096u);
}

BOOST_AUTO_TEST_CASE(the_vector_operations_the_index_uses) {
  cpd::mapped_buffer<int> a;
  BOOST_TEST(a.empty());
  a.reserve(100);
  BOOST_TEST(a.capacity() == 100u);  // exactly what was asked
  for (int i = 0; i < 10; ++i) a.push_back(i);
  BOOST_TEST(a.front() == 0);
  BOOST_TEST(a.back() == 9);
  a.pop_back();
  a.truncate(5);
  BOOST_TEST((std::vector<int>(a.begin(), a.end()) == std::vector<int>{0, 1, 2, 3, 4}));
  BOOST_TEST(a.capacity() == 100u);  // kept

  cpd::mapped_buffer<int> b;
  b.reserve(8);
  b.assign_within_capacity(a.begin(), a.end());
  BOOST_TEST((std::vector<int>(b.begin(), b.end()) == std::vector<int>{0, 1, 2, 3, 4}));
  b.clear();
  BOOST_TEST(b.empty());
  BOOST_TEST(b.capacity() == 8u);

  a.swap(b);
  BOOST_TEST(a.capacity() == 8u);
  BOOST_TEST(b.size() == 5u);
  cpd::mapped_buffer<int> c(std::move(b));
  BOOST_TEST(b.capacity() == 0u);
  BOOST_TEST(c.size() == 5u);
  a = std::move(c);
  BOOST_TEST(a.size() == 5u);
  BOOST_TEST(a[4] == 4);
}

BOOST_AUTO_TEST_CASE(a_far_bucket_and_a_large_heap_are_mappings) {
  // 100,000 far nodes and 100,000 near ones: the bucket's buffer and the
  // heap's are mapped, so the index's buffers leave malloc's count
  // unchanged; the nodes stay in order.
  std::vector<bare_node> nodes(200'000);
  cpd::deadline_index index;
  const auto now = cpd::clock::now();
  index.advance(now);
  const std::size_t before = malloc_in_use();
  const std::size_t mapped_before = cpd::mapped_bytes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto base = i < 100'000 ? now + std::chrono::milliseconds(1) : now + std::chrono::hours(1);
    nodes[i].set_deadline(base + std::chrono::microseconds(i));
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  BOOST_TEST(index.reserved_bytes() >= nodes.size() * (sizeof(void*) + sizeof(cpd::deadline_index::entry)) / 2);
  BOOST_TEST(cpd::mapped_bytes() >= mapped_before + index.reserved_bytes() - 2 * cpd::mapped_from);
  // What is left of malloc's count: the first buffers (under 8 KiB), freed as they grew.
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() < before + 2 * cpd::mapped_from);
  BOOST_TEST(index.check_invariants());
  std::size_t k = 0;
  while (cpd::index_node* n = index.pop_first()) BOOST_TEST_REQUIRE(n == &nodes[k++]);
  BOOST_TEST(k == nodes.size());
}

BOOST_AUTO_TEST_SUITE_END()

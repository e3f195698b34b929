// mapped_allocator: the far tier's large buffers come from page mappings,
// not from malloc, so that growing or shrinking one neither runs nor waits
// for malloc's own bookkeeping (see detail/mapped_allocator.hpp).
#include <chronopool/detail/deadline_index.hpp>
#include <chronopool/detail/mapped_allocator.hpp>

#include <boost/test/unit_test.hpp>

#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cpd = chronopool::detail;

namespace {

// Under a sanitizer malloc is the sanitizer's, and glibc's count stays still.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool glibc_counts_malloc = false;
#else
constexpr bool glibc_counts_malloc = true;
#endif

/// Bytes malloc has handed out and not had back, glibc's count.
std::size_t malloc_in_use() {
  const struct mallinfo2 mi = ::mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mapped_allocator)

BOOST_AUTO_TEST_CASE(large_buffers_bypass_malloc_and_small_ones_use_it) {
  cpd::mapped_allocator<std::uint64_t> alloc;
  const std::size_t large = 1 << 20;  // 8 MiB
  const std::size_t before = malloc_in_use();
  const std::size_t mapped_before = cpd::mapped_bytes();
  std::uint64_t* p = alloc.allocate(large);
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() == before);
  BOOST_TEST(cpd::mapped_bytes() == mapped_before + large * sizeof(std::uint64_t));  // counted instead
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)) == 0u);
  for (std::size_t i = 0; i < large; i += 512) p[i] = i;  // usable, one write a page
  for (std::size_t i = 0; i < large; i += 512) BOOST_TEST_REQUIRE(p[i] == i);
  alloc.deallocate(p, large);
  BOOST_TEST(cpd::mapped_bytes() == mapped_before);

  // Under 8 KiB: malloc's, which counts it.
  const std::size_t small = cpd::mapped_allocator<std::uint64_t>::mapped_from / sizeof(std::uint64_t) - 1;
  std::uint64_t* q = alloc.allocate(small);
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() >= before + small * sizeof(std::uint64_t));
  alloc.deallocate(q, small);
}

BOOST_AUTO_TEST_CASE(a_far_bucket_past_8_kib_is_a_mapping) {
  // 100,000 far nodes: their bucket's buffer is mapped, so the index's
  // buffers leave malloc's count unchanged; the nodes stay in order.
  struct bare_node : cpd::index_node {};
  std::vector<bare_node> nodes(100'000);
  cpd::deadline_index index;
  const auto now = cpd::clock::now();
  index.advance(now);
  const std::size_t before = malloc_in_use();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].set_deadline(now + std::chrono::hours(1) + std::chrono::microseconds(i));
    nodes[i].set_sequence(i);
    index.insert(&nodes[i]);
  }
  BOOST_TEST(index.reserved_bytes() >= nodes.size() * sizeof(void*));
  // What is left of malloc's count: the bucket's first buffers (under 8 KiB), freed as it grew.
  if (glibc_counts_malloc) BOOST_TEST(malloc_in_use() < before + cpd::mapped_allocator<std::uint64_t>::mapped_from);
  BOOST_TEST(index.check_invariants());
  std::size_t k = 0;
  while (cpd::index_node* n = index.pop_first()) BOOST_TEST_REQUIRE(n == &nodes[k++]);
  BOOST_TEST(k == nodes.size());
}

BOOST_AUTO_TEST_SUITE_END()

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail/platform/process_memory.hpp: figures that follow memory the test
// touches on Linux, and 0 ("unavailable") on the portable implementation.
#include "platform_expectation.hpp"

#include <chronopool/detail/platform/process_memory.hpp>
#include <chronopool/detail/queue/mapped_buffer.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <memory>

namespace cpd = chronopool::detail;
namespace cpp = chronopool::detail::platform;

namespace {

constexpr std::int64_t mib = 1024 * 1024;
// Under a sanitizer malloc is the sanitizer's: glibc's count stays still, and
// malloc_trim gives nothing back.
constexpr bool glibc_counts_malloc = !CHRONOPOOL_ADDRESS_SANITIZER && !CHRONOPOOL_THREAD_SANITIZER;

}  // namespace

BOOST_AUTO_TEST_SUITE(process_memory)

BOOST_AUTO_TEST_CASE(the_resident_set_follows_touched_memory) {
  if (!platform_test::expect_linux()) {
    BOOST_TEST(cpp::resident_bytes() == 0);
    BOOST_TEST(cpp::peak_resident_bytes() == 0);
    BOOST_TEST(!cpp::reset_peak_resident());
    cpp::trim_heap();  // does nothing, and may be called
    return;
  }
  cpp::trim_heap();
  const std::int64_t before = cpp::resident_bytes();
  BOOST_TEST(before > 0);
  BOOST_TEST(cpp::peak_resident_bytes() >= before);
  constexpr std::size_t size = 64 * mib;
  {
    const std::unique_ptr<char[]> block(new char[size]);
    std::memset(block.get(), 1, size);  // every page resident
    BOOST_TEST(cpp::resident_bytes() >= before + 48 * mib);
    BOOST_TEST(cpp::peak_resident_bytes() >= before + 48 * mib);
  }
  // A sanitizer's allocator keeps freed blocks (ASan's quarantine) and
  // ignores malloc_trim, so only glibc's malloc gives the block back here.
  if (!glibc_counts_malloc) return;
  cpp::trim_heap();
  const std::int64_t after = cpp::resident_bytes();
  BOOST_TEST(after < before + 16 * mib);  // freed and given back
  // The reset brings the peak down to what is resident now, if the kernel
  // allows it (Linux 4.0 and later).
  if (cpp::reset_peak_resident()) {
    BOOST_TEST(cpp::peak_resident_bytes() < before + 32 * mib);
  } else {
    BOOST_TEST_MESSAGE("the peak resident set cannot be reset here");
  }
}

BOOST_AUTO_TEST_CASE(heap_in_use_counts_malloc_and_chronopools_own_mappings) {
  if (!platform_test::expect_linux()) {
    BOOST_TEST(cpp::allocator_in_use_bytes() == 0);
    BOOST_TEST(cpp::heap_in_use_bytes() == 0);
    return;
  }
  if (!glibc_counts_malloc) return;
  const std::int64_t heap_before = cpp::heap_in_use_bytes();
  const std::int64_t malloc_before = cpp::allocator_in_use_bytes();
  BOOST_TEST(malloc_before > 0);
  BOOST_TEST(heap_before >= malloc_before + static_cast<std::int64_t>(cpd::mapped_bytes()));
  {
    const std::unique_ptr<char[]> block(new char[8 * mib]);
    BOOST_TEST(cpp::allocator_in_use_bytes() >= malloc_before + 8 * mib);
    // A buffer the deadline index would map: malloc does not see it, heap in use does.
    void* mapped = cpd::buffer_allocate(8 * mib);
    BOOST_TEST(cpp::allocator_in_use_bytes() < malloc_before + 9 * mib);
    BOOST_TEST(cpp::heap_in_use_bytes() >= heap_before + 16 * mib);
    cpd::buffer_deallocate(mapped, 8 * mib);
  }
  BOOST_TEST(cpp::heap_in_use_bytes() < heap_before + mib);
}

BOOST_AUTO_TEST_SUITE_END()

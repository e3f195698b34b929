// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail/platform/page_mapping.hpp: zeroed pages that grow keeping their
// contents, and a failed growth that leaves them as they were.
#include "platform_expectation.hpp"

#include <chronopool/detail/platform/page_mapping.hpp>
#include <chronopool/detail/support/sanitizers.hpp>

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>

namespace cpp = chronopool::detail::platform;

BOOST_AUTO_TEST_SUITE(page_mapping)

BOOST_AUTO_TEST_CASE(the_page_size_is_a_power_of_two_and_the_kind_is_the_platforms) {
  const std::size_t page = cpp::page_size();
  BOOST_TEST(page >= 4096u);
  BOOST_TEST((page & (page - 1)) == 0u);
  BOOST_TEST(cpp::pages_are_kernel_mappings() == platform_test::expect_linux());
}

BOOST_AUTO_TEST_CASE(mapped_pages_are_zeroed_and_grow_keeping_their_contents) {
  const std::size_t page = cpp::page_size();
  const std::size_t old_bytes = 4 * page;
  const std::size_t new_bytes = 256 * page;
  auto* p = static_cast<std::uint64_t*>(cpp::map_pages(old_bytes));
  BOOST_TEST_REQUIRE(p != nullptr);
  if (cpp::pages_are_kernel_mappings()) BOOST_TEST(reinterpret_cast<std::uintptr_t>(p) % page == 0u);
  const std::size_t old_words = old_bytes / sizeof(std::uint64_t);
  for (std::size_t i = 0; i < old_words; ++i) BOOST_TEST_REQUIRE(p[i] == 0u);
  for (std::size_t i = 0; i < old_words; ++i) p[i] = i * 2654435761u;

  auto* q = static_cast<std::uint64_t*>(cpp::remap_pages(p, old_bytes, new_bytes));
  BOOST_TEST_REQUIRE(q != nullptr);
  if (cpp::pages_are_kernel_mappings()) BOOST_TEST(reinterpret_cast<std::uintptr_t>(q) % page == 0u);
  for (std::size_t i = 0; i < old_words; ++i) BOOST_TEST_REQUIRE(q[i] == i * 2654435761u);
  const std::size_t new_words = new_bytes / sizeof(std::uint64_t);
  for (std::size_t i = old_words; i < new_words; ++i) q[i] = ~i;  // the new part is usable
  for (std::size_t i = old_words; i < new_words; ++i) BOOST_TEST_REQUIRE(q[i] == ~i);
  cpp::unmap_pages(q, new_bytes);
}

BOOST_AUTO_TEST_CASE(a_growth_that_fails_returns_null_and_leaves_the_pages) {
  // An address-space-sized request cannot be met. Under AddressSanitizer the
  // heap fallback's realloc would report it instead of returning null.
  if (CHRONOPOOL_ADDRESS_SANITIZER && !cpp::pages_are_kernel_mappings()) return;
  const std::size_t page = cpp::page_size();
  auto* p = static_cast<unsigned char*>(cpp::map_pages(page));
  BOOST_TEST_REQUIRE(p != nullptr);
  p[0] = 42;
  p[page - 1] = 43;
  const std::size_t impossible = (std::size_t{1} << 62) / page * page;
  BOOST_TEST(cpp::remap_pages(p, page, impossible) == nullptr);
  BOOST_TEST(p[0] == 42);
  BOOST_TEST(p[page - 1] == 43);
  cpp::unmap_pages(p, page);
}

BOOST_AUTO_TEST_SUITE_END()

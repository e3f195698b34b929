// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Which implementation of detail/platform/ the library was built with, as
// CTest tells it (CHRONOPOOL_EXPECT_PLATFORM: "linux" or "portable"): the
// tests check the functions against what that implementation promises,
// rather than against what the functions say of themselves. An environment
// variable, not a compile definition, so that the shared precompiled header
// keeps matching.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

namespace platform_test {

inline bool expect_linux() {
  const char* v = std::getenv("CHRONOPOOL_EXPECT_PLATFORM");
  BOOST_TEST_REQUIRE(v != nullptr, "CHRONOPOOL_EXPECT_PLATFORM is not set (run the test through CTest)");
  const std::string s = v;
  BOOST_TEST_REQUIRE((s == "linux" || s == "portable"), "CHRONOPOOL_EXPECT_PLATFORM=" << s);
  return s == "linux";
}

}  // namespace platform_test

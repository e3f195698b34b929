// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The version macros, the headers' version and the compiled library's agree
// with each other and with the CMake project's version.
#include <chronopool/version.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

BOOST_AUTO_TEST_SUITE(version)

BOOST_AUTO_TEST_CASE(headers_library_and_cmake_project_agree) {
  const chronopool::library_version v = chronopool::version();
  BOOST_TEST((v == chronopool::version_of_headers));
  BOOST_TEST(v.major == CHRONOPOOL_VERSION_MAJOR);
  BOOST_TEST(v.minor == CHRONOPOOL_VERSION_MINOR);
  BOOST_TEST(v.patch == CHRONOPOOL_VERSION_PATCH);
  BOOST_TEST(CHRONOPOOL_VERSION == v.major * 100000 + v.minor * 100 + v.patch);
  const std::string text = chronopool::version_string();
  BOOST_TEST(text == std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch));
  const char* project = std::getenv("CHRONOPOOL_PROJECT_VERSION");  // set by CTest
  BOOST_REQUIRE(project != nullptr);
  BOOST_TEST(text == project);
}

BOOST_AUTO_TEST_SUITE_END()

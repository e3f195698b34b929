// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// detail/platform/thread_naming.hpp and timer_slack.hpp, each on a thread of
// its own (both change the calling thread).
#include "platform_expectation.hpp"

#include <chronopool/detail/platform/thread_naming.hpp>
#include <chronopool/detail/platform/timer_slack.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <thread>

namespace cpp = chronopool::detail::platform;

BOOST_AUTO_TEST_SUITE(platform_threads)

BOOST_AUTO_TEST_CASE(a_thread_name_reads_back_cut_to_the_limit) {
  const bool on_linux = platform_test::expect_linux();
  std::string short_name;
  std::string long_name;
  std::thread([&] {
    cpp::set_current_thread_name("cp-short");
    short_name = cpp::current_thread_name();
    cpp::set_current_thread_name("cp-a-name-longer-than-fifteen-bytes");
    long_name = cpp::current_thread_name();
  }).join();
  if (on_linux) {
    BOOST_TEST(cpp::max_thread_name_length() == 15u);
    BOOST_TEST(short_name == "cp-short");
    BOOST_TEST(long_name == std::string("cp-a-name-longer-than-fifteen-bytes").substr(0, 15));
  } else {
    // Names are not kept: the calls do nothing and read nothing back.
    BOOST_TEST(cpp::max_thread_name_length() == 0u);
    BOOST_TEST(short_name.empty());
    BOOST_TEST(long_name.empty());
  }
}

BOOST_AUTO_TEST_CASE(the_timer_slack_goes_to_its_minimum) {
  const bool on_linux = platform_test::expect_linux();
  std::int64_t before = 0;
  std::int64_t after = 0;
  std::thread([&] {
    before = cpp::current_timer_slack_ns();
    cpp::minimise_timer_slack();
    after = cpp::current_timer_slack_ns();
  }).join();
  if (on_linux) {
    BOOST_TEST(before >= 0);  // readable: the default this thread inherited
    BOOST_TEST(after == 1);
  } else {
    BOOST_TEST(before == -1);  // unreadable
    BOOST_TEST(after == -1);
  }
}

BOOST_AUTO_TEST_SUITE_END()

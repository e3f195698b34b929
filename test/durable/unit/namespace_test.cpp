// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 43: namespace names that would break the key layout are refused by
// the scheduler's constructor, with the parameter and the value named.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include <stdexcept>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using boost::system::error_code;
using dt::fast_options;
using dt::wait_until;

BOOST_FIXTURE_TEST_SUITE(durable_namespace, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(namespace_names_that_break_the_key_layout_are_refused_with_their_value) {
  const std::vector<std::string> bad{"", "x}:s:y", "a{b", "}", "tab\there", std::string("nul\0x", 5), "del\x7f",
                                      "line\nbreak", std::string(257, 'n')};
  for (const auto& name : bad) {
    auto o = fast_options(name, dt::test_redis_options());
    try {
      cd::scheduler s(pool.get_executor(), o);
      BOOST_ERROR("name_space of " << name.size() << " bytes was accepted");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      BOOST_TEST(what.find("name_space") != std::string::npos, what);
      if (name == "x}:s:y") BOOST_TEST(what.find(name) != std::string::npos, what);
    }
  }
  // What worked before and does not break the layout stays accepted.
  const std::vector<std::string> good{"default", "team:billing", "prod eu-west-1", "z\xc3\xbcrich", "a.b_c/d*?",
                                     std::string(256, 'n')};
  for (const auto& name : good) {
    BOOST_CHECK_NO_THROW(cd::scheduler(pool.get_executor(), fast_options(name, dt::test_redis_options())));
  }
}

BOOST_AUTO_TEST_SUITE_END()

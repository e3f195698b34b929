// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Boost.Test main for test_durable (real Redis, see test/durable/CMakeLists.txt).
#define BOOST_TEST_MODULE chronopool_durable
#include <boost/test/unit_test.hpp>

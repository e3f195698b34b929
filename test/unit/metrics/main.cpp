// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE chronopool_metrics
#include <boost/test/unit_test.hpp>

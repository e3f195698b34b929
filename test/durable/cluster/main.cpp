// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Boost.Test main for test_durable_cluster: Redis Cluster tests, each on a
// cluster of redis-servers the tests start themselves (common/cluster_group).
#define BOOST_TEST_MODULE chronopool_durable_cluster
#include <boost/test/unit_test.hpp>

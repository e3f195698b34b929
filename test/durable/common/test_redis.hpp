// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where the shared test Redis runs: started by the CTest fixture, which
// writes into $CHRONOPOOL_TEST_REDIS_DIR either `port` (redis_fixture
// start: one server) or `cluster_seeds` (redis_fixture start-cluster: a
// Redis Cluster, its masters' ports one a line). And how many partitions
// the tests' namespaces get: $CHRONOPOOL_TEST_PARTITIONS (default 1).
#pragma once

#include <chronopool/durable/redis_options.hpp>
#include <chronopool/durable/scheduler_options.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace chronopool::durable::test {

/// Options for the fixture's Redis (no password): its one server, or its
/// cluster's masters as seeds (host and port then name the first of them).
/// Fails the current test with a clear message when run outside CTest or
/// the fixture is missing.
inline redis_options test_redis_options() {
  const char* dir = std::getenv("CHRONOPOOL_TEST_REDIS_DIR");
  if (dir == nullptr || *dir == '\0') {
    BOOST_FAIL(
        "CHRONOPOOL_TEST_REDIS_DIR is not set: run the durable tests through ctest (fixture durable_redis), or "
        "start a server with `redis_fixture start <dir>` and export CHRONOPOOL_TEST_REDIS_DIR=<dir>");
  }
  redis_options opts;
  opts.host = "127.0.0.1";
  const std::string seeds_file = std::string(dir) + "/cluster_seeds";
  if (std::filesystem::exists(seeds_file)) {
    std::ifstream in(seeds_file);
    for (unsigned long port = 0; in >> port;) {
      if (port == 0 || port > 65535) BOOST_FAIL("a port out of range in " + seeds_file);
      opts.cluster.seeds.push_back({"127.0.0.1", static_cast<std::uint16_t>(port)});
    }
    if (opts.cluster.seeds.empty()) BOOST_FAIL("no seed ports in " + seeds_file);
    opts.port = opts.cluster.seeds.front().port;
    return opts;
  }
  const std::string port_file = std::string(dir) + "/port";
  std::ifstream in(port_file);
  unsigned long port = 0;
  if (!(in >> port) || port == 0 || port > 65535) {
    BOOST_FAIL("cannot read a port from " + port_file + " (did `redis_fixture start` succeed?)");
  }
  opts.port = static_cast<std::uint16_t>(port);
  return opts;
}

/// The partition count of the tests' namespaces: $CHRONOPOOL_TEST_PARTITIONS
/// (CTest durable_on_cluster sets 8), 1 when unset. Fails the current test
/// when it is not a count the library takes.
inline std::uint32_t test_partitions() {
  const char* text = std::getenv("CHRONOPOOL_TEST_PARTITIONS");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const unsigned long n = std::strtoul(text, &end, 10);
  if (*end != '\0' || n < 1 || n > max_partitions)
    BOOST_FAIL(std::string("CHRONOPOOL_TEST_PARTITIONS is not a partition count: ") + text);
  return static_cast<std::uint32_t>(n);
}

}  // namespace chronopool::durable::test

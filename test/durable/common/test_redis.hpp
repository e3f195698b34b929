// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where the shared test Redis runs: started by the CTest fixture
// (redis_fixture start), which writes its port to
// $CHRONOPOOL_TEST_REDIS_DIR/port.
#pragma once

#include <chronopool/durable/redis_options.hpp>

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace chronopool::durable::test {

/// Options for the fixture's Redis (no password). Fails the current test
/// with a clear message when run outside CTest or the fixture is missing.
inline redis_options test_redis_options() {
  const char* dir = std::getenv("CHRONOPOOL_TEST_REDIS_DIR");
  if (dir == nullptr || *dir == '\0') {
    BOOST_FAIL(
        "CHRONOPOOL_TEST_REDIS_DIR is not set: run the durable tests through ctest (fixture durable_redis), or "
        "start a server with `redis_fixture start <dir>` and export CHRONOPOOL_TEST_REDIS_DIR=<dir>");
  }
  const std::string port_file = std::string(dir) + "/port";
  std::ifstream in(port_file);
  unsigned long port = 0;
  if (!(in >> port) || port == 0 || port > 65535) {
    BOOST_FAIL("cannot read a port from " + port_file + " (did `redis_fixture start` succeed?)");
  }
  redis_options opts;
  opts.host = "127.0.0.1";
  opts.port = static_cast<std::uint16_t>(port);
  return opts;
}

}  // namespace chronopool::durable::test

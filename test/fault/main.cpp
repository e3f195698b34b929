// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#define BOOST_TEST_MODULE chronopool_fault
#include <boost/test/unit_test.hpp>

#include "fault_counter.hpp"

// Prints how many faults the suite injected, by kind, once every test ran.
struct report_injected_faults {
  void setup() {}
  void teardown() {
    BOOST_TEST_MESSAGE(fault::counter().report()
                       << "\n(thrown payloads: std::runtime_error, std::logic_error, std::bad_alloc, int, a plain struct)");
  }
};
BOOST_TEST_GLOBAL_FIXTURE(report_injected_faults);

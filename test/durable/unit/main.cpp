// Boost.Test main for test_durable (real Redis, see test/durable/CMakeLists.txt).
#define BOOST_TEST_MODULE chronopool_durable
#include <boost/test/unit_test.hpp>

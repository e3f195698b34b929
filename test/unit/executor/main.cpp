#define BOOST_TEST_MODULE chronopool_executor
#include <boost/test/unit_test.hpp>

#define BOOST_TEST_MODULE chronopool_pool
#include <boost/test/unit_test.hpp>

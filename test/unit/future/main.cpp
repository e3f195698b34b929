#define BOOST_TEST_MODULE chronopool_future
#include <boost/test/unit_test.hpp>

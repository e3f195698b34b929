#define BOOST_TEST_MODULE chronopool_periodic
#include <boost/test/unit_test.hpp>

#define BOOST_TEST_MODULE chronopool_timer
#include <boost/test/unit_test.hpp>

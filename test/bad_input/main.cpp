#define BOOST_TEST_MODULE chronopool_bad_input
#include <boost/test/unit_test.hpp>

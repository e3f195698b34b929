#define BOOST_TEST_MODULE chronopool_stress
#include <boost/test/unit_test.hpp>

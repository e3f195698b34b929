#define BOOST_TEST_MODULE chronopool_api
#include <boost/test/unit_test.hpp>

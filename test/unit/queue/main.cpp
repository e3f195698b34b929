#define BOOST_TEST_MODULE chronopool_queue
#include <boost/test/unit_test.hpp>

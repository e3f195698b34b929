// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A thread's memo of the last context's timer_service: the same service as
// Asio's registry gives, across contexts, threads, and contexts destroyed
// and made again at the same address (where a stale memo would point at a
// destroyed service: ASan reports it, and the identity checks fail).
#include "../../support/asio.hpp"

#include <chronopool/detail/timer/timer_service_lookup.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <thread>

using namespace std::chrono_literals;

namespace {

chronopool::timer_service& lookup_registry_service(asio::execution_context& ctx) {
  return asio::use_service<chronopool::timer_service>(ctx);
}

// A timer made on @p io fires: the service it used belongs to @p io.
bool lookup_timer_fires(asio::io_context& io) {
  bool fired = false;
  chronopool::steady_timer t(io);
  t.expires_after(0ms);
  t.async_wait([&](const sys_ns::error_code& ec) { fired = !ec; });
  io.run();
  io.restart();
  return fired;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(timer_service_lookup)

BOOST_AUTO_TEST_CASE(the_memo_gives_each_context_its_own_service) {
  asio::io_context a;
  asio::io_context b;
  for (int k = 0; k < 3; ++k) {
    BOOST_TEST(&chronopool::detail::timer_service_of(a) == &lookup_registry_service(a));
    BOOST_TEST(&chronopool::detail::timer_service_of(b) == &lookup_registry_service(b));
  }
  BOOST_TEST(&chronopool::detail::timer_service_of(a.get_executor()) == &lookup_registry_service(a));
  BOOST_TEST(lookup_timer_fires(a));
  BOOST_TEST(lookup_timer_fires(b));
}

BOOST_AUTO_TEST_CASE(a_context_made_again_at_the_same_address_gets_its_new_service) {
  std::optional<asio::io_context> io;
  const asio::io_context* first_address = nullptr;
  for (int k = 0; k < 5; ++k) {
    io.emplace();
    if (first_address == nullptr) first_address = &*io;
    BOOST_TEST(&*io == first_address);  // the same storage: the memo's context matches
    BOOST_TEST(lookup_timer_fires(*io));
    BOOST_TEST(&chronopool::detail::timer_service_of(*io) == &lookup_registry_service(*io));
    BOOST_TEST(&chronopool::detail::timer_service_of(*io).context() == static_cast<asio::execution_context*>(&*io));
    io.reset();
  }
}

BOOST_AUTO_TEST_CASE(each_thread_keeps_its_own_memo) {
  asio::io_context a;
  asio::thread_pool threads(2);
  chronopool::timer_service* seen[2] = {nullptr, nullptr};
  std::thread t1([&] { seen[0] = &chronopool::detail::timer_service_of(a); });
  std::thread t2([&] { seen[1] = &chronopool::detail::timer_service_of(threads); });
  t1.join();
  t2.join();
  BOOST_TEST(seen[0] == &lookup_registry_service(a));
  BOOST_TEST(seen[1] == &lookup_registry_service(threads));
  threads.join();
}

BOOST_AUTO_TEST_SUITE_END()

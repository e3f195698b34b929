// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// <chronopool/chronopool.hpp> alone brings in the whole public API: this
// file includes nothing else of chronopool's, and every public header is
// named in it.
#include <chronopool/chronopool.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(one_include)

BOOST_AUTO_TEST_CASE(a_pool_timers_sleeps_and_periodic_work_from_one_include) {
  chronopool::scheduled_thread_pool pool(1);
  auto answer = pool.schedule(1ms, [] { return 42; });
  BOOST_TEST(answer.get() == 42);

  asio::io_context io;
  int ticks = 0;
  chronopool::periodic_handle beat = chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, [&] {
    return ++ticks == 2 ? chronopool::periodic_control::stop : chronopool::periodic_control::keep;
  });
  bool slept = false;
  bool waited = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await chronopool::sleep_for(1ms);
        slept = true;
        chronopool::steady_timer t(co_await asio::this_coro::executor, 1ms);
        co_await t.async_wait(asio::use_awaitable);
        chronopool::periodic_timer ticker(co_await asio::this_coro::executor, 1ms);
        co_await ticker.async_tick(asio::use_awaitable);
        waited = true;
      },
      asio::detached);
  io.run();
  BOOST_TEST(slept);
  BOOST_TEST(waited);
  BOOST_TEST(ticks == 2);
  BOOST_TEST(!beat.active());
  pool.join();
  BOOST_TEST((pool.state() == chronopool::run_state::terminated));
}

BOOST_AUTO_TEST_CASE(every_public_header_is_in_the_one_include) {
  const char* dir_name = std::getenv("CHRONOPOOL_PUBLIC_INCLUDE_DIR");  // set by CTest
  BOOST_REQUIRE(dir_name != nullptr);
  const std::filesystem::path dir = dir_name;
  std::ifstream in(dir / "chronopool.hpp");
  BOOST_REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  int headers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".hpp" || name == "chronopool.hpp") continue;
    ++headers;
    BOOST_TEST(text.str().find("#include <chronopool/" + name + ">") != std::string::npos,
               name << " is not included by chronopool.hpp");
  }
  BOOST_TEST(headers >= 16);
}

BOOST_AUTO_TEST_SUITE_END()

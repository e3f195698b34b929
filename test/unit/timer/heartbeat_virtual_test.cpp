// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The heartbeat demo's logic (example/heartbeat_core.hpp) on virtual time:
// a 5 s heartbeat and a 30 s idle timeout over socket pairs, under a plain
// io.run() with the manual clock's auto-advance. Minutes of virtual time
// pass in milliseconds, every drop lands exactly 30 s after the last word,
// and every tick exactly on its ideal instant.
#include "../../../example/heartbeat_core.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/manual_clock.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

using namespace std::chrono_literals;

namespace heartbeat_virtual {

using stream = asio::local::stream_protocol::socket;
using steady = std::chrono::steady_clock;

/// What one client saw: heartbeats, and when the server closed on it.
struct client_view {
  std::size_t heartbeats = 0;
  steady::duration closed_at{-1};
};

/// Reads heartbeats until the server closes; pings @p pings times, every
/// @p ping_every, when @p pings is not zero.
asio::awaitable<void> client(stream& s, int pings, steady::duration ping_every, chronopool::manual_clock& clock,
                             steady::time_point start, client_view& view) {
  if (pings > 0) {
    asio::co_spawn(
        s.get_executor(),
        [&s, pings, ping_every]() -> asio::awaitable<void> {
          for (int i = 0; i < pings && s.is_open(); ++i) {
            co_await chronopool::sleep_for(ping_every);
            sys_ns::error_code ec;
            co_await asio::async_write(s, asio::buffer(std::string_view("PING\n")),
                                       asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
          }
        },
        asio::detached);
  }
  asio::streambuf buf;
  for (;;) {
    sys_ns::error_code ec;
    co_await asio::async_read_until(s, buf, '\n', asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;  // end of stream: the server dropped us
    std::istream in(&buf);
    std::string line;
    std::getline(in, line);
    if (line.starts_with("HB ")) ++view.heartbeats;
  }
  view.closed_at = clock.now() - start;
}

}  // namespace heartbeat_virtual

BOOST_AUTO_TEST_SUITE(heartbeat_virtual_suite)

BOOST_AUTO_TEST_CASE(idle_timeout_of_30s_and_heartbeats_on_virtual_time) {
  using heartbeat_virtual::steady;
  asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);  // before any socket: auto-advance
  const steady::time_point start = clock.now();

  heartbeat::stats stats;
  heartbeat::hub<heartbeat_virtual::stream> hub(io.get_executor(), 5s, 30s, stats, [&] { return clock.now(); });
  std::vector<steady::duration> drops;
  hub.on_drop = [&](steady::time_point t) { drops.push_back(t - start); };

  heartbeat_virtual::stream silent_server(io), silent_client(io), chatty_server(io), chatty_client(io);
  asio::local::connect_pair(silent_server, silent_client);
  asio::local::connect_pair(chatty_server, chatty_client);
  hub.add(std::move(silent_server));
  hub.add(std::move(chatty_server));
  hub.start();

  heartbeat_virtual::client_view silent, chatty;
  asio::co_spawn(io, heartbeat_virtual::client(silent_client, 0, 0s, clock, start, silent), asio::detached);
  // PING at 10 s, 20 s, ..., 120 s, then silence: dropped at 150 s.
  asio::co_spawn(io, heartbeat_virtual::client(chatty_client, 12, 10s, clock, start, chatty), asio::detached);
  chronopool::steady_timer end(io, 200s);
  end.async_wait([&](sys_ns::error_code) { hub.stop(); });

  const steady::time_point real_start = steady::now();
  io.run();
  const steady::duration real = steady::now() - real_start;

  // The silent client is dropped exactly when its 30 s ran out, the chatty
  // one exactly 30 s after its last ping.
  const std::vector<steady::duration> expected_drops{30s, 150s};
  BOOST_TEST(drops == expected_drops, boost::test_tools::per_element());
  BOOST_TEST((silent.closed_at == 30s));
  BOOST_TEST((chatty.closed_at == 150s));
  // Heartbeats at 0 s, 5 s, ...: at 30 s (and 150 s) the idle timeout and a
  // tick fall due together. The timeout's wait started first, so it
  // completes first, but the || only cancels the read then and drops the
  // session once the read has ended; the tick, delivered in the same
  // collect, still finds the session. So the silent client saw 0..30 s and
  // the chatty one 0..150 s: 7 and 31 heartbeats.
  BOOST_TEST(silent.heartbeats == 7u);
  BOOST_TEST(chatty.heartbeats == 31u);
  BOOST_TEST(stats.dropped_idle == 2u);
  // Every tick ran at exactly its ideal instant, until the end at 200 s.
  BOOST_TEST(stats.tick_lateness.size() == 40u);  // 0 s, 5 s, ..., 195 s
  for (const steady::duration late : stats.tick_lateness) BOOST_TEST((late == steady::duration::zero()));
  BOOST_TEST((clock.now() - start == 200s));
  BOOST_TEST((real < 1min), "200 s of virtual time took " << real.count() << " ns of real time");
}

BOOST_AUTO_TEST_SUITE_END()

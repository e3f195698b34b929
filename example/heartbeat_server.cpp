// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// heartbeat_server: a TCP server and its clients on one io_context, using
// only chronopool for time.
//
// - The server sends "HB <n>" to every connection from one periodic handler
//   (chronopool::schedule_at_fixed_rate on the io_context's executor).
// - Each connection has an idle timeout: a read races a chronopool::steady_timer
//   with awaitable_operators' ||; a client that stays silent is dropped.
// - Chatty clients send "PING" every 100 ms (with chronopool::sleep_for);
//   silent clients only listen, so the server drops them.
// - Once a second a status line: connections, heartbeats sent, pending timers,
//   tick lateness p50/p99.
// It stops by itself after --seconds (default 3) and exits 0 when every
// silent client was dropped and every chatty one got heartbeats.
// The heartbeat and idle-timeout logic lives in heartbeat_core.hpp, which a
// unit test runs on a manual clock (test/unit/timer/heartbeat_virtual_test.cpp).
#include "heartbeat_core.hpp"

#include <chronopool/async_sleep.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <istream>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

namespace {

constexpr auto heartbeat_period = 200ms;
constexpr auto idle_timeout = 500ms;
constexpr auto ping_period = 100ms;

using heartbeat::read_line_within;

/// The TCP side: accepts connections and hands each to the hub (the
/// heartbeat and idle-timeout logic, in heartbeat_core.hpp).
class server {
 public:
  server(asio::io_context& io, heartbeat::stats& stats)
      : io_(io),
        acceptor_(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        hub_(io.get_executor(), heartbeat_period, idle_timeout, stats, [] { return steady::now(); }) {}

  unsigned short port() const { return acceptor_.local_endpoint().port(); }

  void start() {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    hub_.start();
  }

  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    hub_.stop();
  }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      hub_.add(std::move(socket));
    }
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  heartbeat::hub<tcp::socket> hub_;
};

struct client_result {
  bool chatty;
  std::size_t heartbeats = 0;
  bool dropped = false;
};

/// A client that pings (chatty) or stays silent, and counts heartbeats.
asio::awaitable<void> client(unsigned short port, client_result& r, steady::time_point stop_at) {
  auto ex = co_await asio::this_coro::executor;
  tcp::socket socket(ex);
  co_await socket.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), asio::use_awaitable);
  if (r.chatty) {
    asio::co_spawn(
        ex,
        [&socket, stop_at]() -> asio::awaitable<void> {
          while (steady::now() < stop_at && socket.is_open()) {
            boost::system::error_code ec;
            co_await asio::async_write(socket, asio::buffer(std::string_view("PING\n")),
                                       asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
            co_await chronopool::sleep_for(ping_period);
          }
        },
        asio::detached);
  }
  asio::streambuf buf;
  while (steady::now() < stop_at) {
    auto line = co_await read_line_within(socket, buf, stop_at - steady::now());
    if (!line) {
      r.dropped = steady::now() < stop_at;  // the server closed on us before the end
      break;
    }
    if (line->starts_with("HB ")) ++r.heartbeats;
  }
  boost::system::error_code ignored;
  socket.close(ignored);
}

double percentile_us(std::vector<steady::duration> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const steady::duration d = v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  return std::chrono::duration<double, std::micro>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 3;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string_view(argv[i]) == "--seconds") seconds = std::max(1, std::atoi(argv[i + 1]));

  asio::io_context io;
  heartbeat::stats stats;
  server srv(io, stats);
  srv.start();
  fmt::print("heartbeat_server on 127.0.0.1:{} for {} s: heartbeat every {} ms, idle timeout {} ms\n", srv.port(),
             seconds, heartbeat_period.count(), idle_timeout.count());

  const auto stop_at = steady::now() + std::chrono::seconds(seconds);
  std::vector<client_result> clients;
  for (int i = 0; i < 6; ++i) clients.push_back({i % 3 != 2});  // every third client stays silent
  for (auto& c : clients) asio::co_spawn(io, client(srv.port(), c, stop_at), asio::detached);

  // Status once a second, on the same io_context.
  auto& timers = asio::use_service<chronopool::timer_service>(io);
  int second = 0;
  auto status = chronopool::schedule_at_fixed_rate(io.get_executor(), 1s, 1s, [&] {
    fmt::print("[{}s] connections={} heartbeats_sent={} dropped_idle={} pending_timers={} "
               "tick_lateness p50={:.0f}us p99={:.0f}us\n",
               ++second, stats.connections - stats.dropped_idle, stats.heartbeats_sent, stats.dropped_idle,
               timers.pending_waits(), percentile_us(stats.tick_lateness, 0.50),
               percentile_us(stats.tick_lateness, 0.99));
  });
  chronopool::steady_timer end(io, stop_at);
  end.async_wait([&](boost::system::error_code) {
    status.cancel();
    srv.stop();
  });
  io.run();

  bool ok = stats.heartbeats_sent > 0;
  std::size_t silent = 0, dropped = 0;
  for (const auto& c : clients) {
    if (c.chatty) {
      ok = ok && c.heartbeats > 0 && !c.dropped;
    } else {
      ++silent;
      dropped += c.dropped ? 1 : 0;
    }
  }
  ok = ok && dropped == silent;
  fmt::print("done: {} heartbeats sent, {}/{} silent clients dropped, chatty clients kept: {}\n",
             stats.heartbeats_sent, dropped, silent, ok ? "yes" : "NO");
  return ok ? 0 : 1;
}

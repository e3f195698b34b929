// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// convert_from_asio: a program written for boost::asio::steady_timer moves to
// chronopool by changing one type name. Everything below the alias is plain
// Asio code.
#include <chronopool/steady_timer.hpp>

#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <chrono>
#include <vector>

// Before: using timer = boost::asio::steady_timer;
using timer = chronopool::steady_timer;

namespace asio = boost::asio;
using namespace std::chrono_literals;

int main() {
  asio::io_context io;
  std::vector<int> order;

  timer a(io, 30ms), b(io, 10ms), c(io, 20ms);
  a.async_wait([&](const boost::system::error_code& ec) { if (!ec) order.push_back(30); });
  b.async_wait([&](const boost::system::error_code& ec) { if (!ec) order.push_back(10); });
  c.async_wait([&](const boost::system::error_code& ec) { if (!ec) order.push_back(20); });

  timer cancelled(io, 1h);
  bool aborted = false;
  cancelled.async_wait([&](const boost::system::error_code& ec) { aborted = ec == asio::error::operation_aborted; });
  cancelled.cancel();

  io.run();
  fmt::print("fired in order: {} {} {}; cancelled wait aborted: {}\n", order.at(0), order.at(1), order.at(2), aborted);
  return order == std::vector<int>{10, 20, 30} && aborted ? 0 : 1;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Driving a detail::redis_connection to completion from a test: run its
// io_context until the operation is done, with a bound so that a hang fails
// the test instead of stalling it. Shared by the connection tests and
// sync_redis.
#pragma once

#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/detail/redis_value.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace chronopool::durable::test {

using connection = detail::redis_connection;
using detail::redis_value;
using boost::system::error_code;
namespace asio = boost::asio;

// Generous: these only bound a hang; passing tests take milliseconds.
constexpr auto wait_limit = std::chrono::milliseconds(10000);

// Runs ctx until pred() holds; fails the test case if it does not within limit.
template <class Pred>
void run_until(asio::io_context& ctx, Pred pred, std::chrono::milliseconds limit = wait_limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) BOOST_FAIL("timed out waiting for a completion");
    if (ctx.stopped()) ctx.restart();
    ctx.run_one_for(std::chrono::milliseconds(10));
  }
}

// Runs ctx for a while without a condition (to let bytes move).
inline void run_for(asio::io_context& ctx, std::chrono::milliseconds d) {
  if (ctx.stopped()) ctx.restart();
  ctx.run_for(d);
}

struct outcome {
  bool done = false;
  error_code ec;
  redis_value value;
};

inline auto capture(outcome& o) {
  return [&o](error_code ec, redis_value v) {
    BOOST_CHECK(!o.done);  // exactly once
    o.done = true;
    o.ec = ec;
    o.value = std::move(v);
  };
}

inline error_code connect(asio::io_context& ctx, connection& conn) {
  std::optional<error_code> result;
  conn.async_connect([&](error_code ec) { result = ec; });
  run_until(ctx, [&] { return result.has_value(); });
  return *result;
}

inline outcome execute(asio::io_context& ctx, connection& conn, std::vector<std::string> args) {
  outcome o;
  conn.async_execute(std::move(args), capture(o));
  run_until(ctx, [&] { return o.done; });
  return o;
}

// A reply that must have arrived: transport success.
inline redis_value command(asio::io_context& ctx, connection& conn, std::vector<std::string> args) {
  auto o = execute(ctx, conn, std::move(args));
  BOOST_REQUIRE_MESSAGE(!o.ec, "transport error: " << o.ec.message());
  return std::move(o.value);
}

}  // namespace chronopool::durable::test

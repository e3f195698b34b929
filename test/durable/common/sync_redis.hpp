// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A blocking wrapper over detail::redis_connection for tests: each call
// runs a private io_context until the reply is in (bounded: connection_io).
#pragma once

#include "connection_io.hpp"

#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/detail/redis_value.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <string>
#include <vector>

namespace chronopool::durable::test {

class sync_redis {
 public:
  explicit sync_redis(const redis_options& o) : conn_(io_.get_executor(), o) {
    if (auto ec = test::connect(io_, conn_)) throw boost::system::system_error(ec, "sync_redis connect");
  }

  /// The reply, which may be an error value; throws on transport errors.
  detail::redis_value exec(std::vector<std::string> args) {
    auto o = test::execute(io_, conn_, std::move(args));
    if (o.ec) throw boost::system::system_error(o.ec, "sync_redis exec");
    return std::move(o.value);
  }

  detail::redis_connection& connection() { return conn_; }
  boost::asio::io_context& context() { return io_; }

  /// Runs handlers (e.g. pub/sub pushes) until pred() or `limit` passes.
  template <class Pred, class Duration>
  bool run_for_until(Duration limit, Pred pred) {
    io_.restart();
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!pred() && std::chrono::steady_clock::now() < end) {
      io_.run_for(std::chrono::milliseconds(5));
      io_.restart();
    }
    return pred();
  }

 private:
  boost::asio::io_context io_;
  detail::redis_connection conn_;
};

}  // namespace chronopool::durable::test

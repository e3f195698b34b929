// A blocking wrapper over detail::redis_connection for tests: each call
// runs a private io_context until the reply is in.
#pragma once

#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/detail/redis_value.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

#include <optional>
#include <string>
#include <vector>

namespace chronopool::durable::test {

class sync_redis {
 public:
  explicit sync_redis(const redis_options& o) : conn_(io_.get_executor(), o) {
    std::optional<boost::system::error_code> result;
    conn_.async_connect([&](boost::system::error_code ec) { result = ec; });
    run_until([&] { return result.has_value(); });
    if (*result) throw boost::system::system_error(*result, "sync_redis connect");
  }

  /// The reply, which may be an error value; throws on transport errors.
  detail::redis_value exec(std::vector<std::string> args) {
    std::optional<boost::system::error_code> ec;
    detail::redis_value out;
    conn_.async_execute(std::move(args), [&](boost::system::error_code e, detail::redis_value v) {
      ec = e;
      out = std::move(v);
    });
    run_until([&] { return ec.has_value(); });
    if (*ec) throw boost::system::system_error(*ec, "sync_redis exec");
    return out;
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
  template <class Pred>
  void run_until(Pred pred) {
    io_.restart();
    while (!pred()) {
      if (io_.run_one() == 0) io_.restart();
    }
  }

  boost::asio::io_context io_;
  detail::redis_connection conn_;
};

}  // namespace chronopool::durable::test

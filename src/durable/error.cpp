// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/durable/error.hpp>

#include <string>

namespace chronopool::durable {
namespace {

// Fixed texts only: nothing from Redis or from the options (host names,
// user names, passwords) ever goes into a message, so logging an
// error_code cannot leak a secret.
class category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "chronopool.durable"; }

  std::string message(int ev) const override {
    switch (static_cast<error>(ev)) {
      case error::not_connected:
        return "not connected to Redis";
      case error::request_timeout:
        return "Redis did not answer within the request timeout";
      case error::connect_timeout:
        return "connecting to Redis did not finish within the connect timeout";
      case error::connection_lost:
        return "the connection to Redis was lost";
      case error::protocol_error:
        return "the reply stream from Redis could not be parsed";
      case error::auth_failed:
        return "Redis refused the authentication";
      case error::server_error:
        return "Redis answered with an error";
      case error::stale_lease:
        return "the lease is gone or its fencing token was superseded";
      case error::schedule_exists:
        return "a schedule with this id already exists";
      case error::no_such_schedule:
        return "no schedule with this id";
      case error::no_handler:
        return "no handler is registered for the task name";
      case error::shut_down:
        return "the durable scheduler was shut down";
    }
    return "unknown chronopool.durable error";
  }
};

}  // namespace

const boost::system::error_category& durable_category() noexcept {
  // A function-local static: one address for the whole program, which
  // error_code comparison relies on, and no static-initialisation order issue.
  static const category instance;
  return instance;
}

}  // namespace chronopool::durable

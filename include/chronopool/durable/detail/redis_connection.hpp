// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// One pipelined connection to Redis on an Asio executor.
//
// hiredis (0.14) does the protocol: its reader decodes replies and its
// formatter encodes commands; the socket, the timeouts and the ordering are
// ours. The connection is not thread-safe: every member is called on its
// executor, which must not run two handlers at once (an io_context run by
// one thread, or a strand).
//
// With redis_options::cluster on, the same interface fronts a Redis Cluster
// client (src/durable/redis_cluster.hpp): one such connection per master,
// each command routed by the hash slot of its key.
#pragma once

#include <chronopool/durable/detail/redis_value.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable::detail {

class cluster_client;

class redis_connection {
 public:
  using executor_type = boost::asio::any_io_executor;
  using connect_handler = boost::asio::any_completion_handler<void(boost::system::error_code)>;
  using reply_handler =
      boost::asio::any_completion_handler<void(boost::system::error_code, redis_value)>;
  /// Receives pub/sub messages: arrays whose first element is "message" or
  /// "pmessage". Called on the connection's executor.
  using push_handler = std::function<void(redis_value)>;
  /// Cluster: prepares one master's own connection (open, not yet used for
  /// anything else), then calls `done` on the connection's executor; an
  /// error closes the cluster connection with it.
  using node_setup = std::function<void(std::shared_ptr<redis_connection> node,
                                        std::function<void(boost::system::error_code)> done)>;

  /// Throws std::invalid_argument when options.tls names files that
  /// cannot be used (see tls_options), or the Sentinel or Cluster options
  /// are inconsistent (see check_sentinel_options, check_cluster_options).
  redis_connection(executor_type ex, redis_options options);
  /// Closes the connection; outstanding requests complete with operation_aborted.
  ~redis_connection();
  redis_connection(const redis_connection&) = delete;
  redis_connection& operator=(const redis_connection&) = delete;

  executor_type get_executor() const noexcept;
  const redis_options& options() const noexcept;

  /// Resolves, connects, shakes hands (TLS) and authenticates (when a
  /// password is configured). A TLS failure is error::tls_failed.
  /// Can be called again after the connection was lost or closed.
  /// @par Completion Signature void(error_code)
  template <class Token>
  auto async_connect(Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [this](auto handler) { initiate_connect(connect_handler(std::move(handler))); }, token);
  }

  /// Sends one command, pipelined behind the ones before it, and completes
  /// with its reply. An error reply from Redis is a value of kind error with
  /// a success error_code; error_codes are for transport failures.
  /// @par Completion Signature void(error_code, redis_value)
  template <class Token>
  auto async_execute(std::vector<std::string> args, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, redis_value)>(
        [this](auto handler, std::vector<std::string> a) {
          initiate_execute(std::move(a), reply_handler(std::move(handler)));
        },
        token, std::move(args));
  }

  void set_push_handler(push_handler h);

  /// True when redis_options::cluster is on.
  bool is_cluster() const noexcept { return cluster_ != nullptr; }
  /// Cluster: `f` runs on every master's connection once it opens, before
  /// any command is sent there, and again when that master answers
  /// "ERR Function not found" (then the command is sent there once more).
  /// Ignored without Cluster.
  void set_node_setup(node_setup f);

  /// Closes the socket; outstanding requests complete with operation_aborted.
  void close();
  bool is_open() const noexcept;

 private:
  void initiate_connect(connect_handler h);
  void initiate_execute(std::vector<std::string> args, reply_handler h);

  struct impl;
  std::shared_ptr<impl> impl_;
  std::shared_ptr<cluster_client> cluster_;  // null: one server (maybe found through Sentinel)
};

}  // namespace chronopool::durable::detail

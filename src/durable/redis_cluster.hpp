// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Redis Cluster for redis_connection: reads the slot map from a seed, keeps
// one redis_connection per master it uses, and sends each command to the
// master that serves the hash slot of its key, following -MOVED and -ASK.
// Runs on the owning connection's executor, like it, and is not
// thread-safe either.
//
// Order: commands for one key reach Redis in the order they were executed.
// Each node's connection is a FIFO pipeline, and a key maps to one node at a
// time; the map only changes, and redirected commands are only sent again,
// while nothing is in flight. A redirection therefore holds every command
// executed after it until all commands sent before it have been answered,
// then sends the held ones in their original order.
//
// Failure: when a node's connection fails, the whole client closes (every
// outstanding command fails with that error), like a single connection
// does; the next connect reads the slot map afresh.
#pragma once

#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace chronopool::durable::detail {

/// Checks redis_options::cluster when it is on: throws std::invalid_argument
/// naming the option and its value (a seed without a host or with port 0,
/// max_redirects 0, Sentinel configured as well).
void check_cluster_options(const redis_options& o);

class cluster_client : public std::enable_shared_from_this<cluster_client> {
 public:
  using connect_handler = redis_connection::connect_handler;
  using reply_handler = redis_connection::reply_handler;
  using push_handler = redis_connection::push_handler;
  using node_setup = redis_connection::node_setup;

  /// Cluster must be on (seeds not empty); throws as check_cluster_options.
  cluster_client(redis_connection::executor_type ex, redis_options o);

  void connect(connect_handler h);
  void execute(std::vector<std::string> args, reply_handler h);
  void set_push_handler(push_handler h);
  void set_node_setup(node_setup f) { setup_ = std::move(f); }
  /// Closes every node's connection; outstanding commands and a connect
  /// under way complete with `ec`.
  void close(boost::system::error_code ec);
  /// Connected, and no node connection that was open has been lost since
  /// (one still connecting to a node met through -MOVED or -ASK counts as open).
  bool is_open() const noexcept;

 private:
  struct command {
    std::uint64_t seq = 0;
    std::vector<std::string> args;
    int slot = -1;  // -1: no key, any master
    reply_handler handler;
    boost::asio::any_completion_executor work;
    std::string ask;  // non-empty: send once to this node, after ASKING
    unsigned redirects = 0;
    bool reloaded = false;  // the node's setup was run again for it
  };
  using command_ptr = std::shared_ptr<command>;

  struct node {
    std::string address;  // host:port
    std::shared_ptr<redis_connection> conn;
    bool connected = false;             // its connect succeeded (a loss after it shows in is_open)
    bool ready = false;                 // connected and set up
    std::deque<command_ptr> waiting;    // sent while not ready, in order
  };
  using node_ptr = std::shared_ptr<node>;

  enum class state { closed, connecting, open };

  void discover(std::size_t seed, std::string failures);
  void connect_masters();
  node_ptr ensure_node(const std::string& address);
  void run_setup(const node_ptr& n);
  void node_ready(const node_ptr& n);
  void send(command_ptr c);
  void transmit(const node_ptr& n, const command_ptr& c);
  void on_reply(std::uint64_t gen, const node_ptr& n, const command_ptr& c, boost::system::error_code ec,
                redis_value v);
  void hold(command_ptr c);
  void release_if_quiet();
  void refresh();
  void finish(const command_ptr& c, boost::system::error_code ec, redis_value v);
  redis_options node_options(const std::string& address) const;
  push_handler forward_pushes();
  std::string any_master() const;

  redis_connection::executor_type ex_;
  redis_options options_;
  state state_ = state::closed;
  std::uint64_t gen_ = 0;  // bumped by close(): callbacks of an older generation do nothing
  connect_handler connect_handler_;
  boost::asio::any_completion_executor connect_work_;
  std::shared_ptr<redis_connection> probe_;  // the seed being asked for the slot map
  boost::system::error_code seed_error_;     // the first seed's failure ...
  bool seed_errors_agree_ = true;            // ... and whether every seed failed with it
  std::vector<std::string> owners_;          // slot -> master's host:port ("" : unserved)
  std::map<std::string, node_ptr> nodes_;
  std::size_t nodes_pending_ = 0;  // connecting: masters not ready yet
  std::unordered_map<std::uint64_t, command_ptr> outstanding_;
  std::uint64_t next_seq_ = 0;
  std::size_t in_flight_ = 0;  // handed to a node, not answered yet
  bool holding_ = false;       // a redirection is being resolved
  bool refresh_wanted_ = false, refreshing_ = false;
  std::vector<std::pair<std::uint16_t, std::string>> moved_;  // from -MOVED, applied when quiet
  std::vector<std::string> refreshed_;                        // a new map, applied when quiet
  std::vector<command_ptr> held_;
  node_setup setup_;
  std::shared_ptr<push_handler> push_;
};

/// Reads a CLUSTER SLOTS reply into slot -> "host:port" of its master; a
/// master announced without an address (empty or "?") is taken to be at
/// `asked_host`. False when the reply does not have that shape.
bool parse_cluster_slots(const redis_value& v, const std::string& asked_host, std::vector<std::string>& owners);

/// "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>": the slot and
/// the address; false for any other text.
bool parse_redirection(std::string_view text, bool& ask, std::uint16_t& slot, std::string& address);

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A TCP proxy between the chaos workers and Redis that can stop forwarding
// without closing anything (a "stall": a partition the kernel does not
// report) and can cut every connection at once.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace chronopool::durable::chaos {

class stall_proxy {
 public:
  /// Listens on a free loopback port and forwards to 127.0.0.1:upstream_port.
  explicit stall_proxy(std::uint16_t upstream_port);
  ~stall_proxy();
  stall_proxy(const stall_proxy&) = delete;
  stall_proxy& operator=(const stall_proxy&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  /// While stalled, bytes are accepted from neither side and nothing is
  /// closed: both ends see a silent peer until their own timeouts fire.
  void set_stalled(bool stalled) noexcept { stalled_ = stalled; }
  /// Closes every open connection (both sides), as a network reset would.
  void cut_all();
  std::uint64_t connections_accepted() const noexcept { return accepted_; }

 private:
  using socket_ptr = std::shared_ptr<boost::asio::ip::tcp::socket>;
  void accept_next();
  void start_pair(socket_ptr down);
  void pump(socket_ptr from, socket_ptr to);

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t upstream_port_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stalled_{false};
  std::atomic<std::uint64_t> accepted_{0};
  std::vector<std::weak_ptr<boost::asio::ip::tcp::socket>> open_;  // io thread only
  std::thread thread_;
};

}  // namespace chronopool::durable::chaos

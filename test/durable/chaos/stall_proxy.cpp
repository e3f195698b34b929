// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "stall_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>

namespace chronopool::durable::chaos {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
}

stall_proxy::stall_proxy(std::uint16_t upstream_port)
    : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), upstream_port_(upstream_port) {
  port_ = acceptor_.local_endpoint().port();
  accept_next();
  thread_ = std::thread([this] { io_.run(); });
}

stall_proxy::~stall_proxy() {
  asio::post(io_, [this] {
    acceptor_.close();
    io_.stop();
  });
  thread_.join();
}

void stall_proxy::cut_all() {
  asio::post(io_, [this] {
    for (auto& w : open_)
      if (auto s = w.lock()) {
        boost::system::error_code ignored;
        s->close(ignored);
      }
    open_.clear();
  });
}

void stall_proxy::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket s) {
    if (ec) return;  // closed
    ++accepted_;
    start_pair(std::make_shared<tcp::socket>(std::move(s)));
    accept_next();
  });
}

void stall_proxy::start_pair(socket_ptr down) {
  auto up = std::make_shared<tcp::socket>(io_);
  boost::system::error_code ec;
  up->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), upstream_port_), ec);
  if (ec) {
    down->close(ec);  // Redis is down: the client sees a reset, as it would
    return;
  }
  std::erase_if(open_, [](const auto& w) { return w.expired(); });
  open_.push_back(down);
  open_.push_back(up);
  pump(down, up);
  pump(up, down);
}

void stall_proxy::pump(socket_ptr from, socket_ptr to) {
  asio::co_spawn(
      io_,
      [this, from, to]() -> asio::awaitable<void> {
        std::array<char, 16384> buf;
        asio::steady_timer pause(io_);
        for (;;) {
          // A stall holds the bytes: neither side is closed, neither side hears back.
          while (stalled_) {
            pause.expires_after(std::chrono::milliseconds(5));
            co_await pause.async_wait(tuple_awaitable);
          }
          auto [ec, n] = co_await from->async_read_some(asio::buffer(buf), tuple_awaitable);
          if (ec) break;
          while (stalled_) {
            pause.expires_after(std::chrono::milliseconds(5));
            co_await pause.async_wait(tuple_awaitable);
          }
          auto [ec2, m] = co_await asio::async_write(*to, asio::buffer(buf.data(), n), tuple_awaitable);
          if (ec2) break;
        }
        boost::system::error_code ignored;
        from->close(ignored);
        to->close(ignored);
      },
      asio::detached);
}

}  // namespace chronopool::durable::chaos

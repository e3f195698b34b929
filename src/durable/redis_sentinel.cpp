// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "redis_sentinel.hpp"

#include <chronopool/durable/error.hpp>

#include <boost/asio/error.hpp>

#include <charconv>
#include <stdexcept>
#include <utility>

namespace chronopool::durable::detail {
namespace {

using boost::system::error_code;

// A sentinel's own connection: its address and credentials, the same TLS
// settings (verified against the sentinel's host), no Sentinel of its own.
redis_options sentinel_connection_options(const redis_options& o, const sentinel_address& a) {
  redis_options s;
  s.host = a.host;
  s.port = a.port;
  s.username = o.sentinel.username;
  s.password = o.sentinel.password;
  s.connect_timeout = o.connect_timeout;
  s.request_timeout = o.request_timeout;
  s.tls = o.tls;
  s.tls.server_name.clear();
  return s;
}

}  // namespace

void check_sentinel_options(const redis_options& o) {
  const auto& s = o.sentinel;
  if (s.sentinels.empty()) {
    if (!s.master_name.empty())
      throw std::invalid_argument("chronopool::durable: redis_options.sentinel.master_name \"" + s.master_name +
                                  "\" is set but redis_options.sentinel.sentinels is empty");
    return;
  }
  if (s.master_name.empty())
    throw std::invalid_argument(
        "chronopool::durable: redis_options.sentinel.master_name must not be empty when sentinels are listed");
  for (std::size_t i = 0; i < s.sentinels.size(); ++i) {
    const auto& a = s.sentinels[i];
    if (a.host.empty() || a.port == 0)
      throw std::invalid_argument("chronopool::durable: redis_options.sentinel.sentinels[" + std::to_string(i) +
                                  "] \"" + a.host + ":" + std::to_string(a.port) +
                                  "\" needs a host and a port other than 0");
  }
}

sentinel_locator::sentinel_locator(redis_connection::executor_type ex, const redis_options& o)
    : master_(o.sentinel.master_name) {
  check_sentinel_options(o);
  for (const auto& a : o.sentinel.sentinels) {
    query_.push_back(std::make_unique<redis_connection>(ex, sentinel_connection_options(o, a)));
    watch_.push_back(std::make_unique<redis_connection>(ex, sentinel_connection_options(o, a)));
  }
}

void sentinel_locator::close() {
  closed_ = true;
  for (auto& c : query_) c->close();
  for (auto& c : watch_) c->close();
  watching_ = subscribed_ = false;
}

void sentinel_locator::locate(found_handler h) {
  closed_ = false;
  ask(0, std::make_shared<found_handler>(std::move(h)));
}

void sentinel_locator::ask(std::size_t i, std::shared_ptr<found_handler> h) {
  if (closed_) {
    (*h)(boost::asio::error::operation_aborted, {}, 0);
    return;
  }
  if (i == query_.size()) {
    (*h)(make_error_code(error::no_master), {}, 0);
    return;
  }
  auto& q = *query_[i];
  auto question = [self = shared_from_this(), i, h] {
    self->query_[i]->async_execute({"SENTINEL", "get-master-addr-by-name", self->master_},
                                   [self, i, h](error_code ec, redis_value v) {
                                     self->answered(i, h, ec, std::move(v));
                                   });
  };
  if (q.is_open()) {
    question();
    return;
  }
  q.async_connect([self = shared_from_this(), i, h, question](error_code ec) {
    if (ec) {
      self->query_[i]->close();
      self->ask(i + 1, h);
      return;
    }
    question();
  });
}

void sentinel_locator::answered(std::size_t i, std::shared_ptr<found_handler> h, error_code ec, redis_value v) {
  if (ec) query_[i]->close();
  // [host, port]; nil when this sentinel does not know the name.
  std::uint16_t port = 0;
  const bool named = !ec && v.is_array() && v.elements.size() == 2 && v.elements[0].is_text() &&
                     v.elements[1].is_text() && !v.elements[0].text().empty();
  if (named) {
    const auto p = v.elements[1].text();
    const auto r = std::from_chars(p.data(), p.data() + p.size(), port);
    if (r.ec != std::errc{} || r.ptr != p.data() + p.size() || port == 0) port = 0;
  }
  if (port == 0) {
    ask(i + 1, h);
    return;
  }
  if (closed_) {
    (*h)(boost::asio::error::operation_aborted, {}, 0);
    return;
  }
  if (watching_ && subscribed_ && !watch_[watched_]->is_open()) watching_ = subscribed_ = false;  // lost
  if (!watching_) watch(i);
  (*h)({}, std::string(v.elements[0].text()), port);
}

void sentinel_locator::watch(std::size_t i) {
  watching_ = true;
  subscribed_ = false;
  watched_ = i;
  auto& w = *watch_[i];
  std::weak_ptr<sentinel_locator> weak = weak_from_this();
  // "+switch-master" carries "<name> <old ip> <old port> <new ip> <new port>".
  w.set_push_handler([weak, prefix = master_ + " "](redis_value m) {
    auto self = weak.lock();
    if (!self || m.elements.size() < 3 || !m.elements.back().is_text()) return;
    if (m.elements.back().text().starts_with(prefix) && self->on_switch_) self->on_switch_();
  });
  w.async_connect([self = shared_from_this(), i](error_code ec) {
    if (ec) {
      self->watch_[i]->close();
      self->watching_ = false;  // the next locate() tries again
      return;
    }
    self->watch_[i]->async_execute({"SUBSCRIBE", "+switch-master"}, [self, i](error_code ec2, redis_value v) {
      if (ec2 || v.is_error()) {
        self->watch_[i]->close();
        self->watching_ = false;
        return;
      }
      self->subscribed_ = true;
    });
  });
}

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "redis_cluster.hpp"

#include <chronopool/durable/detail/cluster_slot.hpp>
#include <chronopool/durable/error.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>

namespace chronopool::durable::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// "host:port" split at its last colon (an IPv6 address has more); false
// when there is no host or no valid port.
bool split_address(std::string_view a, std::string& host, std::uint16_t& port) {
  const auto colon = a.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const auto p = a.substr(colon + 1);
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc{} || end != p.data() + p.size() || port == 0) return false;
  host.assign(a.substr(0, colon));
  return true;
}

std::string join_address(std::string_view host, std::int64_t port) {
  return std::string(host) + ":" + std::to_string(port);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool serves_any(const std::vector<std::string>& owners) {
  return std::any_of(owners.begin(), owners.end(), [](const std::string& a) { return !a.empty(); });
}

}  // namespace

void check_cluster_options(const redis_options& o) {
  const auto& c = o.cluster;
  if (c.seeds.empty()) return;
  if (!o.sentinel.sentinels.empty())
    throw std::invalid_argument(
        "chronopool::durable: redis_options.cluster.seeds and redis_options.sentinel.sentinels are both set: "
        "a Redis Cluster fails over by itself, choose one");
  if (c.max_redirects == 0)
    throw std::invalid_argument("chronopool::durable: redis_options.cluster.max_redirects must be at least 1, not 0");
  for (std::size_t i = 0; i < c.seeds.size(); ++i) {
    const auto& s = c.seeds[i];
    if (s.host.empty() || s.port == 0)
      throw std::invalid_argument("chronopool::durable: redis_options.cluster.seeds[" + std::to_string(i) + "] \"" +
                                  s.host + ":" + std::to_string(s.port) + "\" needs a host and a port other than 0");
  }
}

bool parse_cluster_slots(const redis_value& v, const std::string& asked_host, std::vector<std::string>& owners) {
  if (!v.is_array()) return false;
  owners.assign(cluster_slots, std::string());
  // Each entry: start, end, then the master [host, port, id, ...], then replicas.
  for (const auto& range : v.elements) {
    if (!range.is_array() || range.elements.size() < 3) return false;
    const auto& first = range.elements[0];
    const auto& last = range.elements[1];
    const auto& master = range.elements[2];
    if (!first.is_integer() || !last.is_integer() || !master.is_array() || master.elements.size() < 2 ||
        !master.elements[0].is_text() || !master.elements[1].is_integer())
      return false;
    if (first.integer < 0 || last.integer < first.integer || last.integer >= cluster_slots) return false;
    const auto host = master.elements[0].text();
    const auto port = master.elements[1].integer;
    if (port <= 0 || port > 65535) return false;
    const auto address = join_address(host.empty() || host == "?" ? std::string_view(asked_host) : host, port);
    for (auto s = first.integer; s <= last.integer; ++s) owners[static_cast<std::size_t>(s)] = address;
  }
  return true;
}

bool parse_redirection(std::string_view text, bool& ask, std::uint16_t& slot, std::string& address) {
  if (starts_with(text, "MOVED "))
    ask = false;
  else if (starts_with(text, "ASK "))
    ask = true;
  else
    return false;
  text.remove_prefix(ask ? std::size_t{4} : std::size_t{6});
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + space, slot);
  if (ec != std::errc{} || end != text.data() + space || slot >= cluster_slots) return false;
  std::string host;
  std::uint16_t port = 0;
  if (!split_address(text.substr(space + 1), host, port)) return false;
  address = join_address(host, port);
  return true;
}

cluster_client::cluster_client(redis_connection::executor_type ex, redis_options o)
    : ex_(std::move(ex)), options_(std::move(o)) {
  check_cluster_options(options_);
  if (options_.cluster.seeds.empty())
    throw std::invalid_argument("chronopool::durable: redis_options.cluster.seeds is empty");
}

redis_options cluster_client::node_options(const std::string& address) const {
  redis_options n = options_;
  n.cluster.seeds.clear();
  if (!split_address(address, n.host, n.port)) throw std::invalid_argument("bad node address " + address);
  return n;
}

// ---- connect ---------------------------------------------------------------

void cluster_client::connect(connect_handler h) {
  // A node lost while idle shows only in is_open(): close the rest first,
  // as a lost single connection would be closed already.
  if (state_ == state::open && !is_open()) close(make_error_code(error::connection_lost));
  if (state_ != state::closed) {
    asio::post(ex_, asio::append(std::move(h), state_ == state::open ? error_code(asio::error::already_connected)
                                                                    : error_code(asio::error::already_started)));
    return;
  }
  connect_work_ = asio::prefer(asio::get_associated_executor(h, ex_), asio::execution::outstanding_work.tracked);
  connect_handler_.swap(h);  // not move assignment: see redis_connection.cpp
  state_ = state::connecting;
  discover(0, {});
}

// Asks the seeds in order for the slot map; the first usable answer wins.
void cluster_client::discover(std::size_t i, std::string failures) {
  if (i == options_.cluster.seeds.size()) {
    // Every seed refused us the same way (a wrong password, a certificate
    // refused): that refusal, with its text, says what to fix.
    const bool refused = seed_error_ == error::auth_failed || seed_error_ == error::tls_failed;
    close(seed_errors_agree_ && refused ? seed_error_
                                        : make_error_code(error::cluster_down, "no seed gave the slot map: " + failures));
    return;
  }
  if (i == 0) {
    seed_error_ = {};
    seed_errors_agree_ = true;
  }
  const auto& seed = options_.cluster.seeds[i];
  const auto address = join_address(seed.host, seed.port);
  probe_ = std::make_shared<redis_connection>(ex_, node_options(address));
  auto next = [self = shared_from_this(), gen = gen_, i, failures, address](error_code ec, const std::string& why) {
    if (gen != self->gen_) return;
    self->probe_->close();
    if (i == 0) self->seed_error_ = ec;
    if (ec != self->seed_error_ || !ec) self->seed_errors_agree_ = false;
    self->discover(i + 1, failures + (failures.empty() ? "" : "; ") + address + ": " + why);
  };
  probe_->async_connect([self = shared_from_this(), gen = gen_, next, host = seed.host](error_code ec) {
    if (gen != self->gen_) return;
    if (ec) {
      next(ec, ec.message());
      return;
    }
    self->probe_->async_execute({"CLUSTER", "SLOTS"}, [self, gen, next, host](error_code ec2, redis_value v) {
      if (gen != self->gen_) return;
      std::vector<std::string> owners;
      if (ec2 || v.is_error() || !parse_cluster_slots(v, host, owners)) {
        next(ec2, ec2 ? ec2.message() : v.is_error() ? v.str : std::string("CLUSTER SLOTS answered no slot map"));
        return;
      }
      if (!serves_any(owners)) {
        next({}, "no slot is served yet");
        return;
      }
      self->probe_->close();
      self->owners_ = std::move(owners);
      self->connect_masters();
    });
  });
}

// Connects to every master of the map (and sets each up): every one of them
// needs the node setup (the scheduler's function library) before any command.
void cluster_client::connect_masters() {
  std::vector<std::string> masters(owners_);
  std::sort(masters.begin(), masters.end());
  masters.erase(std::unique(masters.begin(), masters.end()), masters.end());
  masters.erase(std::remove(masters.begin(), masters.end(), std::string()), masters.end());
  nodes_pending_ = masters.size();
  for (const auto& m : masters) ensure_node(m);
}

cluster_client::node_ptr cluster_client::ensure_node(const std::string& address) {
  if (auto it = nodes_.find(address); it != nodes_.end()) return it->second;
  auto n = std::make_shared<node>();
  n->address = address;
  n->conn = std::make_shared<redis_connection>(ex_, node_options(address));
  if (push_) n->conn->set_push_handler(forward_pushes());
  nodes_.emplace(address, n);
  n->conn->async_connect([self = shared_from_this(), gen = gen_, n](error_code ec) {
    if (gen != self->gen_) return;
    if (ec) {
      self->close(ec);
      return;
    }
    n->connected = true;
    self->run_setup(n);
  });
  return n;
}

void cluster_client::run_setup(const node_ptr& n) {
  n->ready = false;
  if (!setup_) {
    node_ready(n);
    return;
  }
  setup_(n->conn, [self = shared_from_this(), gen = gen_, n](error_code ec) {
    if (gen != self->gen_) return;
    if (ec) {
      self->close(ec);
      return;
    }
    self->node_ready(n);
  });
}

void cluster_client::node_ready(const node_ptr& n) {
  n->ready = true;
  auto waiting = std::move(n->waiting);
  n->waiting.clear();
  for (auto& c : waiting) transmit(n, c);
  if (state_ == state::connecting && --nodes_pending_ == 0) {
    state_ = state::open;
    auto h = std::move(connect_handler_);
    connect_handler_ = nullptr;
    asio::post(ex_, asio::append(std::move(h), error_code{}));
    connect_work_ = {};
  }
}

// ---- commands ----------------------------------------------------------------

void cluster_client::execute(std::vector<std::string> args, reply_handler h) {
  if (state_ != state::open || args.empty()) {
    // An empty command would get no reply at all (see redis_connection.cpp).
    asio::post(ex_, asio::append(std::move(h),
                                 state_ != state::open ? error_code(error::not_connected)
                                                       : error_code(asio::error::invalid_argument),
                                 redis_value{}));
    return;
  }
  auto c = std::make_shared<command>();
  c->seq = next_seq_++;
  if (const auto key = routing_key(args)) c->slot = key_slot(*key);
  c->args = std::move(args);
  c->work = asio::prefer(asio::get_associated_executor(h, ex_), asio::execution::outstanding_work.tracked);
  c->handler.swap(h);
  outstanding_.emplace(c->seq, c);
  if (holding_) {
    held_.push_back(std::move(c));
    return;
  }
  send(std::move(c));
}

std::string cluster_client::any_master() const {
  // The same master every time while the map holds: the one serving the
  // lowest slot that is served.
  for (const auto& a : owners_)
    if (!a.empty()) return a;
  return {};
}

void cluster_client::send(command_ptr c) {
  const std::string address = !c->ask.empty() ? c->ask
                              : c->slot >= 0  ? owners_[static_cast<std::size_t>(c->slot)]
                                              : any_master();
  if (address.empty()) {
    finish(c, make_error_code(error::cluster_down, "no master serves hash slot " + std::to_string(c->slot)), {});
    return;
  }
  auto n = ensure_node(address);
  ++in_flight_;
  if (!n->ready) {
    n->waiting.push_back(std::move(c));
    return;
  }
  transmit(n, c);
}

void cluster_client::transmit(const node_ptr& n, const command_ptr& c) {
  if (!c->ask.empty()) {
    // ASKING lets the next command on this connection reach the importing
    // node once; its own reply ("OK") tells nothing.
    c->ask.clear();
    n->conn->async_execute({"ASKING"}, [](error_code, redis_value) {});
  }
  n->conn->async_execute(c->args, [self = shared_from_this(), gen = gen_, n, c](error_code ec, redis_value v) {
    self->on_reply(gen, n, c, ec, std::move(v));
  });
}

void cluster_client::on_reply(std::uint64_t gen, const node_ptr& n, const command_ptr& c, error_code ec,
                              redis_value v) {
  if (gen != gen_) return;  // closed meanwhile: c has been completed
  --in_flight_;
  if (ec) {
    // A node's connection failed: the whole client closes, as one
    // connection would, and the next connect reads the map again.
    close(ec == asio::error::operation_aborted ? make_error_code(error::connection_lost) : ec);
    return;
  }
  if (v.is_error()) {
    bool ask = false;
    std::uint16_t slot = 0;
    std::string address;
    if (parse_redirection(v.text(), ask, slot, address)) {
      if (c->redirects >= options_.cluster.max_redirects) {
        finish(c, make_error_code(error::too_many_redirects, v.str), {});
        release_if_quiet();
        return;
      }
      ++c->redirects;
      if (ask) {
        c->ask = address;  // this command only; the map stays
      } else {
        moved_.emplace_back(slot, address);
        refresh_wanted_ = true;
      }
      hold(c);
      return;
    }
    // A master that lacks the functions its setup loads (flushed, or new
    // since the connect): set it up again and send the command once more.
    if (setup_ && !c->reloaded && starts_with(v.text(), "ERR Function not found")) {
      c->reloaded = true;
      if (n->ready && nodes_.count(n->address) != 0) run_setup(n);
      hold(c);
      return;
    }
  }
  finish(c, {}, std::move(v));
  release_if_quiet();
}

void cluster_client::hold(command_ptr c) {
  holding_ = true;
  held_.push_back(std::move(c));
  release_if_quiet();
}

// Once nothing is in flight: applies what the redirections taught (and a
// refreshed map), then sends the held commands in the order they were
// executed.
void cluster_client::release_if_quiet() {
  if (!holding_ || in_flight_ != 0 || refreshing_) return;
  if (refresh_wanted_) {
    refresh();
    return;
  }
  for (const auto& [slot, address] : moved_) owners_[slot] = address;
  moved_.clear();
  if (!refreshed_.empty()) owners_ = std::move(refreshed_);
  refreshed_.clear();
  holding_ = false;
  auto held = std::move(held_);
  held_.clear();
  std::sort(held.begin(), held.end(), [](const command_ptr& a, const command_ptr& b) { return a->seq < b->seq; });
  for (auto& c : held) send(std::move(c));
}

// After a -MOVED: the whole map from a connected master, since a resharding
// or a failover moves more than the one slot seen. Best effort: without an
// answer the -MOVED replies alone are applied.
void cluster_client::refresh() {
  refresh_wanted_ = false;
  node_ptr asked;
  const std::string preferred = moved_.empty() ? std::string() : moved_.back().second;
  for (const auto& [address, n] : nodes_) {
    if (!n->connected || !n->conn->is_open()) continue;
    if (!asked || address == preferred) asked = n;
  }
  std::string host;
  std::uint16_t port = 0;
  if (!asked || !split_address(asked->address, host, port)) {
    release_if_quiet();
    return;
  }
  refreshing_ = true;
  asked->conn->async_execute({"CLUSTER", "SLOTS"}, [self = shared_from_this(), gen = gen_, host](error_code ec,
                                                                                                  redis_value v) {
    if (gen != self->gen_) return;
    self->refreshing_ = false;
    std::vector<std::string> owners;
    // A node that serves no slot at all (it is being reset, or lost its
    // view) is no better guide than the -MOVED replies: keep the map.
    if (!ec && parse_cluster_slots(v, host, owners) && serves_any(owners)) self->refreshed_ = std::move(owners);
    self->release_if_quiet();
  });
}

void cluster_client::finish(const command_ptr& c, error_code ec, redis_value v) {
  if (outstanding_.erase(c->seq) == 0) return;
  asio::post(ex_, asio::append(std::move(c->handler), ec, std::move(v)));
  c->work = {};  // after post, which holds its own work
}

// ---- pub/sub, closing ----------------------------------------------------------

void cluster_client::set_push_handler(push_handler h) {
  push_ = h ? std::make_shared<push_handler>(std::move(h)) : nullptr;
  // Only with a handler: a node connection with one takes every reply
  // shaped like a message (e.g. an LRANGE of ["message", ...]) for a push.
  for (auto& [address, n] : nodes_) n->conn->set_push_handler(push_ ? forward_pushes() : nullptr);
}

// Pub/sub messages from whichever node is subscribed, to push_.
cluster_client::push_handler cluster_client::forward_pushes() {
  return [weak = weak_from_this()](redis_value v) {
    auto self = weak.lock();
    if (!self || !self->push_) return;
    auto h = self->push_;  // a copy: the handler may replace itself
    (*h)(std::move(v));
  };
}

bool cluster_client::is_open() const noexcept {
  if (state_ != state::open) return false;
  return std::all_of(nodes_.begin(), nodes_.end(),
                     [](const auto& e) { return !e.second->connected || e.second->conn->is_open(); });
}

void cluster_client::close(error_code ec) {
  ++gen_;
  state_ = state::closed;
  if (probe_) probe_->close();
  probe_.reset();
  auto nodes = std::move(nodes_);
  nodes_.clear();
  for (auto& [address, n] : nodes) n->conn->close();
  in_flight_ = nodes_pending_ = 0;
  holding_ = refresh_wanted_ = refreshing_ = false;
  moved_.clear();
  refreshed_.clear();
  held_.clear();
  auto outstanding = std::move(outstanding_);
  outstanding_.clear();
  for (auto& [seq, c] : outstanding) {
    asio::post(ex_, asio::append(std::move(c->handler), ec, redis_value{}));
    c->work = {};
  }
  if (connect_handler_) {
    auto h = std::move(connect_handler_);
    connect_handler_ = nullptr;
    asio::post(ex_, asio::append(std::move(h), ec));
    connect_work_ = {};
  }
}

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/error.hpp>

#include "redis_cluster.hpp"
#include "redis_sentinel.hpp"
#include "redis_tls.hpp"

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <utility>

namespace chronopool::durable::detail {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

struct reader_deleter {
  void operator()(redisReader* r) const noexcept { redisReaderFree(r); }
};
using reader_ptr = std::unique_ptr<redisReader, reader_deleter>;

struct reply_deleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

struct command_deleter {
  void operator()(char* c) const noexcept { redisFreeCommand(c); }
};

redis_value to_value(const redisReply& r) {
  redis_value v;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      v.type = redis_value::kind::string;
      v.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = redis_value::kind::status;
      v.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = redis_value::kind::error;
      v.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      v.type = redis_value::kind::integer;
      v.integer = static_cast<std::int64_t>(r.integer);
      break;
    case REDIS_REPLY_ARRAY:
      v.type = redis_value::kind::array;
      v.elements.reserve(r.elements);
      // hiredis bounds the nesting depth, so this recursion is bounded too.
      for (std::size_t i = 0; i < r.elements; ++i) v.elements.push_back(to_value(*r.element[i]));
      break;
    default:  // REDIS_REPLY_NIL (RESP2 has no other kinds)
      break;
  }
  return v;
}

// Appends the RESP encoding of args to out. hiredis formats; we only own
// the buffer.
void append_command(const std::vector<std::string>& args, std::string& out) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (args.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("redis command has too many arguments");
  char* raw = nullptr;
  const int n = redisFormatCommandArgv(&raw, static_cast<int>(args.size()), argv.data(), lens.data());
  std::unique_ptr<char, command_deleter> cmd(raw);
  if (n < 0 || !cmd) throw std::bad_alloc();
  out.append(cmd.get(), static_cast<std::size_t>(n));
}

bool is_push_message(const redis_value& v) {
  if (!v.is_array() || v.elements.empty() || !v.elements.front().is_text()) return false;
  const auto kind = v.elements.front().text();
  return kind == "message" || kind == "pmessage";
}

// Holds outstanding work on a completion handler's executor for as long as
// the operation is pending, so that e.g. an io_context running only that
// handler's executor does not run out of work and return early.
template <class Handler>
asio::any_completion_executor track_work(const Handler& h, const asio::any_io_executor& ex) {
  return asio::prefer(asio::get_associated_executor(h, ex), asio::execution::outstanding_work.tracked);
}

}  // namespace

struct redis_connection::impl : std::enable_shared_from_this<impl> {
  // Everything that belongs to one TCP connection. A reconnect makes a new
  // one, so operations still queued for the old socket (already cancelled,
  // but not yet run) can never act on the new socket, reader or buffers;
  // they hold their link and recognise themselves as stale by comparing it
  // with conn_.
  struct link {
    explicit link(const executor_type& ex)
        : resolver(ex), socket(ex), connect_timer(ex), request_timer(ex), reader(redisReaderCreate()) {
      if (!reader) throw std::bad_alloc();
    }
    tcp::resolver resolver;
    std::string host;  // connected to (Sentinel: the master named); TLS verifies it
    tcp::socket socket;
    std::optional<tls_stream> tls;  // over socket, when TLS is on; made after the TCP connect
    asio::steady_timer connect_timer;
    asio::steady_timer request_timer;
    reader_ptr reader;
    std::string pending;    // encoded commands waiting for the next async_write
    std::string in_flight;  // the buffer the current async_write is sending
    bool writing = false;
    bool request_timer_armed = false;
    std::array<char, 16 * 1024> read_buffer{};
  };

  struct request {
    reply_handler handler;  // a caller's request, completed through post
    // Internal requests (AUTH) are called directly and only with a reply;
    // when the connection goes down they are dropped, not called.
    std::function<void(redis_value)> internal;
    asio::any_completion_executor work;
    clock_type::time_point deadline;
  };

  enum class state { closed, connecting, open };

  impl(executor_type ex, redis_options opts)
      : ex_(std::move(ex)), options_(std::move(opts)), tls_context_(make_tls_context(options_)) {
    check_sentinel_options(options_);
    check_cluster_options(options_);
    if (!options_.sentinel.sentinels.empty()) sentinel_ = std::make_shared<sentinel_locator>(ex_, options_);
  }

  // Calls f with the stream the connection's bytes go through: the TLS
  // stream when TLS is on, else the socket.
  template <class F>
  static void with_stream(link& c, F&& f) {
    if (c.tls)
      f(*c.tls);
    else
      f(c.socket);
  }

  // ---- connect -----------------------------------------------------------

  void connect(connect_handler h) {
    if (state_ != state::closed) {
      post_connect_completion(std::move(h), state_ == state::open ? error_code(asio::error::already_connected)
                                                                  : error_code(asio::error::already_started));
      return;
    }
    auto c = std::make_shared<link>(ex_);
    connect_work_ = track_work(h, ex_);
    // swap, not move assignment: Boost 1.81's any_completion_handler move
    // assignment wraps the source in a new handler and recurses forever.
    connect_handler_.swap(h);
    conn_ = c;
    state_ = state::connecting;

    auto self = shared_from_this();
    c->connect_timer.expires_after(options_.connect_timeout);
    c->connect_timer.async_wait([self, c](error_code ec) {
      if (ec || self->conn_ != c || self->state_ != state::connecting) return;
      self->teardown(error::connect_timeout);
    });
    if (!sentinel_) {
      resolve(c, options_.host, options_.port);
      return;
    }
    // A new master announced: this connection is to the old one.
    sentinel_->on_switch([weak = weak_from_this()] {
      if (auto s = weak.lock(); s && s->state_ != state::closed) s->teardown(error::connection_lost);
    });
    sentinel_->locate([self, c](error_code ec, std::string host, std::uint16_t port) {
      if (self->conn_ != c) return;
      if (ec) {
        self->teardown(ec);
        return;
      }
      self->resolve(c, std::move(host), port);
    });
  }

  void resolve(const std::shared_ptr<link>& c, std::string host, std::uint16_t port) {
    auto self = shared_from_this();
    c->host = std::move(host);
    c->resolver.async_resolve(
        c->host, std::to_string(port),
        [self, c](error_code ec, const tcp::resolver::results_type& endpoints) {
          if (self->conn_ != c) return;
          if (ec) {
            self->teardown(ec);
            return;
          }
          asio::async_connect(c->socket, endpoints, [self, c](error_code ec2, const tcp::endpoint&) {
            if (self->conn_ != c) return;
            if (ec2) {
              self->teardown(ec2);
              return;
            }
            self->on_tcp_connected(c);
          });
        });
  }

  void on_tcp_connected(const std::shared_ptr<link>& c) {
    // Commands are small and latency matters more than packet count; we
    // coalesce pipelined commands into one write ourselves.
    error_code ignored;
    c->socket.set_option(tcp::no_delay(true), ignored);
    if (!tls_context_) {
      on_transport_ready(c);
      return;
    }
    // The connect timer covers the handshake too.
    c->tls.emplace(c->socket, *tls_context_);
    if (auto ec = prepare_tls_stream(*c->tls, options_.tls, c->host)) {
      teardown(tls_failure(ec, *c->tls));
      return;
    }
    c->tls->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this(), c](error_code ec) {
      if (self->conn_ != c) return;
      if (ec) {
        self->teardown(is_tls_error(ec) ? tls_failure(ec, *c->tls) : ec);
        return;
      }
      self->on_transport_ready(c);
    });
  }

  // TCP is connected (and TLS established): AUTH, when configured.
  void on_transport_ready(const std::shared_ptr<link>& c) {
    start_read(c);
    if (options_.password.empty()) {
      authenticated();
      return;
    }
    std::vector<std::string> auth{"AUTH"};
    if (!options_.username.empty()) auth.push_back(options_.username);
    auth.push_back(options_.password);
    request r;
    r.internal = [this](redis_value v) {
      // Redis's text is kept ("WRONGPASS invalid username-password pair
      // ..."): Redis words these replies itself and never echoes the
      // password, and without it an operator cannot tell a wrong password
      // from a disabled user.
      if (v.is_error()) {
        teardown(make_error_code(error::auth_failed, v.str));
        return;
      }
      authenticated();
    };
    // The connect timer covers AUTH; the request timer ignores it.
    r.deadline = clock_type::time_point::max();
    enqueue(auth, std::move(r));
  }

  // Sentinel: the server named must say it is the master; a sentinel may
  // not have noticed a failover yet.
  void authenticated() {
    if (!sentinel_) {
      connected();
      return;
    }
    request r;
    r.internal = [this](redis_value v) {
      const bool master = v.is_array() && !v.elements.empty() && v.elements.front().is_text() &&
                          v.elements.front().text() == "master";
      if (!master) {
        teardown(v.is_error() ? make_error_code(error::no_master, v.str) : make_error_code(error::no_master));
        return;
      }
      connected();
    };
    r.deadline = clock_type::time_point::max();  // under the connect timer, as AUTH
    enqueue({"ROLE"}, std::move(r));
  }

  void connected() {
    state_ = state::open;
    conn_->connect_timer.cancel();
    complete_connect(error_code{});
  }

  void complete_connect(error_code ec) {
    if (!connect_handler_) return;
    auto h = std::move(connect_handler_);
    connect_handler_ = nullptr;
    post_connect_completion(std::move(h), ec);
    connect_work_ = {};  // after post, which holds its own work
  }

  void post_connect_completion(connect_handler h, error_code ec) {
    // Posted to our executor (any_completion_executor cannot be required
    // to be non-blocking in Boost 1.81); post() then hands the handler to
    // its associated executor, keeping work there until it has run.
    asio::post(ex_, asio::append(std::move(h), ec));
  }

  // ---- requests ----------------------------------------------------------

  void execute(std::vector<std::string> args, reply_handler h) {
    if (state_ != state::open || args.empty()) {
      // An empty command would be encoded as "*0\r\n", which Redis answers
      // with nothing at all: the pipeline would be off by one from then on.
      post_reply(std::move(h), state_ != state::open ? error_code(error::not_connected)
                                                     : error_code(asio::error::invalid_argument),
                 redis_value{});
      return;
    }
    request r;
    r.work = track_work(h, ex_);
    r.handler.swap(h);  // not move assignment: see connect()
    r.deadline = clock_type::now() + options_.request_timeout;
    enqueue(args, std::move(r));
  }

  void enqueue(const std::vector<std::string>& args, request r) {
    const auto& c = conn_;
    append_command(args, c->pending);
    requests_.push_back(std::move(r));
    arm_request_timer(c);
    start_write(c);
  }

  void post_reply(reply_handler h, error_code ec, redis_value v) {
    asio::post(ex_, asio::append(std::move(h), ec, std::move(v)));  // see post_connect_completion
  }

  // ---- writing -----------------------------------------------------------

  void start_write(const std::shared_ptr<link>& c) {
    // Only one async_write at a time; commands queued meanwhile go into
    // c->pending and leave together in the next write.
    if (c->writing || c->pending.empty()) return;
    c->in_flight.swap(c->pending);
    c->pending.clear();
    c->writing = true;
    with_stream(*c, [&](auto& stream) {
      asio::async_write(stream, asio::buffer(c->in_flight), [self = shared_from_this(), c](error_code ec, std::size_t) {
        c->writing = false;
        if (self->conn_ != c) return;
        if (ec) {
          self->teardown(self->transport_failure(*c, ec));
          return;
        }
        c->in_flight.clear();
        self->start_write(c);
      });
    });
  }

  // A read or write failed: the connection was lost, or (TLS) OpenSSL
  // ended it, e.g. the server wants a client certificate (TLS 1.3 says so
  // only after the handshake) — then its text says why.
  error_code transport_failure(link& c, const error_code& ec) {
    if (c.tls && is_tls_error(ec)) return tls_failure(ec, *c.tls);
    return error::connection_lost;
  }

  // ---- reading -----------------------------------------------------------

  void start_read(const std::shared_ptr<link>& c) {
    with_stream(*c, [&](auto& stream) {
      stream.async_read_some(asio::buffer(c->read_buffer), [self = shared_from_this(), c](error_code ec, std::size_t n) {
        if (self->conn_ != c) return;
        if (ec) {  // EOF included
          self->teardown(self->transport_failure(*c, ec));
          return;
        }
        self->on_data(c, n);
      });
    });
  }

  void on_data(const std::shared_ptr<link>& c, std::size_t n) {
    if (redisReaderFeed(c->reader.get(), c->read_buffer.data(), n) != REDIS_OK) {
      teardown(error::protocol_error);
      return;
    }
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(c->reader.get(), &raw) != REDIS_OK) {
        teardown(error::protocol_error);
        return;
      }
      if (raw == nullptr) break;  // need more bytes
      redis_value v;
      {
        reply_ptr reply(static_cast<redisReply*>(raw));
        v = to_value(*reply);
      }
      on_reply(c, std::move(v));
      // The reply may have closed the connection (AUTH refused, a push
      // handler calling close()): then the rest of the buffer is not ours.
      if (conn_ != c) return;
    }
    start_read(c);
  }

  void on_reply(const std::shared_ptr<link>& c, redis_value v) {
    if (push_ && is_push_message(v)) {
      // A copy, so that the push handler may replace itself safely.
      auto h = push_;
      (*h)(std::move(v));
      return;
    }
    if (sentinel_ && v.is_error() && v.text().starts_with("READONLY")) {
      // Sentinel: this master was demoted under us. Everything outstanding
      // fails as a lost connection, and the next connect asks the sentinels.
      teardown(error::connection_lost);
      return;
    }
    if (requests_.empty()) {  // a reply nobody asked for: we are out of step
      teardown(error::protocol_error);
      return;
    }
    request r = std::move(requests_.front());
    requests_.pop_front();
    if (requests_.empty() && c->request_timer_armed) {
      // Nothing left to time out: do not keep a timer (and the executor) busy.
      c->request_timer_armed = false;
      c->request_timer.cancel();
    }
    if (r.internal) {
      r.internal(std::move(v));
    } else {
      post_reply(std::move(r.handler), error_code{}, std::move(v));
    }
  }

  // ---- request timeout ---------------------------------------------------

  // One timer for the oldest request. Deadlines grow along the FIFO, so
  // when it fires early for a request already answered it simply re-arms
  // for the new front instead of being reset on every reply.
  void arm_request_timer(const std::shared_ptr<link>& c) {
    if (c->request_timer_armed || requests_.empty()) return;
    const auto deadline = requests_.front().deadline;
    if (deadline == clock_type::time_point::max()) return;
    c->request_timer_armed = true;
    c->request_timer.expires_at(deadline);
    c->request_timer.async_wait([self = shared_from_this(), c](error_code ec) {
      // Cancelled: whoever cancelled it has updated request_timer_armed.
      if (ec || self->conn_ != c) return;
      c->request_timer_armed = false;
      if (self->requests_.empty()) return;
      if (self->requests_.front().deadline <= clock_type::now()) {
        // A pipeline cannot drop one reply and go on: give up on all.
        self->teardown(error::request_timeout);
        return;
      }
      self->arm_request_timer(c);
    });
  }

  // ---- closing -----------------------------------------------------------

  // Closes the current connection (if any) and completes everything
  // outstanding with ec. Handlers are posted, never called from here.
  void teardown(error_code ec) {
    auto c = std::move(conn_);
    conn_.reset();
    state_ = state::closed;
    if (c) {
      error_code ignored;
      c->resolver.cancel();
      c->connect_timer.cancel();
      c->request_timer.cancel();
      c->request_timer_armed = false;
      c->socket.close(ignored);
      // The reader and buffers stay with c, which dies with the last
      // operation that still refers to it.
    }
    auto requests = std::move(requests_);
    requests_.clear();
    for (auto& r : requests) {
      if (r.handler) post_reply(std::move(r.handler), ec, redis_value{});
    }
    complete_connect(ec);
  }

  executor_type ex_;
  redis_options options_;
  std::shared_ptr<asio::ssl::context> tls_context_;  // null: plain TCP
  std::shared_ptr<sentinel_locator> sentinel_;       // null: no Sentinel
  state state_ = state::closed;
  std::shared_ptr<link> conn_;
  std::deque<request> requests_;
  connect_handler connect_handler_;
  asio::any_completion_executor connect_work_;
  std::shared_ptr<push_handler> push_;
};

redis_connection::redis_connection(executor_type ex, redis_options options)
    : impl_(std::make_shared<impl>(std::move(ex), std::move(options))) {
  if (!impl_->options_.cluster.seeds.empty()) cluster_ = std::make_shared<cluster_client>(impl_->ex_, impl_->options_);
}

redis_connection::~redis_connection() {
  if (cluster_) {
    cluster_->set_push_handler(nullptr);
    cluster_->close(boost::asio::error::operation_aborted);
  }
  // Operations still queued hold impl_ alive; they find conn_ gone and do
  // nothing. The push handler may refer to the owner being destroyed.
  impl_->push_.reset();
  if (impl_->sentinel_) impl_->sentinel_->close();
  impl_->teardown(boost::asio::error::operation_aborted);
}

redis_connection::executor_type redis_connection::get_executor() const noexcept { return impl_->ex_; }

const redis_options& redis_connection::options() const noexcept { return impl_->options_; }

void redis_connection::set_push_handler(push_handler h) {
  if (cluster_) {
    cluster_->set_push_handler(std::move(h));
    return;
  }
  impl_->push_ = h ? std::make_shared<push_handler>(std::move(h)) : nullptr;
}

void redis_connection::set_node_setup(node_setup f) {
  if (cluster_) cluster_->set_node_setup(std::move(f));
}

void redis_connection::close() {
  if (cluster_) {
    cluster_->close(boost::asio::error::operation_aborted);
    return;
  }
  // The sentinel connections too: a subscribed one would otherwise keep the
  // executor busy after its owner is done.
  if (impl_->sentinel_) impl_->sentinel_->close();
  impl_->teardown(boost::asio::error::operation_aborted);
}

bool redis_connection::is_open() const noexcept {
  return cluster_ ? cluster_->is_open() : impl_->state_ == impl::state::open;
}

void redis_connection::initiate_connect(connect_handler h) {
  if (cluster_)
    cluster_->connect(std::move(h));
  else
    impl_->connect(std::move(h));
}

void redis_connection::initiate_execute(std::vector<std::string> args, reply_handler h) {
  if (cluster_)
    cluster_->execute(std::move(args), std::move(h));
  else
    impl_->execute(std::move(args), std::move(h));
}

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// redis_connection against a real Redis: the shared fixture server for most
// cases, an own server (common/redis_server.hpp) for AUTH and kill -9.
#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/error.hpp>

#include "connection_io.hpp"
#include "redis_server.hpp"
#include "regression_support.hpp"
#include "test_redis.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using boost::system::error_code;
using chronopool::durable::redis_options;
// Not `redis_connection`: that is the suite's name.
using connection = chronopool::durable::detail::redis_connection;
using chronopool::durable::detail::redis_value;
namespace dt = chronopool::durable::test;
using durable_error = chronopool::durable::error;
using dt::capture;
using dt::command;
using dt::connect;
using dt::execute;
using dt::outcome;
using dt::run_for;
using dt::run_until;
using dt::own_server_options;
using dt::own_server_redis_options;
using dt::wait_limit;

// Keys and channels private to this process: the fixture server is shared.
std::string unique_name(const std::string& what) {
  return "chronopool:test:redis_connection:" + what + ":" + std::to_string(::getpid());
}

// An error_code (printable by Boost.Test) for a durable error enumerator.
error_code code(durable_error e) { return make_error_code(e); }

bool is_text(const redis_value& v, std::string_view expected) { return v.is_text() && v.text() == expected; }

}  // namespace

BOOST_AUTO_TEST_SUITE(redis_connection)

BOOST_AUTO_TEST_CASE(connect_and_round_trip) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_TEST(!conn.is_open());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(conn.is_open());

  auto pong = command(ctx, conn, {"PING"});
  BOOST_TEST((pong.type == redis_value::kind::status));
  BOOST_TEST(pong.text() == "PONG");

  const auto key = unique_name("round_trip");
  auto ok = command(ctx, conn, {"SET", key, "value-1"});
  BOOST_TEST((ok.type == redis_value::kind::status));
  BOOST_TEST(ok.text() == "OK");
  auto got = command(ctx, conn, {"GET", key});
  BOOST_TEST((got.type == redis_value::kind::string));
  BOOST_TEST(got.text() == "value-1");
  auto deleted = command(ctx, conn, {"DEL", key});
  BOOST_TEST(deleted.is_integer());
  BOOST_TEST(deleted.integer == 1);
  BOOST_TEST(command(ctx, conn, {"GET", key}).is_nil());
}

BOOST_AUTO_TEST_CASE(arrays_nested_and_with_nil) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  const auto key = unique_name("arrays");
  command(ctx, conn, {"SET", key, "x"});
  auto mget = command(ctx, conn, {"MGET", key, key + ":missing"});
  BOOST_REQUIRE(mget.is_array());
  BOOST_REQUIRE_EQUAL(mget.elements.size(), 2u);
  BOOST_TEST(is_text(mget.elements[0], "x"));
  BOOST_TEST(mget.elements[1].is_nil());

  auto nested = command(ctx, conn, {"EVAL", "return {1, {2, 'two'}, 'three'}", "0"});
  BOOST_REQUIRE(nested.is_array());
  BOOST_REQUIRE_EQUAL(nested.elements.size(), 3u);
  BOOST_TEST(nested.elements[0].integer == 1);
  BOOST_REQUIRE(nested.elements[1].is_array());
  BOOST_REQUIRE_EQUAL(nested.elements[1].elements.size(), 2u);
  BOOST_TEST(nested.elements[1].elements[0].integer == 2);
  BOOST_TEST(is_text(nested.elements[1].elements[1], "two"));
  BOOST_TEST(is_text(nested.elements[2], "three"));
  command(ctx, conn, {"DEL", key});
}

BOOST_AUTO_TEST_CASE(error_reply_is_a_value_and_the_pipeline_goes_on) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  outcome bad, after;
  conn.async_execute({"NO-SUCH-COMMAND", "arg"}, capture(bad));
  conn.async_execute({"PING"}, capture(after));
  run_until(ctx, [&] { return bad.done && after.done; });
  BOOST_TEST(!bad.ec);
  BOOST_TEST(bad.value.is_error());
  BOOST_TEST(bad.value.text().starts_with("ERR"), "error text: " << bad.value.text());
  BOOST_TEST(!after.ec);
  BOOST_TEST(is_text(after.value, "PONG"));
  BOOST_TEST(conn.is_open());
}

BOOST_AUTO_TEST_CASE(thousand_pipelined_requests_complete_in_order) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  constexpr std::size_t n = 1000;
  std::vector<std::size_t> order;
  std::vector<outcome> results(n);
  for (std::size_t i = 0; i < n; ++i) {
    conn.async_execute({"ECHO", "payload-" + std::to_string(i)}, [&, i](error_code ec, redis_value v) {
      order.push_back(i);
      results[i].done = true;
      results[i].ec = ec;
      results[i].value = std::move(v);
    });
  }
  BOOST_TEST(order.empty());  // nothing completes inside async_execute
  run_until(ctx, [&] { return order.size() == n; });
  for (std::size_t i = 0; i < n; ++i) {
    BOOST_TEST_REQUIRE(order[i] == i);
    BOOST_TEST_REQUIRE(!results[i].ec);
    BOOST_TEST_REQUIRE(is_text(results[i].value, "payload-" + std::to_string(i)));
  }
}

BOOST_AUTO_TEST_CASE(binary_safe_payload) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  std::string payload("\0a\r\nb\r\n\0", 8);
  for (int i = 0; i < 256; ++i) payload.push_back(static_cast<char>(i));
  payload += "$5\r\n*1\r\n-ERR\r\n";  // RESP lookalikes must stay data
  const auto key = unique_name("binary") + std::string("\0\r\nkey", 6);

  BOOST_TEST(is_text(command(ctx, conn, {"SET", key, payload}), "OK"));
  auto got = command(ctx, conn, {"GET", key});
  BOOST_TEST((got.type == redis_value::kind::string));
  BOOST_TEST(got.str.size() == payload.size());
  BOOST_TEST((got.str == payload));
  BOOST_TEST(command(ctx, conn, {"STRLEN", key}).integer == static_cast<std::int64_t>(payload.size()));
  command(ctx, conn, {"DEL", key});
}

BOOST_AUTO_TEST_CASE(not_connected_before_connect_and_after_close) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  outcome before;
  conn.async_execute({"PING"}, capture(before));
  BOOST_TEST(!before.done);  // posted, not called from inside async_execute
  run_until(ctx, [&] { return before.done; });
  BOOST_TEST(before.ec == code(durable_error::not_connected));

  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  conn.close();
  BOOST_TEST(!conn.is_open());
  auto after = execute(ctx, conn, {"PING"});
  BOOST_TEST(after.ec == code(durable_error::not_connected));
}

BOOST_AUTO_TEST_CASE(empty_command_is_rejected) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  auto o = execute(ctx, conn, {});
  BOOST_TEST(o.ec == asio::error::invalid_argument);
  BOOST_TEST(is_text(command(ctx, conn, {"PING"}), "PONG"));  // still in step
}

BOOST_AUTO_TEST_CASE(connection_refused_is_reported) {
  asio::io_context ctx;
  redis_options opts;
  opts.port = dt::pick_free_port();  // nothing listens there
  connection conn(ctx.get_executor(), opts);
  std::optional<error_code> result;
  conn.async_connect([&](error_code ec) { result = ec; });
  BOOST_TEST(!result.has_value());
  run_until(ctx, [&] { return result.has_value(); });
  BOOST_TEST(*result == asio::error::connection_refused, "got " << result->message());
  BOOST_TEST(!conn.is_open());
}

BOOST_AUTO_TEST_CASE(connect_while_connecting_or_open) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  std::optional<error_code> first, second;
  conn.async_connect([&](error_code ec) { first = ec; });
  conn.async_connect([&](error_code ec) { second = ec; });
  run_until(ctx, [&] { return first && second; });
  BOOST_TEST(*first == error_code{});
  BOOST_TEST(*second == asio::error::already_started);
  BOOST_TEST(connect(ctx, conn) == asio::error::already_connected);
  BOOST_TEST(conn.is_open());
}

BOOST_AUTO_TEST_CASE(connect_timeout_when_auth_gets_no_answer) {
  // A listener that never accepts: the kernel completes the TCP handshake,
  // so only the (unanswered) AUTH can make connect time out.
  asio::io_context ctx;
  asio::ip::tcp::acceptor silent(ctx, {asio::ip::make_address("127.0.0.1"), 0});
  redis_options opts;
  opts.port = silent.local_endpoint().port();
  opts.password = "never-checked";
  opts.connect_timeout = 200ms;
  connection conn(ctx.get_executor(), opts);
  const auto start = std::chrono::steady_clock::now();
  BOOST_TEST(connect(ctx, conn) == code(durable_error::connect_timeout));
  BOOST_TEST((std::chrono::steady_clock::now() - start >= 190ms));
  BOOST_TEST(!conn.is_open());
}

BOOST_AUTO_TEST_CASE(garbage_from_the_server_is_a_protocol_error) {
  // A fake server that answers the first command with bytes that are not RESP.
  asio::io_context ctx;
  asio::ip::tcp::acceptor fake(ctx, {asio::ip::make_address("127.0.0.1"), 0});
  asio::ip::tcp::socket peer(ctx);
  std::array<char, 256> request_bytes{};
  static constexpr std::string_view garbage = "!this is not RESP\r\n";
  fake.async_accept(peer, [&](error_code ec) {
    BOOST_REQUIRE(!ec);
    peer.async_read_some(asio::buffer(request_bytes), [&](error_code ec2, std::size_t) {
      BOOST_REQUIRE(!ec2);
      asio::async_write(peer, asio::buffer(garbage), [](error_code, std::size_t) {});
    });
  });
  redis_options opts;
  opts.port = fake.local_endpoint().port();
  connection conn(ctx.get_executor(), opts);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  outcome first, second;
  conn.async_execute({"PING"}, capture(first));
  conn.async_execute({"PING"}, capture(second));
  run_until(ctx, [&] { return first.done && second.done; });
  BOOST_TEST(first.ec == code(durable_error::protocol_error));
  BOOST_TEST(second.ec == code(durable_error::protocol_error));
  BOOST_TEST(!conn.is_open());
}

BOOST_AUTO_TEST_CASE(request_timeout_fails_all_outstanding_and_reconnect_works) {
  asio::io_context ctx;
  auto opts = dt::test_redis_options();
  opts.request_timeout = 200ms;
  connection conn(ctx.get_executor(), opts);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  // BLPOP blocks only this connection (unlike CLIENT PAUSE or DEBUG SLEEP,
  // which would stall the shared server); the PINGs queue up behind it.
  outcome blocked, ping1, ping2;
  const auto start = std::chrono::steady_clock::now();
  conn.async_execute({"BLPOP", unique_name("never_pushed"), "3"}, capture(blocked));
  conn.async_execute({"PING"}, capture(ping1));
  conn.async_execute({"PING"}, capture(ping2));
  run_until(ctx, [&] { return blocked.done && ping1.done && ping2.done; });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(blocked.ec == code(durable_error::request_timeout));
  BOOST_TEST(ping1.ec == code(durable_error::request_timeout));
  BOOST_TEST(ping2.ec == code(durable_error::request_timeout));
  BOOST_TEST((elapsed >= 190ms));
  BOOST_TEST((elapsed < 2500ms));  // well before BLPOP's own 3 s
  BOOST_TEST(!conn.is_open());

  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(is_text(command(ctx, conn, {"PING"}), "PONG"));
}

BOOST_AUTO_TEST_CASE(answered_requests_do_not_time_out) {
  // The timer follows the oldest request: a steady stream of quick
  // requests over several timeout periods must not trip it.
  asio::io_context ctx;
  auto opts = dt::test_redis_options();
  opts.request_timeout = 400ms;  // generous: a loaded CI machine may delay one PING
  connection conn(ctx.get_executor(), opts);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    BOOST_TEST_REQUIRE(is_text(command(ctx, conn, {"PING"}), "PONG"));
    run_for(ctx, 20ms);
  }
  BOOST_TEST(conn.is_open());
}

BOOST_AUTO_TEST_CASE(connection_lost_when_server_killed_then_reconnect_after_restart) {
  dt::redis_server server(own_server_options());
  server.start();
  asio::io_context ctx;
  connection conn(ctx.get_executor(), own_server_redis_options(server));
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(is_text(command(ctx, conn, {"SET", "survives", "restart"}), "OK"));

  outcome blocked, ping;
  conn.async_execute({"BLPOP", "never_pushed", "10"}, capture(blocked));
  conn.async_execute({"PING"}, capture(ping));
  run_for(ctx, 50ms);  // let the commands reach the server
  server.kill9();
  run_until(ctx, [&] { return blocked.done && ping.done; });
  BOOST_TEST(blocked.ec == code(durable_error::connection_lost));
  BOOST_TEST(ping.ec == code(durable_error::connection_lost));
  BOOST_TEST(!conn.is_open());
  BOOST_TEST(execute(ctx, conn, {"PING"}).ec == code(durable_error::not_connected));

  const auto port = server.port();
  server.restart();
  BOOST_TEST(server.port() == port);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  // appendfsync always + same --dir: the write before kill -9 is back.
  BOOST_TEST(is_text(command(ctx, conn, {"GET", "survives"}), "restart"));
}

BOOST_AUTO_TEST_CASE(close_aborts_outstanding_requests) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});

  outcome blocked, ping;
  conn.async_execute({"BLPOP", unique_name("close"), "3"}, capture(blocked));
  conn.async_execute({"PING"}, capture(ping));
  run_for(ctx, 20ms);
  conn.close();
  BOOST_TEST(!conn.is_open());
  BOOST_TEST(!blocked.done);  // posted, not called from inside close()
  run_until(ctx, [&] { return blocked.done && ping.done; });
  BOOST_TEST(blocked.ec == asio::error::operation_aborted);
  BOOST_TEST(ping.ec == asio::error::operation_aborted);

  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(is_text(command(ctx, conn, {"PING"}), "PONG"));
}

BOOST_AUTO_TEST_CASE(destroying_with_requests_in_flight_is_safe) {
  asio::io_context ctx;
  auto conn = std::make_unique<connection>(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, *conn), error_code{});

  constexpr std::size_t n = 200;
  std::vector<outcome> results(n);
  for (std::size_t i = 0; i + 1 < n; ++i) conn->async_execute({"ECHO", std::string(100, 'x')}, capture(results[i]));
  conn->async_execute({"BLPOP", unique_name("destroy"), "3"}, capture(results[n - 1]));
  // Some answered, the rest in flight (the last one blocks).
  run_until(ctx, [&] { return results[0].done; });
  conn.reset();

  // Everything completes once, and the io_context runs out of work: no
  // handler or internal operation is left behind.
  if (ctx.stopped()) ctx.restart();
  ctx.run_for(wait_limit);
  BOOST_TEST(ctx.stopped());
  std::size_t aborted = 0;
  for (const auto& r : results) {
    BOOST_TEST_REQUIRE(r.done);
    if (r.ec == asio::error::operation_aborted) ++aborted;
    else BOOST_TEST_REQUIRE(!r.ec);
  }
  BOOST_TEST(aborted >= 1u);
  BOOST_TEST(results[n - 1].ec == asio::error::operation_aborted);
}

BOOST_AUTO_TEST_CASE(destroying_while_connecting_is_safe) {
  asio::io_context ctx;
  std::optional<error_code> result;
  {
    connection conn(ctx.get_executor(), dt::test_redis_options());
    conn.async_connect([&](error_code ec) { result = ec; });
  }
  ctx.run_for(wait_limit);
  BOOST_TEST(ctx.stopped());
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST(*result == asio::error::operation_aborted);
}

// ---- AUTH -------------------------------------------------------------------

namespace {

constexpr const char* server_password = "default-secret-7f3a";
constexpr const char* acl_user = "chronopool_acl_user";
constexpr const char* acl_password = "acl-secret-91bd";

// One password-protected server for all AUTH cases (started on first use).
dt::redis_server& auth_server() {
  static dt::redis_server server{[] {
    auto o = own_server_options();
    o.requirepass = server_password;
    o.acl_user = acl_user;
    o.acl_password = acl_password;
    return o;
  }()};
  if (!server.running()) server.start();
  return server;
}

}  // namespace

BOOST_AUTO_TEST_CASE(auth_with_password) {
  asio::io_context ctx;
  auto opts = own_server_redis_options(auth_server());
  opts.password = server_password;
  connection conn(ctx.get_executor(), opts);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(is_text(command(ctx, conn, {"PING"}), "PONG"));
  BOOST_TEST(is_text(command(ctx, conn, {"ACL", "WHOAMI"}), "default"));
}

BOOST_AUTO_TEST_CASE(auth_with_acl_user_and_password) {
  asio::io_context ctx;
  auto opts = own_server_redis_options(auth_server());
  opts.username = acl_user;
  opts.password = acl_password;
  connection conn(ctx.get_executor(), opts);
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});
  BOOST_TEST(is_text(command(ctx, conn, {"ACL", "WHOAMI"}), acl_user));
}

BOOST_AUTO_TEST_CASE(without_password_commands_get_noauth_replies) {
  asio::io_context ctx;
  connection conn(ctx.get_executor(), own_server_redis_options(auth_server()));
  BOOST_REQUIRE_EQUAL(connect(ctx, conn), error_code{});  // no AUTH sent
  auto reply = command(ctx, conn, {"GET", "anything"});
  BOOST_TEST(reply.is_error());
  BOOST_TEST(reply.text().starts_with("NOAUTH"), "reply: " << reply.text());
}

BOOST_AUTO_TEST_CASE(wrong_password_is_auth_failed_without_the_secret) {
  const std::string wrong = "wrong-secret-c0ffee";
  for (const std::string user : {"", acl_user}) {
    BOOST_TEST_CONTEXT("user '" << user << "'") {
      asio::io_context ctx;
      auto opts = own_server_redis_options(auth_server());
      opts.username = user;
      opts.password = wrong;
      connection conn(ctx.get_executor(), opts);
      const auto ec = connect(ctx, conn);
      BOOST_TEST(ec == code(durable_error::auth_failed));
      BOOST_TEST(!conn.is_open());
      BOOST_TEST(ec.message().find(wrong) == std::string::npos);
      BOOST_TEST(ec.what().find(wrong) == std::string::npos);
      BOOST_TEST(execute(ctx, conn, {"PING"}).ec == code(durable_error::not_connected));
    }
  }
}

// ---- pub/sub ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(pubsub_messages_go_to_the_push_handler) {
  asio::io_context ctx;
  connection sub(ctx.get_executor(), dt::test_redis_options());
  connection pub(ctx.get_executor(), dt::test_redis_options());
  BOOST_REQUIRE_EQUAL(connect(ctx, sub), error_code{});
  BOOST_REQUIRE_EQUAL(connect(ctx, pub), error_code{});

  std::vector<redis_value> pushed;
  sub.set_push_handler([&](redis_value v) { pushed.push_back(std::move(v)); });
  const auto channel = unique_name("channel");

  auto confirm = command(ctx, sub, {"SUBSCRIBE", channel});
  BOOST_REQUIRE(confirm.is_array());
  BOOST_REQUIRE_EQUAL(confirm.elements.size(), 3u);
  BOOST_TEST(is_text(confirm.elements[0], "subscribe"));
  BOOST_TEST(is_text(confirm.elements[1], channel));
  BOOST_TEST(confirm.elements[2].integer == 1);
  auto pconfirm = command(ctx, sub, {"PSUBSCRIBE", channel + ":*"});
  BOOST_REQUIRE(pconfirm.is_array());
  BOOST_TEST(is_text(pconfirm.elements[0], "psubscribe"));

  const std::string payload("hello\0\r\nworld", 13);
  auto receivers = command(ctx, pub, {"PUBLISH", channel, payload});
  BOOST_TEST(receivers.integer == 1);
  auto preceivers = command(ctx, pub, {"PUBLISH", channel + ":sub", "patterned"});
  BOOST_TEST(preceivers.integer == 1);
  run_until(ctx, [&] { return pushed.size() == 2; });

  BOOST_REQUIRE_EQUAL(pushed[0].elements.size(), 3u);
  BOOST_TEST(is_text(pushed[0].elements[0], "message"));
  BOOST_TEST(is_text(pushed[0].elements[1], channel));
  BOOST_TEST((pushed[0].elements[2].str == payload));
  BOOST_REQUIRE_EQUAL(pushed[1].elements.size(), 4u);
  BOOST_TEST(is_text(pushed[1].elements[0], "pmessage"));
  BOOST_TEST(is_text(pushed[1].elements[1], channel + ":*"));
  BOOST_TEST(is_text(pushed[1].elements[2], channel + ":sub"));
  BOOST_TEST(is_text(pushed[1].elements[3], "patterned"));

  // Requests on the subscribed connection still get their own replies.
  auto pong = command(ctx, sub, {"PING"});
  BOOST_TEST(pong.is_array());
  BOOST_TEST(is_text(pong.elements.at(0), "pong"));
}

// ---- executors ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(handlers_run_on_their_associated_executor) {
  asio::io_context conn_ctx;
  asio::io_context other_ctx;
  auto strand = asio::make_strand(other_ctx);
  connection conn(conn_ctx.get_executor(), dt::test_redis_options());

  std::atomic<bool> connected{false};
  bool connect_on_strand = false;
  std::atomic<bool> replied{false};
  bool reply_on_strand = false;
  std::thread::id reply_thread;
  error_code connect_ec, reply_ec;
  redis_value reply;

  conn.async_connect(asio::bind_executor(strand, [&](error_code ec) {
    connect_on_strand = strand.running_in_this_thread();
    connect_ec = ec;
    connected = true;
  }));
  // Started after the operation: other_ctx.run() only keeps going because
  // the pending operation counts as work on the handler's executor.
  std::thread other([&] { other_ctx.run(); });
  run_until(conn_ctx, [&] { return connected.load(); });
  other.join();
  BOOST_TEST(connect_on_strand);
  BOOST_REQUIRE_EQUAL(connect_ec, error_code{});

  other_ctx.restart();
  conn.async_execute({"PING"}, asio::bind_executor(strand, [&](error_code ec, redis_value v) {
                       reply_on_strand = strand.running_in_this_thread();
                       reply_thread = std::this_thread::get_id();
                       reply_ec = ec;
                       reply = std::move(v);
                       replied = true;
                     }));
  std::thread other2([&] { other_ctx.run(); });
  const auto other2_id = other2.get_id();
  run_until(conn_ctx, [&] { return replied.load(); });
  other2.join();
  BOOST_TEST(reply_on_strand);
  BOOST_TEST((reply_thread == other2_id));
  BOOST_TEST(!reply_ec);
  BOOST_TEST(is_text(reply, "PONG"));
}

BOOST_AUTO_TEST_SUITE_END()

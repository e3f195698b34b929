// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Issue 44: TLS to Redis. A redis-server of the test's own listens with TLS
// only (`--port 0 --tls-port P`) on loopback, with certificates the fixture
// makes with the openssl tool: schedules fire over it with an ACL user; a
// wrong CA, a name the certificate does not carry and a missing client
// certificate are refused as tls_failed with OpenSSL's reason, never with
// the password; unusable files are refused when the scheduler is made.
#include "regression_support.hpp"  // first: includes quiet_use_future.hpp

#include "tls_certificates.hpp"

#include <chronopool/log.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace cd = chronopool::durable;
namespace dt = chronopool::durable::test;
using namespace std::chrono_literals;
using dt::error_of;
using dt::fast_options;
using dt::wait_until;

namespace {

constexpr const char* acl_user = "chronopool_tls_user";
constexpr const char* acl_password = "tls-secret-9d2c";

// The certificates (made once for the whole suite: they take a moment).
const dt::tls_certificates& certificates() {
  static const dt::tls_certificates certs;
  return certs;
}

// A redis-server that speaks TLS only, with an ACL user.
struct tls_server {
  explicit tls_server(bool auth_clients) : server(options(auth_clients)) { server.start(); }

  static dt::redis_server_options options(bool auth_clients) {
    const auto& c = certificates();
    auto o = dt::own_server_options();
    o.acl_user = acl_user;
    o.acl_password = acl_password;
    o.port = dt::pick_free_port();
    // redis_server passes --port first; the later --port 0 turns plain TCP off.
    o.extra_args = {"--port", "0", "--tls-port", std::to_string(o.port), "--tls-cert-file", c.server_cert(),
                    "--tls-key-file", c.server_key(), "--tls-ca-cert-file", c.ca_file(), "--tls-auth-clients",
                    auth_clients ? "yes" : "no"};
    o.ready_probe = dt::tcp_accepts;
    return o;
  }

  // TLS on, the test CA, the ACL user: what a correct client sets.
  cd::redis_options client() const {
    cd::redis_options r;
    r.port = server.port();
    r.username = acl_user;
    r.password = acl_password;
    r.request_timeout = 3s;
    r.tls.enabled = true;
    r.tls.ca_file = certificates().ca_file();
    return r;
  }

  dt::redis_server server;
};

// Log records, copied on the scheduler's threads and checked by the test.
struct recorder {
  mutable std::mutex mutex;
  std::vector<std::string> events, messages;

  chronopool::log_handler handler() {
    return [this](const chronopool::log_record& r) {
      const std::lock_guard lock(mutex);
      events.emplace_back(r.event);
      messages.emplace_back(r.message);
    };
  }
  bool saw(const std::string& event) const {
    const std::lock_guard lock(mutex);
    for (const auto& e : events)
      if (e == event) return true;
    return false;
  }
  bool any_mentions(const std::string& text) const {
    const std::lock_guard lock(mutex);
    for (const auto& m : messages)
      if (m.find(text) != std::string::npos) return true;
    return false;
  }
};

// A scheduler that cannot get through TLS: every operation fails at once
// with tls_failed whose message carries `reason`, and says so without being
// asked, in connection_error() and in the log, never with the password.
void expect_refused(cd::scheduler_options o, chronopool::scheduled_thread_pool& pool, const std::string& reason) {
  recorder log;
  o.log_handler = log.handler();
  cd::scheduler s(pool.get_executor(), o);
  BOOST_TEST_REQUIRE(wait_until([&] { return s.connection_error() == make_error_code(cd::error::tls_failed); }),
                     s.connection_error().message());
  const auto t0 = std::chrono::steady_clock::now();
  const auto ec = error_of([&](auto h) { s.async_cancel("x", std::move(h)); });
  BOOST_TEST(ec == make_error_code(cd::error::tls_failed), ec.message());
  BOOST_TEST((std::chrono::steady_clock::now() - t0 < 2s));  // not a request_timeout's wait
  BOOST_TEST(ec.message().find(reason) != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("OpenSSL") != std::string::npos, ec.message());
  BOOST_TEST(ec.message().find("secret") == std::string::npos, ec.message());
  BOOST_TEST(wait_until([&] { return log.saw("tls_failed"); }));
  BOOST_TEST(log.any_mentions(reason));
  BOOST_TEST(!log.any_mentions("secret"));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(durable_tls, dt::pool_fixture)

BOOST_AUTO_TEST_CASE(schedules_fire_over_tls_with_an_acl_user) {
  tls_server tls(false);
  recorder log;
  auto o = fast_options(ns, tls.client());
  o.log_handler = log.handler();
  std::atomic<int> fired{0};
  cd::scheduler s(pool.get_executor(), o);
  s.register_handler("tick", [&](const cd::fire_context&) { ++fired; });
  s.start();
  const auto put = error_of([&](auto h) {
    s.async_schedule_at_fixed_rate("tls-every-50ms", "tick", "", 0ms, 50ms, cd::schedule_options{}, std::move(h));
  });
  BOOST_TEST_REQUIRE(!put, put.message());
  BOOST_TEST(wait_until([&] { return fired.load() >= 5; }), "fired " << fired.load() << " times");
  BOOST_TEST(!s.connection_error());
  BOOST_TEST(!log.any_mentions("secret"));
  s.stop();
  BOOST_TEST(s.stats().acked >= 5u);
}

BOOST_AUTO_TEST_CASE(a_wrong_ca_is_refused_as_tls_failed_with_the_reason) {
  tls_server tls(false);
  auto r = tls.client();
  r.tls.ca_file = certificates().wrong_ca_file();
  expect_refused(fast_options(ns, r), pool, "certificate verify failed");
}

BOOST_AUTO_TEST_CASE(a_name_the_certificate_does_not_carry_is_refused) {
  tls_server tls(false);
  auto r = tls.client();
  r.tls.server_name = "redis.example.org";  // the certificate has localhost and 127.0.0.1
  expect_refused(fast_options(ns, r), pool, "hostname mismatch");
  // The names it does carry pass; by default the host is the name checked.
  for (const char* name : {"localhost", ""}) {
    BOOST_TEST_CONTEXT("server_name '" << name << "'") {
      auto ok = tls.client();
      ok.tls.server_name = name;
      cd::scheduler s(pool.get_executor(), fast_options(ns, ok));
      const auto ec = error_of([&](auto h) { s.async_cancel("x", std::move(h)); });
      BOOST_TEST(!ec, ec.message());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_server_that_wants_client_certificates_takes_ours_and_refuses_none) {
  tls_server tls(true);
  auto with_cert = tls.client();
  with_cert.tls.cert_file = certificates().client_cert();
  with_cert.tls.key_file = certificates().client_key();
  {
    std::atomic<int> fired{0};
    cd::scheduler s(pool.get_executor(), fast_options(ns, with_cert));
    s.register_handler("tick", [&](const cd::fire_context&) { ++fired; });
    s.start();
    const auto put = error_of([&](auto h) { s.async_schedule("tls-once", "tick", "", 0ms, std::move(h)); });
    BOOST_TEST_REQUIRE(!put, put.message());
    BOOST_TEST(wait_until([&] { return fired.load() == 1; }));
  }
  // TLS 1.3 tells a client without a certificate only after its handshake,
  // on the first read: still tls_failed, with the alert's text.
  expect_refused(fast_options(ns, tls.client()), pool, "certificate required");
}

BOOST_AUTO_TEST_CASE(unusable_tls_files_are_refused_naming_the_option_and_file) {
  const auto refusal = [&](cd::redis_options r) { return dt::construction_refusal(pool, ns, std::move(r)); };
  cd::redis_options base;
  base.tls.enabled = true;
  base.tls.ca_file = certificates().ca_file();
  {
    auto r = base;
    r.tls.ca_file = "/nonexistent/chronopool-ca.pem";
    const auto what = refusal(r);
    BOOST_TEST(what.find("redis_options.tls.ca_file") != std::string::npos, what);
    BOOST_TEST(what.find("/nonexistent/chronopool-ca.pem") != std::string::npos, what);
  }
  {
    auto r = base;
    r.tls.ca_dir = "/nonexistent/chronopool-ca-dir";
    r.tls.cert_file = certificates().client_cert();
    const auto what = refusal(r);
    BOOST_TEST(what.find("cert_file and key_file go together") != std::string::npos, what);
  }
  {
    auto r = base;
    r.tls.cert_file = certificates().server_cert();
    r.tls.key_file = certificates().client_key();  // not this certificate's key
    const auto what = refusal(r);
    BOOST_TEST(what.find("redis_options.tls.key_file") != std::string::npos, what);
    BOOST_TEST(what.find(certificates().client_key()) != std::string::npos, what);
  }
  {
    auto r = base;
    r.tls.cert_file = certificates().dir().string() + "/missing.crt";
    r.tls.key_file = certificates().client_key();
    const auto what = refusal(r);
    BOOST_TEST(what.find("redis_options.tls.cert_file") != std::string::npos, what);
  }
  // Off, the TLS members are not looked at.
  auto off = base;
  off.tls.enabled = false;
  off.tls.ca_file = "/nonexistent/chronopool-ca.pem";
  off.port = 1;  // never connected to: the scheduler is dropped at once
  BOOST_TEST(refusal(off) == "(accepted)");
}

BOOST_AUTO_TEST_SUITE_END()

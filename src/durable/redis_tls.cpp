// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "redis_tls.hpp"

#include <chronopool/durable/error.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <stdexcept>
#include <string>

namespace chronopool::durable::detail {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using boost::system::error_code;

// A file option that OpenSSL refused: the option's name, the file and
// OpenSSL's reason. File names are not secrets; nothing of the key is shown.
[[noreturn]] void refuse(const char* option, const std::string& value, const error_code& ec) {
  throw std::invalid_argument("chronopool::durable: redis_options.tls." + std::string(option) + " \"" + value +
                              "\" cannot be used: " + ec.message());
}

bool is_ip_address(const std::string& name) {
  error_code ec;
  asio::ip::make_address(name, ec);
  return !ec;
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const redis_options& o) {
  const auto& t = o.tls;
  if (!t.enabled) return nullptr;
  if (t.cert_file.empty() != t.key_file.empty()) {
    throw std::invalid_argument(
        std::string("chronopool::durable: redis_options.tls.cert_file and key_file go together, got ") +
        (t.cert_file.empty() ? "key_file \"" + t.key_file + "\" without cert_file"
                             : "cert_file \"" + t.cert_file + "\" without key_file"));
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  // TLS 1.2 and later only; compression off (CRIME).
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
  error_code ec;
  if (t.verify_peer) {
    ctx->set_verify_mode(ssl::verify_peer, ec);
    if (!t.ca_file.empty() && ctx->load_verify_file(t.ca_file, ec)) refuse("ca_file", t.ca_file, ec);
    if (!t.ca_dir.empty() && ctx->add_verify_path(t.ca_dir, ec)) refuse("ca_dir", t.ca_dir, ec);
    if (t.ca_file.empty() && t.ca_dir.empty() && ctx->set_default_verify_paths(ec))
      throw std::invalid_argument("chronopool::durable: redis_options.tls: OpenSSL's default CA paths: " +
                                  ec.message());
  } else {
    ctx->set_verify_mode(ssl::verify_none, ec);
  }
  if (!t.cert_file.empty()) {
    if (ctx->use_certificate_chain_file(t.cert_file, ec)) refuse("cert_file", t.cert_file, ec);
    if (ctx->use_private_key_file(t.key_file, ssl::context::pem, ec)) refuse("key_file", t.key_file, ec);
    if (::SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      refuse("key_file", t.key_file,
             error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category()));
    }
  }
  return ctx;
}

error_code prepare_tls_stream(tls_stream& s, const tls_options& o, const std::string& host) {
  const std::string& name = o.server_name.empty() ? host : o.server_name;
  SSL* ssl = s.native_handle();
  const bool ip = is_ip_address(name);
  // SNI carries host names only (RFC 6066).
  if (!ip && !name.empty() && ::SSL_set_tlsext_host_name(ssl, name.c_str()) != 1)
    return error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category());
  if (!o.verify_peer || name.empty()) return {};
  // OpenSSL checks the name during the handshake, so a mismatch is reported
  // as such ("hostname mismatch") rather than as a bare verification failure.
  X509_VERIFY_PARAM* param = ::SSL_get0_param(ssl);
  const int ok = ip ? ::X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                    : ::X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  if (ok != 1) return error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category());
  return {};
}

bool is_tls_error(const error_code& ec) noexcept {
  return ec.category() == asio::error::get_ssl_category();
}

error_code tls_failure(const error_code& ec, tls_stream& s) {
  std::string text = ec.message();
  const long verify = ::SSL_get_verify_result(s.native_handle());
  if (verify != X509_V_OK) {
    text += ": ";
    text += ::X509_verify_cert_error_string(verify);
  }
  return make_error_code(error::tls_failed, text);
}

}  // namespace chronopool::durable::detail

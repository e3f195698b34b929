// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// TLS for redis_connection: the OpenSSL context made from tls_options, the
// per-connection set-up (SNI, the name to verify) and OpenSSL's failures
// turned into error::tls_failed with their text. Private to the library, so
// that its users' code does not see OpenSSL's headers.
#pragma once

#include <chronopool/durable/redis_options.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>

namespace chronopool::durable::detail {

/// The TLS stream over a connection's own socket.
using tls_stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>;

/// The client context for `o.tls`, or null when TLS is off. Throws
/// std::invalid_argument naming the option and its value when a file
/// cannot be used (unreadable, not PEM, key not matching the certificate)
/// or only one of cert_file / key_file is given.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const redis_options& o);

/// Prepares a new stream before its handshake: SNI and the name (or IP
/// address) the server's certificate must carry.
/// `host` is the host connected to, verified unless o.server_name is set.
boost::system::error_code prepare_tls_stream(tls_stream& s, const tls_options& o, const std::string& host);

/// True for errors that come from OpenSSL (not the socket).
bool is_tls_error(const boost::system::error_code& ec) noexcept;

/// error::tls_failed with OpenSSL's text for `ec` and, when the peer's
/// certificate was refused, the reason why (e.g. "self-signed certificate
/// in certificate chain").
boost::system::error_code tls_failure(const boost::system::error_code& ec, tls_stream& s);

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Certificates for the TLS tests, made with the openssl command-line tool
// into a fresh temporary directory: a test CA, a server certificate it
// signs (for DNS:localhost and IP:127.0.0.1), a client certificate it
// signs, and a second, unrelated CA (the "wrong CA").
#pragma once

#include <filesystem>
#include <string>

namespace chronopool::durable::test {

class tls_certificates {
 public:
  /// Generates everything; throws std::runtime_error with openssl's output
  /// when a step fails (or openssl is not in PATH).
  tls_certificates();
  /// Removes the directory.
  ~tls_certificates();
  tls_certificates(const tls_certificates&) = delete;
  tls_certificates& operator=(const tls_certificates&) = delete;

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::string ca_file() const { return (dir_ / "ca.crt").string(); }
  std::string server_cert() const { return (dir_ / "server.crt").string(); }
  std::string server_key() const { return (dir_ / "server.key").string(); }
  std::string client_cert() const { return (dir_ / "client.crt").string(); }
  std::string client_key() const { return (dir_ / "client.key").string(); }
  /// A CA that signed none of the above.
  std::string wrong_ca_file() const { return (dir_ / "wrong-ca.crt").string(); }

 private:
  void run(const std::string& args);
  std::filesystem::path dir_;
};

}  // namespace chronopool::durable::test

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "tls_certificates.hpp"

#include "redis_server.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace chronopool::durable::test {
namespace {

std::filesystem::path make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/chronopool-tls-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + templ);
  return std::filesystem::path(buf.data());
}

// EC keys: generated in milliseconds, unlike RSA.
constexpr const char* new_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

}  // namespace

tls_certificates::tls_certificates() : dir_(make_temp_dir()) {
  try {
    if (find_executable("openssl").empty()) throw std::runtime_error("tls_certificates: openssl not found in PATH");
    {
      std::ofstream ext(dir_ / "server.ext");
      ext << "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n";
      std::ofstream cext(dir_ / "client.ext");
      cext << "extendedKeyUsage=clientAuth\n";
    }
    run(std::string("req -x509 ") + new_key + " -keyout ca.key -out ca.crt -days 2 -subj '/CN=chronopool test CA'");
    run(std::string("req -x509 ") + new_key +
        " -keyout wrong-ca.key -out wrong-ca.crt -days 2 -subj '/CN=chronopool wrong CA'");
    for (const char* who : {"server", "client"}) {
      const std::string w = who;
      run(std::string("req ") + new_key + " -keyout " + w + ".key -out " + w + ".csr -subj '/CN=chronopool-" + w +
          "'");
      run("x509 -req -in " + w + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out " + w + ".crt -days 2 -extfile " +
          w + ".ext");
    }
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

tls_certificates::~tls_certificates() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void tls_certificates::run(const std::string& args) {
  // The directory name comes from mkdtemp: no quotes or spaces to escape.
  const auto log = dir_ / "openssl.log";
  const std::string cmd = "cd '" + dir_.string() + "' && openssl " + args + " >'" + log.string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    throw std::runtime_error("tls_certificates: `openssl " + args + "` failed:\n" + out);
  }
}

}  // namespace chronopool::durable::test

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "sentinel_group.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace chronopool::durable::test {
namespace {

std::filesystem::path make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/chronopool-sentinel-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + templ);
  return std::filesystem::path(buf.data());
}

// Polls `ok` every 50 ms until it holds; throws `what` after `limit`.
template <class Pred>
void wait_or_throw(Pred ok, std::chrono::milliseconds limit, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() >= deadline) throw std::runtime_error("sentinel_group: " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

std::string sentinel_group::cli(std::uint16_t port, const std::string& args) {
  static const std::string exe = find_executable("redis-cli");
  if (exe.empty()) throw std::runtime_error("sentinel_group: redis-cli not found in PATH");
  const std::string cmd = exe + " -h 127.0.0.1 -p " + std::to_string(port) + " " + args + " 2>&1";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

sentinel_group::sentinel_group(const std::string& exe, std::string master_name)
    : dir_(make_temp_dir()), master_name_(std::move(master_name)) {
  try {
    for (int i = 0; i < 2; ++i) {
      redis_server_options o;
      o.executable = exe;
      o.dir = dir_ / ("server" + std::to_string(i));
      if (i == 1) o.extra_args = {"--replicaof", "127.0.0.1", std::to_string(servers_[0]->port())};
      servers_.push_back(std::make_unique<redis_server>(o));
      servers_.back()->start();
    }
    wait_or_throw([&] { return cli(servers_[1]->port(), "INFO replication").find("master_link_status:up") !=
                               std::string::npos; },
                  std::chrono::seconds(20), "the replica did not sync with the master:\n" + servers_[1]->log_tail());
    for (int i = 0; i < 3; ++i) {
      const auto d = dir_ / ("sentinel" + std::to_string(i));
      std::filesystem::create_directories(d);
      {
        std::ofstream conf(d / "sentinel.conf");
        conf << "sentinel monitor " << master_name_ << " 127.0.0.1 " << servers_[0]->port() << " 2\n"
             << "sentinel down-after-milliseconds " << master_name_ << " 1000\n"
             << "sentinel failover-timeout " << master_name_ << " 10000\n"
             << "sentinel parallel-syncs " << master_name_ << " 1\n";
      }
      redis_server_options o;
      o.executable = exe;
      o.dir = d;
      o.config_file = d / "sentinel.conf";
      o.extra_args = {"--sentinel"};
      sentinels_.push_back(std::make_unique<redis_server>(o));
      sentinels_.back()->start();
    }
    // A forced failover needs the replica known to the sentinel asked (it
    // learns it from the master's INFO).
    wait_or_throw([&] {
      return cli(sentinels_[0]->port(), "SENTINEL replicas " + master_name_).find(std::to_string(servers_[1]->port())) !=
             std::string::npos;
    }, std::chrono::seconds(20), "the sentinel did not discover the replica:\n" + sentinels_[0]->log_tail());
  } catch (...) {
    sentinels_.clear();
    servers_.clear();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

sentinel_group::~sentinel_group() {
  sentinels_.clear();  // first, so that they do not fail anything over while the servers stop
  servers_.clear();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

redis_options sentinel_group::client_options() const {
  redis_options o;
  o.sentinel.master_name = master_name_;
  for (const auto& s : sentinels_) o.sentinel.sentinels.push_back({"127.0.0.1", s->port()});
  return o;
}

std::uint16_t sentinel_group::master_port() const {
  const auto out = cli(sentinels_[0]->port(), "SENTINEL get-master-addr-by-name " + master_name_);
  const auto nl = out.find('\n');
  if (nl == std::string::npos) return 0;
  try {
    return static_cast<std::uint16_t>(std::stoul(out.substr(nl + 1)));
  } catch (const std::exception&) {
    return 0;
  }
}

void sentinel_group::failover(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    // -NOGOODSLAVE while the sentinel has no replica it can promote yet.
    const auto answer = cli(sentinels_[0]->port(), "SENTINEL FAILOVER " + master_name_);
    if (answer == "OK") return;
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("sentinel_group: SENTINEL FAILOVER was refused: " + answer);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace chronopool::durable::test

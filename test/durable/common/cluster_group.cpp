// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "cluster_group.hpp"

#include "tls_certificates.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace chronopool::durable::test {
namespace {

std::filesystem::path make_cluster_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/chronopool-cluster-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + templ);
  return std::filesystem::path(buf.data());
}

// The output of a shell command, trailing blanks trimmed.
std::string run_command(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

const std::string& redis_cli() {
  static const std::string exe = find_executable("redis-cli");
  if (exe.empty()) throw std::runtime_error("cluster_group: redis-cli not found in PATH");
  return exe;
}

// Polls `ok` until it holds; after `limit` throws what(), built then so
// that it shows the state at the end.
template <class Pred, class What>
void wait_for(Pred ok, std::chrono::milliseconds limit, What what) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() >= deadline) throw std::runtime_error("cluster_group: " + what());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One line of CLUSTER NODES: "<id> <ip:port@bus> <flags> <master> <ping>
// <pong> <epoch> <link> <slot> ...".
struct node_line {
  std::uint16_t port = 0;
  bool master = false;
  std::vector<std::pair<int, int>> ranges;
};

std::vector<node_line> parse_nodes(const std::string& text) {
  std::vector<node_line> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() < 8) continue;
    node_line n;
    const auto colon = f[1].rfind(':', f[1].find('@'));
    if (colon == std::string::npos) continue;
    try {
      n.port = static_cast<std::uint16_t>(std::stoul(f[1].substr(colon + 1)));
    } catch (const std::exception&) {
      continue;
    }
    n.master = f[2].find("master") != std::string::npos && f[2].find("fail") == std::string::npos;
    for (std::size_t i = 8; i < f.size(); ++i) {
      if (f[i].empty() || f[i][0] == '[') continue;  // a slot being migrated or imported
      const auto dash = f[i].find('-');
      try {
        const int a = std::stoi(f[i].substr(0, dash));
        const int b = dash == std::string::npos ? a : std::stoi(f[i].substr(dash + 1));
        n.ranges.emplace_back(a, b);
      } catch (const std::exception&) {
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

cluster_group::cluster_group(const std::string& exe, std::size_t masters, std::size_t replicas_per_master,
                             std::string password, const tls_certificates* tls, std::vector<std::string> extra_args)
    : cluster_group(exe, masters, replicas_per_master, std::move(password), tls, std::move(extra_args), nullptr) {}

cluster_group::cluster_group(const std::string& exe, std::size_t masters, detached where)
    : cluster_group(exe, masters, 0, {}, nullptr, {}, &where) {}

cluster_group::cluster_group(const std::string& exe, std::size_t masters, std::size_t replicas_per_master,
                             std::string password, const tls_certificates* tls, std::vector<std::string> extra_args,
                             const detached* where)
    : dir_(where ? std::filesystem::absolute(where->dir) : make_cluster_dir()),
      owns_dir_(where == nullptr),
      password_(std::move(password)),
      ca_file_(tls ? tls->ca_file() : std::string()) {
  try {
    const std::size_t count = masters * (1 + replicas_per_master);
    // Each node needs a client port and a cluster bus port; ask for the bus
    // port explicitly (--cluster-port), since client port + 10000 may not
    // exist or be free.
    std::set<std::uint16_t> taken;
    auto fresh_port = [&] {
      for (;;) {
        const auto p = pick_free_port();
        if (taken.insert(p).second) return p;
      }
    };
    std::string addresses;
    for (std::size_t i = 0; i < count; ++i) {
      const auto port = fresh_port();
      const auto bus = fresh_port();
      redis_server_options o;
      o.executable = exe;
      o.port = port;
      o.dir = dir_ / ("node" + std::to_string(i));
      o.die_with_parent = where == nullptr;
      o.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + std::to_string(port) + ".conf",
                      "--cluster-port", std::to_string(bus), "--cluster-node-timeout", "2000",
                      "--appendonly", "no", "--save", ""};
      if (!password_.empty()) {
        o.requirepass = password_;
        o.extra_args.insert(o.extra_args.end(), {"--masterauth", password_});
      }
      if (tls) {
        // redis_server passes --port first; the later --port 0 turns plain TCP off.
        o.extra_args.insert(o.extra_args.end(),
                            {"--port", "0", "--tls-port", std::to_string(port), "--tls-cert-file", tls->server_cert(),
                             "--tls-key-file", tls->server_key(), "--tls-ca-cert-file", tls->ca_file(),
                             "--tls-cluster", "yes", "--tls-replication", "yes", "--tls-auth-clients", "no"});
        o.ready_probe = tcp_accepts;
      }
      o.extra_args.insert(o.extra_args.end(), extra_args.begin(), extra_args.end());
      nodes_.push_back(std::make_unique<redis_server>(o));
      nodes_.back()->start();
      addresses += " 127.0.0.1:" + std::to_string(port);
    }
    const auto created = run_command(redis_cli() + cli_args() + " --cluster create" + addresses + " --cluster-replicas " +
                                     std::to_string(replicas_per_master) + " --cluster-yes");
    if (created.find("[OK] All 16384 slots covered") == std::string::npos)
      throw std::runtime_error("cluster_group: redis-cli --cluster create failed:\n" + created);
    wait_ok(std::chrono::seconds(60));
    if (replicas_per_master > 0) {
      for (std::size_t i = 0; i < count; ++i) {
        wait_for([&] {
          const auto info = cli(i, "INFO replication");
          return info.find("role:master") != std::string::npos ||
                 info.find("master_link_status:up") != std::string::npos;
        }, std::chrono::seconds(60), [&] { return "node " + std::to_string(i) + " did not sync:\n" + nodes_[i]->log_tail(); });
      }
    }
  } catch (...) {
    nodes_.clear();  // stops every node started so far, detached or not
    std::error_code ignored;
    if (owns_dir_) std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

cluster_group::~cluster_group() {
  nodes_.clear();
  std::error_code ignored;
  if (owns_dir_) std::filesystem::remove_all(dir_, ignored);
}

std::vector<pid_t> cluster_group::release() {
  // Nothing throws after the reserve: every node is released, or (when it
  // throws) none is and the destructor still stops them all.
  std::vector<pid_t> pids;
  pids.reserve(nodes_.size());
  for (auto& n : nodes_) {
    const pid_t p = n->release();
    if (p > 0) pids.push_back(p);
  }
  owns_dir_ = false;
  return pids;
}

redis_options cluster_group::client_options() const {
  redis_options o;
  for (const auto& n : nodes_) o.cluster.seeds.push_back({"127.0.0.1", n->port()});
  return secured(std::move(o));
}

redis_options cluster_group::node_options(std::size_t i) const {
  redis_options o;
  o.port = port(i);
  return secured(std::move(o));
}

std::size_t cluster_group::index_of(std::uint16_t p) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i]->port() == p) return i;
  throw std::out_of_range("cluster_group: no node on port " + std::to_string(p));
}

std::string cluster_group::cli(std::size_t i, const std::string& args) const {
  return run_command(redis_cli() + cli_args() + " -h 127.0.0.1 -p " + std::to_string(port(i)) + " " + args);
}

std::string cluster_group::cli_args() const {
  // Test passwords and paths are plain words: no quoting needed.
  std::string a;
  if (!password_.empty()) a += " -a " + password_ + " --no-auth-warning";
  if (!ca_file_.empty()) a += " --tls --cacert " + ca_file_;
  return a;
}

redis_options cluster_group::secured(redis_options o) const {
  o.password = password_;
  if (!ca_file_.empty()) {
    o.tls.enabled = true;
    o.tls.ca_file = ca_file_;
  }
  return o;
}

std::string cluster_group::node_id(std::size_t i) const { return cli(i, "CLUSTER MYID"); }

std::uint16_t cluster_group::slot_owner(std::uint16_t slot, std::size_t asked) const {
  for (const auto& n : parse_nodes(cli(asked, "CLUSTER NODES"))) {
    if (!n.master) continue;
    for (const auto& [a, b] : n.ranges)
      if (a <= slot && slot <= b) return n.port;
  }
  return 0;
}

std::vector<std::uint16_t> cluster_group::master_ports(std::size_t asked) const {
  std::vector<std::pair<int, std::uint16_t>> by_slot;
  for (const auto& n : parse_nodes(cli(asked, "CLUSTER NODES")))
    if (n.master && !n.ranges.empty()) by_slot.emplace_back(n.ranges.front().first, n.port);
  std::sort(by_slot.begin(), by_slot.end());
  std::vector<std::uint16_t> out;
  for (const auto& [slot, p] : by_slot) out.push_back(p);
  return out;
}

void cluster_group::wait_ok(std::chrono::milliseconds limit) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i]->running()) continue;
    wait_for([&] { return cli(i, "CLUSTER INFO").find("cluster_state:ok") != std::string::npos; }, limit, [&] {
      return "node " + std::to_string(i) + " did not reach cluster_state:ok:\n" + cli(i, "CLUSTER INFO") + "\n" +
             nodes_[i]->log_tail();
    });
  }
}

}  // namespace chronopool::durable::test

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A real redis-server run as a child process, for tests and the chaos
// harness: start it, kill -9 it, restart it on the same port and directory
// (so the append-only file is reloaded), stop it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace chronopool::durable::test {

struct redis_server_options {
  /// redis-server binary: a path, or a name looked up in PATH.
  std::string executable = "redis-server";
  /// 0: pick a free loopback port once; restarts keep it.
  std::uint16_t port = 0;
  /// Data directory (AOF, log). Empty: a fresh directory under $TMPDIR
  /// (or /tmp), removed by the destructor.
  std::filesystem::path dir;
  /// Non-empty: a config file passed first (as redis-server wants it), e.g.
  /// a sentinel.conf with extra_args {"--sentinel"}; it must be writable
  /// for a sentinel, which rewrites it.
  std::filesystem::path config_file;
  /// Non-empty: --requirepass (the default user's password).
  std::string requirepass;
  /// Non-empty: an extra ACL user with all permissions and acl_password.
  std::string acl_user;
  std::string acl_password;
  /// More command-line arguments, appended last (e.g. {"--maxmemory", "4mb"}).
  std::vector<std::string> extra_args;
  /// How start() tells that the server is ready, given its port and a
  /// timeout for one try; empty: redis_answers_ping (for a server whose
  /// `port` speaks TLS, e.g. tcp_accepts).
  std::function<bool(std::uint16_t, std::chrono::milliseconds)> ready_probe;
  /// How long start() waits for the server to answer PING.
  std::chrono::milliseconds startup_timeout{10000};
  /// Kill the server with SIGKILL when the thread that started it exits
  /// (PR_SET_PDEATHSIG), so a crashed test leaves no server behind. Note
  /// that it is tied to the starting *thread*. Off for servers meant to
  /// outlive this process (see release()).
  bool die_with_parent = true;
};

class redis_server {
 public:
  /// Does not start the server: call start().
  explicit redis_server(redis_server_options options = {});
  /// stop()s a running server; removes a directory it created itself.
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  /// Launches redis-server and waits until it answers PING (a NOAUTH error
  /// counts as an answer). Throws std::runtime_error, with the end of the
  /// server's log, if it exits or does not answer in time; the process is
  /// then killed, never left behind.
  void start();
  /// SIGTERM, then waits for the process (SIGKILL after 10 s). No-op when
  /// not running.
  void stop();
  /// SIGKILL and wait: a crash, without the shutdown save.
  void kill9();
  /// stop() if running, then start() on the same port and directory.
  void restart();
  /// Forgets the process without stopping it (for a server meant to
  /// outlive this object) and returns its pid, or -1 if none was running.
  pid_t release() noexcept;

  bool running() const noexcept { return pid_ > 0; }
  std::uint16_t port() const noexcept { return port_; }
  /// -1 when not running.
  pid_t pid() const noexcept { return pid_; }
  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path log_file() const { return dir_ / "redis.log"; }
  /// The last lines of the server's log, for error messages.
  std::string log_tail(std::size_t lines = 20) const;

 private:
  void wait_until_ready();
  void signal_and_wait(int sig, std::chrono::milliseconds grace);

  redis_server_options options_;
  std::string executable_;  // resolved absolute path
  std::filesystem::path dir_;
  bool owns_dir_ = false;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

/// A loopback TCP port that was free a moment ago (bind to port 0, read
/// it back, close). Another process could take it in between; tests accept
/// that small race.
std::uint16_t pick_free_port();

/// Finds name in PATH (or checks it, if it contains a '/'); empty if not
/// found or not executable.
std::string find_executable(const std::string& name);

/// True when a TCP connection to the loopback port is accepted within
/// timeout (a listener is up; nothing is sent).
bool tcp_accepts(std::uint16_t port, std::chrono::milliseconds timeout);

/// Sends PING on a fresh blocking connection; true if the server answered
/// +PONG or -NOAUTH (it is up, maybe password protected), false if it
/// refused, was still loading, or said nothing within timeout.
bool redis_answers_ping(std::uint16_t port, std::chrono::milliseconds timeout);

}  // namespace chronopool::durable::test

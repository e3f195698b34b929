// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
#include "redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace chronopool::durable::test {
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// A file descriptor closed on scope exit.
class fd_guard {
 public:
  explicit fd_guard(int fd) noexcept : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

void set_io_timeout(int fd, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

std::string tail_of(const std::filesystem::path& file, std::size_t lines) {
  std::ifstream in(file);
  if (!in) return {};
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "    " + l + "\n";
  return out;
}

std::filesystem::path make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/chronopool-redis-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw_errno("mkdtemp " + templ);
  return std::filesystem::path(buf.data());
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

std::uint16_t pick_free_port() {
  fd_guard s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) throw_errno("socket");
  auto a = loopback(0);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw_errno("bind 127.0.0.1:0");
  socklen_t len = sizeof a;
  if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) throw_errno("getsockname");
  return ntohs(a.sin_port);
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos)
    return ::access(name.c_str(), X_OK) == 0 ? std::filesystem::absolute(name).string() : std::string{};
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (d.empty()) d.assign(1, '.');  // not d = ".": g++ 12 -O2 warns -Wrestrict falsely
    const auto candidate = std::filesystem::path(d) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::absolute(candidate).string();
  }
  return {};
}

bool tcp_accepts(std::uint16_t port, std::chrono::milliseconds timeout) {
  fd_guard s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) return false;
  set_io_timeout(s.get(), timeout);
  auto a = loopback(port);
  return ::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
}

bool redis_answers_ping(std::uint16_t port, std::chrono::milliseconds timeout) {
  fd_guard s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) return false;
  set_io_timeout(s.get(), timeout);
  auto a = loopback(port);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
  static constexpr char ping[] = "*1\r\n$4\r\nPING\r\n";
  if (::send(s.get(), ping, sizeof ping - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof ping - 1)) return false;
  std::string reply;
  char buf[256];
  while (reply.find("\r\n") == std::string::npos) {
    const auto n = ::recv(s.get(), buf, sizeof buf, 0);
    if (n <= 0) return false;  // closed, or timed out (EAGAIN)
    reply.append(buf, static_cast<std::size_t>(n));
  }
  // -LOADING (AOF being replayed) and anything else: not ready yet.
  return reply.rfind("+PONG", 0) == 0 || reply.rfind("-NOAUTH", 0) == 0;
}

redis_server::redis_server(redis_server_options options) : options_(std::move(options)) {
  executable_ = find_executable(options_.executable);
  if (executable_.empty())
    throw std::runtime_error("redis_server: '" + options_.executable + "' not found or not executable");
  if (options_.dir.empty()) {
    dir_ = make_temp_dir();
    owns_dir_ = true;
  } else {
    dir_ = std::filesystem::absolute(options_.dir);
    std::filesystem::create_directories(dir_);
  }
  port_ = options_.port;
}

redis_server::~redis_server() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; stop() only throws on broken waitpid
  }
  if (owns_dir_) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

void redis_server::start() {
  if (running()) throw std::logic_error("redis_server::start: already running (pid " + std::to_string(pid_) + ")");
  if (port_ == 0) port_ = pick_free_port();

  // Everything the child needs is prepared here: between fork and exec a
  // multithreaded parent's child may only make async-signal-safe calls
  // (no allocation).
  std::vector<std::string> args{executable_};
  if (!options_.config_file.empty()) args.push_back(std::filesystem::absolute(options_.config_file).string());
  args.insert(args.end(), {"--port", std::to_string(port_),
                            "--bind", "127.0.0.1",
                            "--dir", dir_.string(),
                            "--appendonly", "yes",
                            "--appendfsync", "always",
                            "--maxmemory-policy", "noeviction",
                            "--save", "",
                            "--daemonize", "no",
                            "--logfile", log_file().string()});
  if (!options_.requirepass.empty()) {
    args.insert(args.end(), {"--requirepass", options_.requirepass});
  }
  if (!options_.acl_user.empty()) {
    args.insert(args.end(), {"--user", options_.acl_user, "on", ">" + options_.acl_password, "~*", "&*", "+@all"});
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Output before the log file is open (bad arguments) lands here.
  const auto out_path = dir_ / "redis.stdout";
  fd_guard out(::open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (out.get() < 0) throw_errno("open " + out_path.string());
  fd_guard null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null_in.get() < 0) throw_errno("open /dev/null");

  const pid_t parent = ::getpid();
  const bool die_with_parent = options_.die_with_parent;
  const pid_t child = ::fork();
  if (child < 0) throw_errno("fork");
  if (child == 0) {
    if (die_with_parent) {
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
    } else {
      // Own session: signals to the launcher's process group (Ctrl-C,
      // a test driver killing its children) do not reach the server.
      ::setsid();
    }
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null_in.get(), STDIN_FILENO);
    ::dup2(out.get(), STDOUT_FILENO);
    ::dup2(out.get(), STDERR_FILENO);
    // Do not leak the test's sockets into the server: a leaked client
    // socket would keep that connection open after the test closed it.
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = child;
  try {
    wait_until_ready();
  } catch (...) {
    if (running()) kill9();
    throw;
  }
}

void redis_server::wait_until_ready() {
  const auto deadline = std::chrono::steady_clock::now() + options_.startup_timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server on port " + std::to_string(port_) + " " + describe_status(status) +
                               " during startup; " + log_file().string() + " ends with:\n" + log_tail() +
                               "output:\n" + tail_of(dir_ / "redis.stdout", 20));
    }
    const auto probe = options_.ready_probe ? options_.ready_probe : redis_answers_ping;
    if (probe(port_, std::chrono::milliseconds(500))) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw std::runtime_error("redis-server (pid " + std::to_string(pid_) + ", port " + std::to_string(port_) +
                               ") did not answer PING within " + std::to_string(options_.startup_timeout.count()) +
                               " ms; " + log_file().string() + " ends with:\n" + log_tail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void redis_server::signal_and_wait(int sig, std::chrono::milliseconds grace) {
  if (!running()) return;
  ::kill(pid_, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) break;
    if (r < 0 && errno != EINTR) throw_errno("waitpid");
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
}

void redis_server::stop() { signal_and_wait(SIGTERM, std::chrono::seconds(10)); }

void redis_server::kill9() { signal_and_wait(SIGKILL, std::chrono::seconds(10)); }

void redis_server::restart() {
  stop();
  start();
}

pid_t redis_server::release() noexcept {
  const pid_t p = pid_;
  pid_ = -1;
  return p;
}

std::string redis_server::log_tail(std::size_t lines) const { return tail_of(log_file(), lines); }

}  // namespace chronopool::durable::test

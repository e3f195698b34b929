// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 6 (continued): the same 30 s idle timeout under a plain
// io.run(), which the manual clock auto-advances whenever nothing is ready.
#include <chronopool/chronopool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <iostream>

using namespace std::chrono_literals;

// The code under test, as before: closes itself after 30 s without activity.
class session {
 public:
  explicit session(boost::asio::io_context& io) : idle_(io) { touch(); }
  void touch() {
    idle_.expires_after(30s);
    idle_.async_wait([this](boost::system::error_code ec) { closed_ = closed_ || !ec; });
  }
  bool closed() const { return closed_; }

 private:
  chronopool::steady_timer idle_;
  bool closed_ = false;
};

int main() {
  const auto real_start = std::chrono::steady_clock::now();
  boost::asio::io_context io;
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);  // before any timer or socket
  const auto start = clock.now();

  session s(io);
  bool open_after_activity = false;
  boost::asio::co_spawn(io, [&]() -> boost::asio::awaitable<void> {
    co_await chronopool::sleep_for(29s);  // a client speaks at 29 s...
    s.touch();
    co_await chronopool::sleep_for(29s);  // ...and is silent from then on
    open_after_activity = !s.closed();    // 58 s: still open
  }, boost::asio::detached);
  io.run();  // returns once nothing is pending: the timeout fired at 59 s

  const auto at = std::chrono::duration_cast<std::chrono::seconds>(clock.now() - start);
  const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - real_start);
  std::cout << "open at 58 s: " << open_after_activity << ", closed: " << s.closed() << " at " << at.count()
            << " s of virtual time (" << real.count() << " ms of real time)\n";
  // Under 30 s of real time proves nothing slept for real (that takes 59 s).
  return open_after_activity && s.closed() && at == 59s && real < 30s ? 0 : 1;
}

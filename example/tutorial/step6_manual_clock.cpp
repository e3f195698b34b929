// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Tutorial, step 6 (continued): a 30 s idle timeout tested in well under a
// second, on a manual clock.
#include <chronopool/chronopool.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <iostream>

using namespace std::chrono_literals;

// The code under test: a session closes itself after 30 s without activity.
class session {
 public:
  explicit session(boost::asio::io_context& io) : idle_(io) { touch(); }
  void touch() {  // any activity re-arms the timeout
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
  chronopool::manual_clock& clock = chronopool::use_manual_clock(io);  // before the first timer

  session s(io);
  clock.advance(29s);  // runs the context: nothing is due yet
  const bool open_at_29s = !s.closed();
  s.touch();           // activity at 29 s: the timeout is now 59 s
  clock.advance(29s);
  const bool open_at_58s = !s.closed();
  clock.advance(1s);   // 59 s: the timeout fires
  const bool closed_at_59s = s.closed();

  const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - real_start);
  std::cout << "open at 29 s: " << open_at_29s << ", at 58 s: " << open_at_58s << ", closed at 59 s: " << closed_at_59s
            << " (" << real.count() << " ms of real time)\n";
  return open_at_29s && open_at_58s && closed_at_59s && real < 1s ? 0 : 1;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The heartbeat server's logic, apart from its sockets' kind and its clock:
// a periodic heartbeat to every session, and an idle timeout that drops a
// session that stays silent. heartbeat_server.cpp runs it over TCP on the
// real clock; test/unit/timer/heartbeat_virtual_test.cpp runs it over
// socket pairs on a manual clock, where a 30 s idle timeout takes
// milliseconds. Only chronopool reads the time (through the context), so
// the same code runs on either clock.
#pragma once

#include <chronopool/periodic.hpp>
#include <chronopool/steady_timer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace heartbeat {

using steady = std::chrono::steady_clock;

/// Reads one line from @p stream, or gives up when @p timeout passes first
/// (a chronopool::steady_timer raced with awaitable_operators' ||).
template <class Stream>
boost::asio::awaitable<std::optional<std::string>> read_line_within(Stream& stream, boost::asio::streambuf& buf,
                                                                    steady::duration timeout) {
  using namespace boost::asio::experimental::awaitable_operators;
  chronopool::steady_timer deadline(stream.get_executor(), timeout);
  boost::system::error_code ec;
  auto result =
      co_await (boost::asio::async_read_until(stream, buf, '\n', boost::asio::redirect_error(boost::asio::use_awaitable, ec)) ||
                deadline.async_wait(boost::asio::use_awaitable));
  if (result.index() == 1 || ec) co_return std::nullopt;  // timed out, or the peer went away
  std::istream in(&buf);
  std::string line;
  std::getline(in, line);
  co_return line;
}

/// One connection: queued writes, one writer at a time.
template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
 public:
  explicit session(Stream s) : stream_(std::move(s)) {}

  void send(std::string msg) {
    outbox_.push_back(std::move(msg));
    if (outbox_.size() == 1)
      boost::asio::co_spawn(stream_.get_executor(), write_all(this->shared_from_this()), boost::asio::detached);
  }
  void close() {
    boost::system::error_code ignored;
    stream_.close(ignored);
  }
  Stream& stream() { return stream_; }

 private:
  static boost::asio::awaitable<void> write_all(std::shared_ptr<session> self) {
    while (!self->outbox_.empty() && self->stream_.is_open()) {
      boost::system::error_code ec;
      co_await boost::asio::async_write(self->stream_, boost::asio::buffer(self->outbox_.front()),
                                        boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      if (ec) break;
      self->outbox_.pop_front();
    }
    self->outbox_.clear();
  }

  Stream stream_;
  std::deque<std::string> outbox_;
};

/// The server's figures (read by its status line and by tests).
struct stats {
  std::size_t connections = 0;
  std::size_t heartbeats_sent = 0;
  std::size_t dropped_idle = 0;
  std::vector<steady::duration> tick_lateness;  // recent ticks only, against their ideal instants
};

/// Sends "HB <n>" to every session each @p period, and drops a session
/// that says nothing for @p idle_timeout. @p now is the clock the tick
/// lateness is measured on (the context's: steady_clock, or a manual
/// clock's now()).
template <class Stream>
class hub {
 public:
  hub(boost::asio::any_io_executor ex, steady::duration period, steady::duration idle_timeout, stats& s,
      std::function<steady::time_point()> now)
      : ex_(std::move(ex)), period_(period), idle_timeout_(idle_timeout), stats_(s), now_(std::move(now)) {}

  void start() {
    const steady::time_point first = now_();
    heartbeat_ = chronopool::schedule_at_fixed_rate(ex_, std::chrono::milliseconds(0), period_, [this, first] {
      // Lateness of this tick against its ideal instant first + k × period.
      stats_.tick_lateness.push_back(now_() - (first + period_ * static_cast<long>(ticks_++)));
      if (stats_.tick_lateness.size() > 256) stats_.tick_lateness.erase(stats_.tick_lateness.begin());
      for (auto& s : sessions_) {
        s->send("HB " + std::to_string(ticks_) + "\n");
        ++stats_.heartbeats_sent;
      }
    });
  }

  /// Serves @p stream: reads whatever the peer says; drops it after
  /// idle_timeout of silence (on_drop, if set, is told when).
  void add(Stream stream) {
    auto s = std::make_shared<session<Stream>>(std::move(stream));
    sessions_.insert(s);
    ++stats_.connections;
    boost::asio::co_spawn(ex_, serve(s), boost::asio::detached);
  }

  /// Called with the time of each drop for idleness (tests).
  std::function<void(steady::time_point)> on_drop;

  void stop() {
    heartbeat_.cancel();
    for (auto& s : sessions_) s->close();
  }

 private:
  boost::asio::awaitable<void> serve(std::shared_ptr<session<Stream>> s) {
    boost::asio::streambuf buf;
    for (;;) {
      auto line = co_await read_line_within(s->stream(), buf, idle_timeout_);
      if (!line) break;
    }
    if (s->stream().is_open()) {
      ++stats_.dropped_idle;
      if (on_drop) on_drop(now_());
    }
    s->close();
    sessions_.erase(s);
  }

  boost::asio::any_io_executor ex_;
  steady::duration period_;
  steady::duration idle_timeout_;
  stats& stats_;
  std::function<steady::time_point()> now_;
  std::set<std::shared_ptr<session<Stream>>> sessions_;
  chronopool::periodic_handle heartbeat_;
  std::size_t ticks_ = 0;
};

}  // namespace heartbeat

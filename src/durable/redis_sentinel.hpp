// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Redis Sentinel for redis_connection: asks the sentinels where the master
// is, and watches one of them for +switch-master. Each sentinel gets two
// connections of its own (a subscribed connection cannot ask), made once and
// reused. Runs on the owning connection's executor, like it.
#pragma once

#include <chronopool/durable/detail/redis_connection.hpp>
#include <chronopool/durable/redis_options.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace chronopool::durable::detail {

class sentinel_locator : public std::enable_shared_from_this<sentinel_locator> {
 public:
  using found_handler = std::function<void(boost::system::error_code, std::string host, std::uint16_t port)>;

  /// Throws std::invalid_argument when the options are inconsistent (no
  /// master name, an empty host or port 0 in the list). Sentinel must be on.
  sentinel_locator(redis_connection::executor_type ex, const redis_options& o);

  /// Asks the sentinels in order until one names the master; completes
  /// with error::no_master when none did. Starts watching the sentinel that
  /// answered, if none is watched.
  void locate(found_handler h);
  /// Called when a watched sentinel announces a new master for our name.
  void on_switch(std::function<void()> f) { on_switch_ = std::move(f); }
  /// Closes every sentinel connection: a locate() under way completes with
  /// operation_aborted and tries no further sentinel; the next locate()
  /// connects again.
  void close();

 private:
  void ask(std::size_t i, std::shared_ptr<found_handler> h);
  void answered(std::size_t i, std::shared_ptr<found_handler> h, boost::system::error_code ec, redis_value v);
  void watch(std::size_t i);

  std::string master_;
  std::vector<std::unique_ptr<redis_connection>> query_, watch_;
  std::function<void()> on_switch_;
  bool closed_ = false;      // close() was called since the last locate()
  bool watching_ = false;    // a watch connection is subscribed, or on its way
  bool subscribed_ = false;  // ... and it is subscribed
  std::size_t watched_ = 0;
};

/// Checks the Sentinel options when Sentinel is on, or when a master name
/// is given without sentinels: throws std::invalid_argument naming them.
void check_sentinel_options(const redis_options& o);

}  // namespace chronopool::durable::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// chronopool::cancel_after: an operation slower than the timeout completes
// with operation_aborted no earlier than the timeout; a faster one is left
// alone and its timer keeps no run() going; the handler's own slot still
// cancels; the cancellation type reaches the operation as asked.
//
// Timing is only asserted as lower bounds, with upper bounds of seconds.
#include <chronopool/cancel_after.hpp>
#include <chronopool/steady_timer.hpp>

#include "../../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstddef>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using sys_ns::error_code;

namespace {

/// A token-less cancel_after's operation (deferred when the operation names
/// no default token), made awaitable: awaited as it is, or on standalone Asio
/// 1.22, whose coroutines cannot await its experimental deferred operations,
/// launched with use_awaitable.
template <class Op>
auto cancel_after_test_awaitable(Op&& op) {
#ifdef CHRONOPOOL_ASIO_EXPERIMENTAL_TOKENS
  return std::forward<Op>(op)(asio::use_awaitable);
#else
  return std::forward<Op>(op);
#endif
}

/// An operation that only ever completes when cancelled (or, with
/// complete_first, at once), recording each cancellation type it receives.
/// Like Asio's own operations, its initiation names its I/O executor.
class initiate_record_cancellation {
 public:
  using executor_type = asio::io_context::executor_type;

  initiate_record_cancellation(asio::io_context& io, std::vector<asio::cancellation_type_t>& seen,
                               bool complete_first)
      : io_(&io), seen_(&seen), complete_first_(complete_first) {}
  executor_type get_executor() const noexcept { return io_->get_executor(); }

  template <class Handler>
  void operator()(Handler&& handler) const {
    using handler_t = std::decay_t<Handler>;
    auto slot = asio::get_associated_cancellation_slot(handler);
    BOOST_REQUIRE(slot.is_connected());
    auto pending = std::make_shared<std::optional<handler_t>>(std::forward<Handler>(handler));
    auto complete = [io = io_, pending](error_code ec) {
      if (!*pending) return;
      handler_t h = std::move(**pending);
      pending->reset();
      asio::post(*io, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
    };
    slot.assign([seen = seen_, complete](asio::cancellation_type_t t) {
      seen->push_back(t);
      complete(asio::error::operation_aborted);
    });
    if (complete_first_) complete(error_code());
  }

 private:
  asio::io_context* io_;
  std::vector<asio::cancellation_type_t>* seen_;
  bool complete_first_;
};

/// Counts its allocations (and allocates with new).
template <class T>
struct counting_size_allocator {
  using value_type = T;
  explicit counting_size_allocator(std::size_t& n) noexcept : count(&n) {}
  template <class U>
  counting_size_allocator(const counting_size_allocator<U>& o) noexcept : count(o.count) {}
  T* allocate(std::size_t n) {
    ++*count;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const counting_size_allocator<U>& o) const noexcept {
    return count == o.count;
  }
  std::size_t* count;
};

template <class Token>
auto async_record_cancellation(asio::io_context& io, std::vector<asio::cancellation_type_t>& seen,
                               bool complete_first, Token&& token) {
  return asio::async_initiate<Token, void(error_code)>(initiate_record_cancellation(io, seen, complete_first),
                                                       token);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cancel_after)

BOOST_AUTO_TEST_CASE(a_slower_operation_is_aborted_after_the_timeout) {
  asio::io_context io;
  chronopool::steady_timer slow(io, 1h);
  std::optional<error_code> result;
  steady::time_point done_at;
  const auto start = steady::now();
  slow.async_wait(chronopool::cancel_after(50ms, [&](error_code ec) {
    result = ec;
    done_at = steady::now();
  }));
  io.run();  // returns: the hour-long wait was cancelled
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
  BOOST_TEST((done_at - start >= 50ms));
  BOOST_TEST((done_at - start < 30s));
}

BOOST_AUTO_TEST_CASE(a_faster_operation_completes_and_its_timer_keeps_no_run_going) {
  asio::io_context io;
  chronopool::steady_timer fast(io, 20ms);
  std::optional<error_code> result;
  const auto start = steady::now();
  fast.async_wait(chronopool::cancel_after(1h, [&](error_code ec) { result = ec; }));
  io.run();  // would last an hour if the cancel timer were left waiting
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST(!*result);
  BOOST_TEST((steady::now() - start < 60s));
}

BOOST_AUTO_TEST_CASE(no_cancellation_is_emitted_after_the_operation_completed) {
  asio::io_context io;
  std::vector<asio::cancellation_type_t> seen;
  std::optional<error_code> result;
  async_record_cancellation(io, seen, true, chronopool::cancel_after(10ms, [&](error_code ec) { result = ec; }));
  // Outlive the timeout by far: a timer left armed would emit meanwhile.
  chronopool::steady_timer later(io, 200ms);
  later.async_wait([](error_code) {});
  io.run();
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST(!*result);
  BOOST_TEST(seen.empty());
}

BOOST_AUTO_TEST_CASE(the_default_type_is_terminal_and_partial_and_total_are_passed_on) {
  for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                    asio::cancellation_type::total}) {
    asio::io_context io;
    std::vector<asio::cancellation_type_t> seen;
    std::optional<error_code> result;
    auto handler = [&](error_code ec) { result = ec; };
    if (type == asio::cancellation_type::terminal) {
      async_record_cancellation(io, seen, false, chronopool::cancel_after(20ms, handler));
    } else {
      async_record_cancellation(io, seen, false, chronopool::cancel_after(20ms, type, handler));
    }
    io.run();
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST((*result == asio::error::operation_aborted));
    BOOST_REQUIRE(seen.size() == 1u);
    BOOST_TEST((seen[0] == type));
  }
}

BOOST_AUTO_TEST_CASE(partial_and_total_cancel_a_chronopool_timer_wait) {
  for (auto type : {asio::cancellation_type::partial, asio::cancellation_type::total}) {
    asio::io_context io;
    chronopool::steady_timer slow(io, 1h);
    std::optional<error_code> result;
    slow.async_wait(chronopool::cancel_after(20ms, type, [&](error_code ec) { result = ec; }));
    io.run();
    BOOST_REQUIRE(result.has_value());
    BOOST_TEST((*result == asio::error::operation_aborted));
  }
}

BOOST_AUTO_TEST_CASE(the_handlers_own_slot_still_cancels) {
  asio::io_context io;
  chronopool::steady_timer slow(io, 1h);
  asio::cancellation_signal outer;
  std::optional<error_code> result;
  const auto start = steady::now();
  slow.async_wait(chronopool::cancel_after(
      1h, asio::bind_cancellation_slot(outer.slot(), [&](error_code ec) { result = ec; })));
  asio::post(io, [&] { outer.emit(asio::cancellation_type::terminal); });
  io.run();  // neither hour passes: the outer cancellation ends both waits
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
  BOOST_TEST((steady::now() - start < 60s));
}

BOOST_AUTO_TEST_CASE(with_use_awaitable_and_as_a_partial_token) {
  asio::io_context io;
  auto f = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<std::array<bool, 2>> {
        std::array<bool, 2> aborted{false, false};
        chronopool::steady_timer slow(co_await asio::this_coro::executor, 1h);
        try {
          co_await slow.async_wait(chronopool::cancel_after(20ms, asio::use_awaitable));
        } catch (const sys_ns::system_error& e) {
          aborted[0] = e.code() == asio::error::operation_aborted;
        }
        // Token-less: the operation's default token, deferred in Boost 1.81 (and
        // experimental::deferred in standalone Asio 1.22).
        slow.expires_after(1h);
        try {
          co_await cancel_after_test_awaitable(slow.async_wait(chronopool::cancel_after(20ms)));
        } catch (const sys_ns::system_error& e) {
          aborted[1] = e.code() == asio::error::operation_aborted;
        }
        co_return aborted;
      },
      asio::use_future);
  io.run();
  BOOST_REQUIRE(f.wait_for(0s) == std::future_status::ready);
  const auto aborted = f.get();
  BOOST_TEST(aborted[0]);
  BOOST_TEST(aborted[1]);
}

BOOST_AUTO_TEST_CASE(a_socket_read_with_no_data_is_aborted) {
  asio::io_context io;
  asio::local::stream_protocol::socket a(io), b(io);
  asio::local::connect_pair(a, b);
  auto f = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<error_code> {
        std::array<char, 16> buf{};
        const auto start = steady::now();
        try {
          co_await cancel_after_test_awaitable(a.async_read_some(asio::buffer(buf), chronopool::cancel_after(50ms)));
        } catch (const sys_ns::system_error& e) {
          BOOST_TEST((steady::now() - start >= 50ms));
          co_return e.code();
        }
        co_return error_code();
      },
      asio::use_future);
  io.run();
  BOOST_REQUIRE(f.wait_for(0s) == std::future_status::ready);
  BOOST_TEST((f.get() == asio::error::operation_aborted));
}

BOOST_AUTO_TEST_CASE(with_an_explicit_timer) {
  asio::io_context io;
  chronopool::steady_timer slow(io, 1h);
  chronopool::steady_timer guard(io);
  std::optional<error_code> result;
  const auto start = steady::now();
  slow.async_wait(chronopool::cancel_after(guard, 30ms, [&](error_code ec) { result = ec; }));
  io.run();
  BOOST_REQUIRE(result.has_value());
  BOOST_TEST((*result == asio::error::operation_aborted));
  BOOST_TEST((steady::now() - start >= 30ms));
  // The caller's timer was armed for the timeout.
  BOOST_TEST((guard.expiry() >= start + 30ms));
}

BOOST_AUTO_TEST_CASE(the_handlers_executor_and_allocator_are_kept) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  chronopool::steady_timer slow(io, 1h);
  std::size_t allocations = 0;
  std::optional<bool> on_strand;
  slow.async_wait(chronopool::cancel_after(
      20ms, asio::bind_allocator(counting_size_allocator<void>(allocations),
                                 asio::bind_executor(strand, [&](error_code) {
                                   on_strand = strand.running_in_this_thread();
                                 }))));
  // The shared state (timer and signal) comes from the handler's allocator.
  BOOST_TEST(allocations >= 1u);
  io.run();
  BOOST_REQUIRE(on_strand.has_value());
  BOOST_TEST(*on_strand);
}

BOOST_AUTO_TEST_SUITE_END()

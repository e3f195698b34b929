// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Whether a handler type may wait inline in its timer (inline_capable) and
// the inline_wait_ops that keep it there (inline_wait_ops_for), which move it
// into a block wait (wait_op) when it leaves the timer.
#pragma once

#include <chronopool/detail/timer/inline_wait_ops.hpp>
#include <chronopool/detail/timer/timer_impl.hpp>
#include <chronopool/detail/timer/wait_op.hpp>
#include <chronopool/detail/support/recycling_allocator.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

/// Whether a handler of type @p Handler, given as @p Arg, may wait inline in
/// its timer (see timer_impl): two words at most, that move without throwing, with
/// the default allocator (its block, when it leaves the timer, comes from
/// the recycling allocator as a block wait's does). Its executor and its
/// cancellation slot are checked when it starts.
template <class Handler, class Arg>
inline constexpr bool inline_capable =
    sizeof(Handler) <= timer_impl::inline_words * sizeof(void*) && alignof(Handler) <= alignof(void*) &&
    std::is_nothrow_constructible_v<Handler, Arg> && std::is_nothrow_move_constructible_v<Handler> &&
    std::is_nothrow_destructible_v<Handler> &&
    std::is_same_v<asio_ns::associated_allocator_t<Handler>, std::allocator<void>>;

/// The inline_wait_ops of @p Handler; @p IoExecutor names the block type it
/// moves into (a direct wait: the executor is not stored).
template <class Handler, class IoExecutor>
struct inline_wait_ops_for {
  using block = wait_op<Handler, IoExecutor, false>;
  using block_allocator = typename block::self_allocator;

  static Handler& at(void* p) noexcept { return *std::launder(static_cast<Handler*>(p)); }

  static wait_op_base* evacuate(timer_impl& t) noexcept {
    block_allocator a = [] {
      if constexpr (std::is_same_v<block_allocator, recycling_allocator<block>>) {
        return block_allocator();
      } else {
        return block_allocator(std::allocator<void>());
      }
    }();
    block* p = nullptr;
    try {
      p = std::allocator_traits<block_allocator>::allocate(a, 1);
    } catch (...) {
      return nullptr;
    }
    Handler& h = at(t.inline_storage());
    std::allocator_traits<block_allocator>::construct(a, p, std::move(h), a);  // a move: cannot throw
    h.~Handler();
    return p;
  }
  static void relocate(void* to, void* from) noexcept {
    Handler& h = at(from);
    ::new (to) Handler(std::move(h));
    h.~Handler();
  }
  static void complete(void* storage, const sys_ns::error_code& ec) {
    Handler& stored = at(storage);
    Handler h(std::move(stored));
    stored.~Handler();
    std::move(h)(ec);
  }
  static void destroy(void* storage) noexcept { at(storage).~Handler(); }

  static constexpr inline_wait_ops table{&evacuate, &relocate, &complete, &destroy,
                                         (sizeof(Handler) + sizeof(void*) - 1) / sizeof(void*)};
  /// The table's number, given at the first use; 0 when none is left.
  static std::uint16_t id() noexcept {
    static const std::uint16_t number = register_inline_ops(&table);
    return number;
  }
};

}  // namespace chronopool::detail

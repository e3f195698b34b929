// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// What every operation that holds a completion handler shares: its
// cancellation handler is put in the handler's slot first (its address is
// the wait's key), the operation is allocated with the handler's associated
// allocator (the memory given back if its constructor throws) and freed the
// same way, and a terminal, partial or total cancellation aborts it.
#pragma once

#include <chronopool/detail/config/asio.hpp>

#include <memory>
#include <utility>

namespace chronopool::detail {

/// Puts a Cancellation made from @p args in @p handler's associated
/// cancellation slot when it is connected and returns its address (the key
/// the operation is found by); null without a slot. Done before the
/// operation is allocated: should that fail, the slot's handler only ever
/// finds nothing to cancel.
template <class Cancellation, class Handler, class... Args>
const void* connect_cancellation(const Handler& handler, Args&&... args) {
  auto slot = asio_ns::get_associated_cancellation_slot(handler);
  if (!slot.is_connected()) return nullptr;
  return &slot.template emplace<Cancellation>(std::forward<Args>(args)...);
}

/// Allocates one Op with @p alloc and constructs it from @p args; when the
/// constructor throws, the memory is given back and the exception rethrown.
template <class Op, class Allocator, class... Args>
Op* new_handler_op(Allocator& alloc, Args&&... args) {
  using traits = std::allocator_traits<Allocator>;
  Op* op = traits::allocate(alloc, 1);
  try {
    traits::construct(alloc, op, std::forward<Args>(args)...);
  } catch (...) {
    traits::deallocate(alloc, op, 1);
    throw;
  }
  return op;
}

/// Destroys @p op and gives its memory back to @p alloc.
template <class Op, class Allocator>
void delete_handler_op(Allocator& alloc, Op* op) noexcept {
  std::allocator_traits<Allocator>::destroy(alloc, op);
  std::allocator_traits<Allocator>::deallocate(alloc, op, 1);
}

/// Whether a cancellation of @p type aborts a wait: any of terminal,
/// partial or total (a wait has nothing to leave half done).
inline bool cancellation_aborts_wait(asio_ns::cancellation_type_t type) noexcept {
  using ct = asio_ns::cancellation_type;
  return (type & (ct::terminal | ct::partial | ct::total)) != ct::none;
}

}  // namespace chronopool::detail

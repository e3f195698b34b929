// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A function posted through a scheduled_thread_pool's executor.
//
// Asio's executors post small functions at a high rate (a coroutine's every
// step, every completion). As a task, each paid for a status machine, a
// reference count, a future's slot, a clock reading for its deadline and one
// for its lateness, the pool's hooks and counters. A posted function needs
// none of that: it runs once on a pool thread, or is destroyed unrun when the
// pool stops (Asio's rule). One allocation of the function plus two pointers,
// linked into the queue's FIFO function lane.
#pragma once

#include <chronopool/detail/support/intrusive_list.hpp>

#include <memory>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class queued_function {
 public:
  /// Runs the function, after freeing this node (so what it posts may reuse
  /// the memory). Throws what the function throws.
  void run() { fn_(this, true); }
  /// Frees the node without running the function.
  void destroy() noexcept { fn_(this, false); }

  /// The next in the queue's function lane.
  queued_function* next = nullptr;

 protected:
  using fn_type = void (*)(queued_function*, bool run);
  explicit queued_function(fn_type fn) noexcept : fn_(fn) {}
  ~queued_function() = default;

 private:
  fn_type fn_;
};

/// The link of the function lane (and of the stack posters push onto).
using function_link = member_link<queued_function, &queued_function::next>;
/// Queued functions in posting order.
using function_list = intrusive_list<queued_function, function_link>;

/// A queued_function holding @p Function, allocated with @p Allocator.
template <class Function, class Allocator>
class queued_function_impl final : public queued_function {
 public:
  using allocator_type = typename std::allocator_traits<Allocator>::template rebind_alloc<queued_function_impl>;

  template <class F>
  queued_function_impl(F&& f, const allocator_type& a) : queued_function(&do_it), allocator_(a), f_(std::forward<F>(f)) {}

 private:
  static void do_it(queued_function* base, bool run) {
    auto* self = static_cast<queued_function_impl*>(base);
    allocator_type a(self->allocator_);
    if (!run) return free(a, self);
    Function f(std::move(self->f_));
    free(a, self);
    std::move(f)();
  }
  static void free(allocator_type& a, queued_function_impl* self) noexcept {
    std::allocator_traits<allocator_type>::destroy(a, self);
    std::allocator_traits<allocator_type>::deallocate(a, self, 1);
  }

  [[no_unique_address]] allocator_type allocator_;
  Function f_;
};

/// Allocates a queued_function for @p f with @p a (rebound).
template <class Function, class Allocator>
queued_function* make_queued_function(Function&& f, const Allocator& a) {
  using node = queued_function_impl<std::decay_t<Function>, Allocator>;
  typename node::allocator_type alloc(a);
  node* p = std::allocator_traits<typename node::allocator_type>::allocate(alloc, 1);
  try {
    std::allocator_traits<typename node::allocator_type>::construct(alloc, p, std::forward<Function>(f), alloc);
  } catch (...) {
    std::allocator_traits<typename node::allocator_type>::deallocate(alloc, p, 1);
    throw;
  }
  return p;
}

}  // namespace chronopool::detail

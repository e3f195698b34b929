// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_future::async_wait's machinery: the initiation, the typed
// operation that holds the handler while it waits on its task, and the
// cancellation-slot handler that takes it back out. Whoever takes a wait out
// of its task's list (task done, or slot emitted) completes it once, after
// releasing the lock: it frees the operation, then posts the handler to its
// associated executor, never inside the initiating call. The operation and
// the slot's handler each hold a reference to the task.
#pragma once

#include <chronopool/detail/support/handler_op.hpp>
#include <chronopool/detail/pool/task_impl.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>
#include <chronopool/errors.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

/// The completion signature of an async wait on a task producing T.
template <class T>
struct future_wait_signature {
  using type = void(std::exception_ptr, T);
};
template <>
struct future_wait_signature<void> {
  using type = void(std::exception_ptr);
};
template <class T>
using future_wait_signature_t = typename future_wait_signature<T>::type;

/// The exception a waiter receives when its wait (not the task) was cancelled.
inline std::exception_ptr wait_aborted_error() {
  return std::make_exception_ptr(sys_ns::system_error(asio_ns::error::operation_aborted));
}

/// The outcome of a task that is done, for a waiter: null on success (with
/// the value copied, or moved out for a move-only T, into @p value), the
/// task's exception, task_cancelled, or future_already_retrieved when the
/// value was taken before.
template <class T, class Value>
std::exception_ptr outcome_of(task_base& t, std::optional<Value>& value) noexcept {
  try {
    switch (t.status()) {
      case task_status::failed: return t.error();
      case task_status::cancelled: throw task_cancelled();
      default: break;
    }
    if constexpr (!std::is_void_v<T>) {
      auto& storage = static_cast<task_with_result<T>&>(t);
      if constexpr (std::is_copy_constructible_v<T>) {
        value.emplace(storage.result());
      } else {
        value.emplace(storage.take());
      }
    }
    return {};
  } catch (...) {
    return std::current_exception();
  }
}

/// The cancellation slot's handler of a wait: any of terminal, partial or
/// total cancellation takes the wait out and completes it with
/// operation_aborted; the task itself is left alone.
class future_wait_cancellation {
 public:
  explicit future_wait_cancellation(task_ptr t) noexcept : task_(std::move(t)) {}

  void operator()(asio_ns::cancellation_type_t type) noexcept {
    if (cancellation_aborts_wait(type)) task_->cancel_async_wait(this);
  }

 private:
  task_ptr task_;
};

/// A wait with its handler, allocated with the handler's associated allocator.
template <class T, class Handler>
class future_wait_op final : public async_wait_op {
 public:
  /// Where the handler runs: its associated executor, by default the
  /// system executor (as for asio::post(handler)).
  using executor_type = asio_ns::associated_executor_t<Handler>;
  using allocator_type = typename std::allocator_traits<
      asio_ns::associated_allocator_t<Handler>>::template rebind_alloc<future_wait_op>;

  /// Allocates the wait, connects the handler's cancellation slot and hands
  /// the wait to @p task.
  static void start(Handler handler, const task_ptr& task) {
    const void* key = connect_cancellation<future_wait_cancellation>(handler, task);
    allocator_type alloc(asio_ns::get_associated_allocator(handler));
    future_wait_op* op = new_handler_op<future_wait_op>(alloc, std::move(handler), task);
    op->cancel_key = key;
    task->start_async_wait(op);
  }

  future_wait_op(Handler&& handler, task_ptr task)
      : async_wait_op(&do_complete),
        work_(asio_ns::make_work_guard(asio_ns::get_associated_executor(handler))),
        handler_(std::move(handler)),
        task_(std::move(task)) {}

 private:
  using value_type = std::conditional_t<std::is_void_v<T>, char, T>;

  static void do_complete(task_base* owner, async_wait_op* base, bool aborted) {
    auto* self = static_cast<future_wait_op*>(base);
    allocator_type alloc(asio_ns::get_associated_allocator(self->handler_));
    if (owner == nullptr) {
      // The task is being destroyed (which a pending wait's reference
      // prevents): do not release it a second time.
      (void)self->task_.detach();
      free(alloc, self);
      return;
    }
    std::optional<value_type> value;
    std::exception_ptr error = aborted ? wait_aborted_error() : outcome_of<T>(*owner, value);
    // Free the wait before the handler can run, so that a handler starting
    // the next wait may reuse its memory.
    Handler handler(std::move(self->handler_));
    asio_ns::executor_work_guard<executor_type> work(std::move(self->work_));
    const task_ptr keep(std::move(self->task_));
    free(alloc, self);
    if constexpr (std::is_void_v<T>) {
      asio_ns::post(work.get_executor(), detail::asio_compat::append(std::move(handler), std::move(error)));
    } else {
      // With an exception, a value-initialised T goes along, as co_spawn's does.
      asio_ns::post(work.get_executor(), detail::asio_compat::append(std::move(handler), std::move(error),
                                                                 value ? std::move(*value) : value_type{}));
    }
  }

  static void free(allocator_type& alloc, future_wait_op* self) noexcept { delete_handler_op(alloc, self); }

  asio_ns::executor_work_guard<executor_type> work_;
  Handler handler_;
  task_ptr task_;
};

/// async_initiate's initiation: it holds the task only, by value, since a
/// deferred operation may run it long after async_wait() returned.
template <class T>
class initiate_future_wait {
 public:
  explicit initiate_future_wait(task_ptr t) noexcept : task_(std::move(t)) {}

  template <class Handler>
  void operator()(Handler&& handler) const {
    future_wait_op<T, std::decay_t<Handler>>::start(std::forward<Handler>(handler), task_);
  }

 private:
  task_ptr task_;
};

/// scheduled_future<T>::async_wait(): std::future_error(no_state), from this
/// call, for a handle to no task.
template <class T, class CompletionToken>
auto async_wait_on(const task_ptr& task, CompletionToken&& token) {
  static_assert(std::is_void_v<T> || std::is_default_constructible_v<T>,
                "chronopool: async_wait needs a default-constructible T (the value passed with an exception), "
                "as co_spawn does");
  if (!task) throw std::future_error(std::future_errc::no_state);
  return asio_ns::async_initiate<CompletionToken, future_wait_signature_t<T>>(initiate_future_wait<T>(task),
                                                                                  token);
}

}  // namespace chronopool::detail

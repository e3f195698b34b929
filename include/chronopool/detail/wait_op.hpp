// A pending async_wait, as a task in a delayed work queue.
//
// Running it (the deadline came) completes the handler with success;
// cancelling it before it ran completes the handler with operation_aborted.
// Both go through task_base's status machine, so a wait completes exactly
// once even when cancel() races the expiry. The handler is always invoked
// through its associated executor, never inside the call that initiated or
// cancelled the wait.
#pragma once

#include <chronopool/detail/task_base.hpp>
#include <chronopool/detail/task_ptr.hpp>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_allocator.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class wait_op_base;

/// Where a wait reports its completion: the timer service keeps a registry of
/// live waits so that destroying its context can abandon them and wait for a
/// completion already in flight on another thread.
class wait_registry {
 public:
  /// False once the context is shutting down: the handler must then be
  /// destroyed without being invoked.
  virtual bool begin_delivery(wait_op_base& op) noexcept = 0;
  virtual void end_delivery(wait_op_base& op) noexcept = 0;

 protected:
  ~wait_registry() = default;
};

/// The non-template face of a wait, seen by the timer service.
class wait_op_base : public task_base {
 public:
  wait_op_base() noexcept : task_base(task_kind::one_shot) { set_internal(true); }


  // Registry links, guarded by the registry's mutex.
  wait_registry* registry = nullptr;
  wait_op_base* prev = nullptr;
  wait_op_base* next = nullptr;
  bool registered = false;
};

template <class Handler, class IoExecutor>
class wait_op final : public wait_op_base {
 public:
  using handler_allocator = boost::asio::associated_allocator_t<Handler>;

  // A template over the handler's value category: a handler passed as an
  // lvalue (a named lambda given to async_wait) is copied, as Asio does.
  template <class H>
  wait_op(H&& h, const IoExecutor& io_ex)
      : handler_(std::in_place, std::forward<H>(h)),
        // Outstanding work on the I/O executor keeps io_context::run() from
        // returning while the wait is pending, and on the handler's executor
        // keeps the place it completes to alive (as Asio's handler_work does).
        io_work_(boost::asio::prefer(io_ex, boost::asio::execution::outstanding_work.tracked)),
        handler_work_(boost::asio::prefer(boost::asio::get_associated_executor(*handler_, io_ex),
                                          boost::asio::execution::outstanding_work.tracked)) {}

  /// Connects per-operation cancellation: terminal, partial and total
  /// cancellation all cancel this wait.
  void connect_cancellation(task_ptr self) {
    auto slot = boost::asio::get_associated_cancellation_slot(*handler_);
    if (slot.is_connected()) slot.template emplace<cancel_handler>(std::move(self));
  }

  void discard() noexcept override {
    silent_.store(true);
    cancel(false);
  }

 private:
  struct cancel_handler {
    // A constructor, not an aggregate: Asio builds the handler with
    // parentheses, which compilers without C++20 parenthesised aggregate
    // initialisation (clang < 16) reject.
    explicit cancel_handler(task_ptr p) noexcept : op(std::move(p)) {}
    task_ptr op;
    void operator()(boost::asio::cancellation_type_t type) {
      using ct = boost::asio::cancellation_type;
      if ((type & (ct::terminal | ct::partial | ct::total)) != ct::none) op->cancel(false);
    }
  };

  // The deadline came: complete with success. Runs on the thread driving the
  // timers (an io_context thread or a pool thread), so dispatch may run the
  // handler right here when that is where it belongs.
  void do_invoke() override { deliver(boost::system::error_code(), /*may_run_here=*/true); }

  // cancel() won before the deadline: complete with operation_aborted, never
  // inside the cancelling call.
  void on_cancel_before_run() noexcept override {
    if (silent_.load()) return release_callable();
    deliver(boost::asio::error::operation_aborted, /*may_run_here=*/false);
  }

  void release_callable() noexcept override {
    handler_.reset();
    io_work_.reset();
    handler_work_.reset();
  }

  void destroy() noexcept override {
    using self_alloc = typename std::allocator_traits<handler_allocator>::template rebind_alloc<wait_op>;
    self_alloc a(allocator_);
    std::allocator_traits<self_alloc>::destroy(a, this);
    std::allocator_traits<self_alloc>::deallocate(a, this, 1);
  }

  void deliver(boost::system::error_code ec, bool may_run_here) {
    if (!handler_) return;
    if (registry && !registry->begin_delivery(*this)) return release_callable();
    struct end_guard {
      wait_op* op;
      ~end_guard() {
        if (op->registry) op->registry->end_delivery(*op);
      }
    } guard{this};
    Handler h(std::move(*handler_));
    handler_.reset();
    auto io_work = std::move(*io_work_);
    auto handler_work = std::move(*handler_work_);
    io_work_.reset();
    handler_work_.reset();
    auto alloc = boost::asio::get_associated_allocator(h);
    auto slot = boost::asio::get_associated_cancellation_slot(h);
    // The upcall clears the cancellation slot first, on the handler's own
    // executor, which is where the slot's signal lives.
    auto call = boost::asio::bind_allocator(alloc, [h = std::move(h), slot, ec]() mutable {
      if (slot.is_connected()) slot.clear();
      std::move(h)(ec);
    });
    if constexpr (std::is_same_v<handler_work_type, io_work_type>) {
      // The usual case: the handler has no executor of its own, so it
      // completes on the I/O executor and the second hop (an executor
      // binder, a work_dispatcher and two more type-erased executor copies
      // per completion) would only dispatch to where it already is.
      if (handler_work == io_work) {
        if (may_run_here) {
          boost::asio::dispatch(io_work, std::move(call));
        } else {
          boost::asio::post(io_work, std::move(call));
        }
        return;
      }
    }
    auto upcall = boost::asio::bind_executor(handler_work, std::move(call));
    // As Asio's own operations do, completion passes through the I/O executor
    // and is then dispatched to the handler's executor (post/dispatch do the
    // second step because the upcall carries the handler's executor).
    if (may_run_here) {
      boost::asio::dispatch(io_work, std::move(upcall));
    } else {
      boost::asio::post(io_work, std::move(upcall));
    }
  }

  template <class H, class E>
  friend task_ptr make_wait_op(H&& h, const E& io_ex);

  using io_work_type = std::decay_t<decltype(boost::asio::prefer(std::declval<const IoExecutor&>(),
                                                                boost::asio::execution::outstanding_work.tracked))>;
  using handler_executor_type = boost::asio::associated_executor_t<Handler, IoExecutor>;
  using handler_work_type = std::decay_t<decltype(boost::asio::prefer(
      std::declval<const handler_executor_type&>(), boost::asio::execution::outstanding_work.tracked))>;

  std::optional<Handler> handler_;
  std::optional<io_work_type> io_work_;
  std::optional<handler_work_type> handler_work_;
  handler_allocator allocator_{boost::asio::get_associated_allocator(*handler_)};
  std::atomic<bool> silent_{false};
};

/// Allocates a wait for @p h with the handler's associated allocator.
template <class Handler, class IoExecutor>
task_ptr make_wait_op(Handler&& h, const IoExecutor& io_ex) {
  using op = wait_op<std::decay_t<Handler>, IoExecutor>;
  using alloc_type = typename std::allocator_traits<typename op::handler_allocator>::template rebind_alloc<op>;
  alloc_type a(boost::asio::get_associated_allocator(h));
  op* p = std::allocator_traits<alloc_type>::allocate(a, 1);
  try {
    std::allocator_traits<alloc_type>::construct(a, p, std::forward<Handler>(h), io_ex);
  } catch (...) {
    std::allocator_traits<alloc_type>::deallocate(a, p, 1);
    throw;
  }
  return task_ptr(p);
}

}  // namespace chronopool::detail

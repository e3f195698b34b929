// A pending async_wait, as a task in a delayed work queue.
//
// Running it (the deadline came) completes the handler with success;
// cancelling it before it ran completes the handler with operation_aborted.
// Both go through task_base's status machine, so a wait completes exactly
// once even when cancel() races the expiry. The handler is always invoked
// through its associated executor, never inside the call that initiated or
// cancelled the wait.
#pragma once

#include <chronopool/detail/recycling_allocator.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/detail/task_base.hpp>
#include <chronopool/detail/task_ptr.hpp>

#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class wait_op_base;

/// post() / dispatch() of a completion to a wait's I/O executor. Through a
/// type-erased any_io_executor, Asio wraps the function twice (an
/// executor_function, then the io_context's own operation), two allocations
/// and several type-erased executor copies per call. When the target is a
/// plain io_context executor, the usual I/O executor of a timer, the call
/// goes to it directly: one operation, the same semantics.
template <class Plain, class Ex, class F>
bool complete_on_target(const Ex& ex, F& f, bool may_run_here);

template <class Ex, class F>
void complete_on(const Ex& ex, F&& f, bool may_run_here) {
  if constexpr (std::is_same_v<Ex, boost::asio::any_io_executor>) {
    // The same holds for a scheduled_thread_pool's executor (pool mode).
    if (complete_on_target<boost::asio::io_context::executor_type>(ex, f, may_run_here)) return;
    if (complete_on_target<scheduled_thread_pool::executor_type>(ex, f, may_run_here)) return;
  }
  if (may_run_here) {
    boost::asio::dispatch(ex, std::forward<F>(f));
  } else {
    boost::asio::post(ex, std::forward<F>(f));
  }
}

/// complete_on() for @p ex's target when it is @p Plain or its tracked form;
/// false when it is neither.
template <class Plain, class Ex, class F>
bool complete_on_target(const Ex& ex, F& f, bool may_run_here) {
  using tracked = std::decay_t<decltype(boost::asio::prefer(std::declval<const Plain&>(),
                                                           boost::asio::execution::outstanding_work.tracked))>;
  if (const auto* t = ex.template target<tracked>()) {
    complete_on(*t, std::move(f), may_run_here);
    return true;
  }
  if (const auto* p = ex.template target<Plain>()) {
    complete_on(*p, std::move(f), may_run_here);
    return true;
  }
  return false;
}

/// The context whose due waits this thread is completing right now, inside
/// that context's run() (set by the timer service around a batch): a handler
/// that belongs to it may be called directly.
inline thread_local const boost::asio::execution_context* completing_context = nullptr;

/// The wait whose operation_aborted completion this thread is posting right
/// now (wait_op::on_cancel_before_run): a posted call destroyed unrun during
/// that post hands its handler back to the wait.
inline thread_local const wait_op_base* posting_abort_of = nullptr;

/// Where a wait reports its completion: the timer service keeps a registry of
/// live waits so that destroying its context can abandon them and wait for a
/// completion already in flight on another thread. A registered wait leaves
/// the registry exactly once, through begin_delivery() or withdraw(), before
/// its last reference can go: the registry may hold it by raw pointer.
class wait_registry {
 public:
  /// Takes the wait off the live list; every call is paired with
  /// end_delivery(), which must come after the handler and the tracked work
  /// are handed on or released. False once the context is shutting down: the
  /// handler must then be destroyed without being invoked.
  virtual bool begin_delivery(wait_op_base& op) noexcept = 0;
  virtual void end_delivery(wait_op_base& op) noexcept = 0;
  /// Takes a wait dropped without delivery (discarded) off the live list.
  virtual void withdraw(wait_op_base& op) noexcept = 0;

 protected:
  ~wait_registry() = default;
};

/// The non-template face of a wait, seen by the timer service.
class wait_op_base : public task_base {
 public:
  wait_op_base() noexcept : task_base(task_kind::one_shot) { set_internal(true); }

  /// The initiating call failed after the wait was created: drop it without
  /// calling its handler, and disconnect its cancellation slot (we are on
  /// the initiating thread, where the slot's signal is known to be alive).
  virtual void abandon() noexcept = 0;

  // Registry links, guarded by the registry's mutex.
  wait_registry* registry = nullptr;
  wait_op_base* prev = nullptr;
  wait_op_base* next = nullptr;
  bool registered = false;
  /// Set by the registry when it took this cancelled wait out of its queue
  /// together with the registration (one lock instead of two); read by the
  /// same thread's cancel() right after.
  bool dequeued = false;
};

template <class Handler, class IoExecutor>
class wait_op final : public wait_op_base {
 public:
  using handler_allocator = boost::asio::associated_allocator_t<Handler>;
  /// What the wait itself is allocated with: the handler's allocator, or the
  /// per-thread recycling one for the default allocator.
  using self_allocator = operation_allocator_t<handler_allocator, wait_op>;
  static self_allocator allocator_for(const handler_allocator& a) noexcept {
    if constexpr (std::is_same_v<self_allocator, recycling_allocator<wait_op>>) {
      return {};
    } else {
      return self_allocator(a);
    }
  }

  // A template over the handler's value category: a handler passed as an
  // lvalue (a named lambda given to async_wait) is copied, as Asio does.
  template <class H>
  wait_op(H&& h, const IoExecutor& io_ex)
      : handler_(std::in_place, std::forward<H>(h)),
        // Outstanding work on the I/O executor keeps io_context::run() from
        // returning while the wait is pending, and on the handler's executor
        // keeps the place it completes to alive (as Asio's handler_work does).
        io_work_(boost::asio::prefer(io_ex, boost::asio::execution::outstanding_work.tracked)) {
    // The usual handler has no executor of its own, or the I/O one: a second
    // tracked copy would only count the same work twice, and costs a
    // type-erased copy per wait. handler_work_ stays empty then.
    auto handler_ex = boost::asio::get_associated_executor(*handler_, io_ex);
    if constexpr (std::is_same_v<handler_executor_type, IoExecutor>) {
      if (handler_ex == io_ex) return;
    }
    handler_work_.emplace(boost::asio::prefer(std::move(handler_ex), boost::asio::execution::outstanding_work.tracked));
  }

  /// Connects per-operation cancellation: terminal, partial and total
  /// cancellation all cancel this wait.
  void connect_cancellation(task_ptr self) {
    auto slot = boost::asio::get_associated_cancellation_slot(*handler_);
    if (slot.is_connected()) {
      slot.template emplace<cancel_handler>(std::move(self));
      slot_ = slot;
    }
  }

  void discard() noexcept override {
    silent_.store(true);
    cancel(false);
  }

  void abandon() noexcept override {
    if (slot_.is_connected()) slot_.clear();
    discard();
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
  // inside the cancelling call, so the completion is posted. This path is
  // noexcept, and the post allocates: if it fails, the posted call hands the
  // handler back (see abort_call) and it runs here, on the cancelling thread,
  // as a last resort rather than being lost or terminating the process.
  void on_cancel_before_run() noexcept override {
    if (silent_.load()) {
      if (registry) registry->withdraw(*this);
      return release_callable();
    }
    if (!handler_) return;
    if (!begin()) return;
    const end_guard guard{this};
    auto io_work = std::move(*io_work_);
    auto handler_work = std::move(handler_work_);  // empty: the I/O executor's
    io_work_.reset();
    handler_work_.reset();
    bool post_failed = false;
    {
      const posting_abort scope(this);
      try {
        abort_call call(*this);
        if (!handler_work) {
          complete_on(io_work, std::move(call), false);
        } else {
          complete_on(io_work, boost::asio::bind_executor(*handler_work, std::move(call)), false);
        }
      } catch (...) {
        post_failed = true;
      }
    }
    if (!handler_) return;  // posted: the usual case
    // Handed back: the post failed, or the executor dropped the call unrun
    // inside post (a stopped pool does), when Asio's rule is to destroy it.
    if (!post_failed) return release_callable();
    Handler h(std::move(*handler_));
    handler_.reset();
    if (slot_.is_connected()) slot_.clear();
    try {
      std::move(h)(boost::system::error_code(boost::asio::error::operation_aborted));
    } catch (...) {
      // A handler that throws has nowhere to go from a noexcept cancel.
    }
  }

  // The wait whose abort this thread is posting right now.
  struct posting_abort {
    const wait_op_base* outer;
    explicit posting_abort(const wait_op_base* op) noexcept : outer(std::exchange(posting_abort_of, op)) {}
    ~posting_abort() { posting_abort_of = outer; }
  };

  // The posted abort completion: carries the handler, so the wait itself is
  // freed by the canceller and nothing waits on it. Destroyed unrun while
  // its own post is still in progress on this thread (the post failed, or
  // the executor dropped it at once), it hands the handler back to the wait;
  // destroyed unrun later (its context went away), it destroys the handler,
  // as Asio does.
  //
  // It names the handler's allocator itself (allocator_type) rather than
  // through bind_allocator: Asio's post() routes any handler whose
  // associated_executor is specialised, as a binder's is, through an extra
  // work_dispatcher hop with two more type-erased executor copies.
  class abort_call {
   public:
    using allocator_type = handler_allocator;
    allocator_type get_allocator() const noexcept { return allocator_; }

    explicit abort_call(wait_op& op) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : owner_(&op),
          slot_(op.slot_),
          allocator_(boost::asio::get_associated_allocator(*op.handler_)),
          handler_(std::move(*op.handler_)) {
      op.handler_.reset();
    }
    abort_call(abort_call&& o) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : owner_(o.owner_), slot_(o.slot_), allocator_(o.allocator_), handler_(std::move(o.handler_)) {
      o.handler_.reset();
    }
    abort_call(const abort_call&) = delete;
    abort_call& operator=(const abort_call&) = delete;
    abort_call& operator=(abort_call&&) = delete;
    ~abort_call() {
      if (handler_ && posting_abort_of == owner_) owner_->handler_.emplace(std::move(*handler_));
    }
    void operator()() {
      Handler h(std::move(*handler_));
      handler_.reset();
      // Cleared first, on the handler's own executor, where the slot's signal lives.
      if (slot_.is_connected()) slot_.clear();
      std::move(h)(boost::system::error_code(boost::asio::error::operation_aborted));
    }

   private:
    wait_op* owner_;  // only touched during the post, while the canceller holds the wait
    boost::asio::cancellation_slot slot_;
    allocator_type allocator_;
    std::optional<Handler> handler_;
  };

  // The success completion: the handler, its slot to clear first (on the
  // handler's own executor, where the slot's signal lives) and, like
  // abort_call, its allocator by name rather than through a binder.
  struct success_call {
    using allocator_type = handler_allocator;
    allocator_type get_allocator() const noexcept { return allocator; }

    Handler handler;
    boost::asio::cancellation_slot slot;
    boost::system::error_code ec;
    allocator_type allocator;

    void operator()() {
      if (slot.is_connected()) slot.clear();
      std::move(handler)(ec);
    }
  };

  void release_callable() noexcept override {
    handler_.reset();
    io_work_.reset();
    handler_work_.reset();
  }

  void destroy() noexcept override {
    self_allocator a(allocator_);
    std::allocator_traits<self_allocator>::destroy(a, this);
    std::allocator_traits<self_allocator>::deallocate(a, this, 1);
  }

  struct end_guard {
    wait_op* op;
    ~end_guard() {
      if (op->registry) op->registry->end_delivery(*op);
    }
  };

  // Starts a delivery: false when the context is shutting down, and the
  // handler has then been destroyed without being called.
  bool begin() noexcept {
    if (!registry || registry->begin_delivery(*this)) return true;
    release_callable();
    registry->end_delivery(*this);
    return false;
  }

  // The deadline came (on the thread driving the timers): hand the handler
  // to its executor, running it right here when that is where it belongs.
  void deliver(boost::system::error_code ec, bool may_run_here) {
    if (!handler_) return;
    if (!begin()) return;
    const end_guard guard{this};
    auto alloc = boost::asio::get_associated_allocator(*handler_);
    auto slot = boost::asio::get_associated_cancellation_slot(*handler_);
    success_call call{std::move(*handler_), slot, ec, alloc};
    handler_.reset();
    auto io_work = std::move(*io_work_);
    auto handler_work = std::move(handler_work_);  // empty: the I/O executor's
    io_work_.reset();
    handler_work_.reset();
    {
      // The usual case: the handler has no executor of its own, so it
      // completes on the I/O executor and the second hop (an executor
      // binder, a work_dispatcher and two more type-erased executor copies
      // per completion) would only dispatch to where it already is.
      if (!handler_work) {
        if (may_run_here && runs_inline_here(io_work)) {
          // This thread is completing its own context's due waits (see
          // timer_service::complete_due): call the handler directly, so an
          // exception it throws leaves run() on its own, as with Asio's
          // timers, instead of being captured by dispatch and merged with
          // the rest of the batch.
          call();
          return;
        }
        complete_on(io_work, std::move(call), may_run_here);
        return;
      }
    }
    auto upcall = boost::asio::bind_executor(std::move(*handler_work), std::move(call));
    // As Asio's own operations do, completion passes through the I/O executor
    // and is then dispatched to the handler's executor (post/dispatch do the
    // second step because the upcall carries the handler's executor).
    complete_on(io_work, std::move(upcall), may_run_here);
  }

  template <class H, class E>
  friend task_ptr make_wait_op(H&& h, const E& io_ex);

  using io_work_type = std::decay_t<decltype(boost::asio::prefer(std::declval<const IoExecutor&>(),
                                                                boost::asio::execution::outstanding_work.tracked))>;
  using handler_executor_type = boost::asio::associated_executor_t<Handler, IoExecutor>;
  using handler_work_type = std::decay_t<decltype(boost::asio::prefer(
      std::declval<const handler_executor_type&>(), boost::asio::execution::outstanding_work.tracked))>;

  template <class Ex>
  static bool runs_inline_here(const Ex& ex) noexcept {
    if constexpr (boost::asio::can_query<const Ex&, boost::asio::execution::context_t>::value) {
      return completing_context != nullptr &&
             completing_context == &boost::asio::query(ex, boost::asio::execution::context);
    } else {
      return false;
    }
  }

  std::optional<Handler> handler_;
  std::optional<io_work_type> io_work_;
  std::optional<handler_work_type> handler_work_;  // empty when it is the I/O executor
  self_allocator allocator_{allocator_for(boost::asio::get_associated_allocator(*handler_))};
  boost::asio::cancellation_slot slot_;  // connected when the handler has one
  std::atomic<bool> silent_{false};
};

/// Allocates a wait for @p h with the handler's associated allocator.
template <class Handler, class IoExecutor>
task_ptr make_wait_op(Handler&& h, const IoExecutor& io_ex) {
  using op = wait_op<std::decay_t<Handler>, IoExecutor>;
  using alloc_type = typename op::self_allocator;
  alloc_type a = op::allocator_for(boost::asio::get_associated_allocator(h));
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

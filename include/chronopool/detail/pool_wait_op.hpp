// scheduled_thread_pool::async_wait_for_termination / async_join's
// machinery: a pending wait for the pool to reach TERMINATED, kept in an
// intrusive list of the pool's core under the core's mutex.
//
// The core takes the whole list under its mutex in the same critical section
// that stores TERMINATED, and completes the waits after unlocking. A wait's
// handler runs on its associated executor, except when that executor's
// context is the pool itself: a terminated pool runs nothing posted to it
// (Asio's rule would drop the handler), so such a handler runs directly on
// the thread that brought the pool to TERMINATED (a pool thread leaving, or
// the thread whose shutdown()/shutdown_now()/... finished the pool) — never
// inside the initiating call. A wait started on a pool that has already
// terminated is posted: to the handler's executor, or, when that is the
// pool's own, to the system executor.
#pragma once

#include <boost/asio/append.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class pool_core;

/// How a termination wait ends.
enum class termination_completion {
  terminated,          ///< from the thread that terminated the pool
  already_terminated,  ///< from the initiating call: the pool had terminated
  aborted,             ///< its cancellation slot was emitted
  aborted_stopped,     ///< the same, while the pool is stopped (runs nothing posted)
  destroy,             ///< the core is destroyed with the wait pending: no call
};

/// A pending wait for termination: non-virtual, intrusive.
class termination_wait_op {
 public:
  using func_type = void (*)(termination_wait_op* op, termination_completion how);

  /// The cancellation-slot handler's address (null without one).
  const void* cancel_key = nullptr;

 protected:
  explicit termination_wait_op(func_type f) noexcept : func_(f) {}
  ~termination_wait_op() = default;

 private:
  friend class pool_core;
  func_type func_;
  termination_wait_op* next_ = nullptr;
};

/// Links @p op into @p core's termination waiters; when the pool has
/// terminated already, completes it (already_terminated) from this call.
void start_termination_wait(pool_core& core, termination_wait_op* op) noexcept;
/// Completes the pending termination wait of @p core keyed @p key as
/// aborted; nothing when there is none (or the core is gone).
void cancel_termination_wait(const std::weak_ptr<pool_core>& core, const void* key) noexcept;

/// The execution context behind @p ex, when it can tell (null otherwise).
template <class Executor>
const boost::asio::execution_context* context_behind(const Executor& ex) noexcept {
  if constexpr (boost::asio::can_query<const Executor&, boost::asio::execution::context_t>::value) {
    return &static_cast<const boost::asio::execution_context&>(
        boost::asio::query(ex, boost::asio::execution::context));
  } else if constexpr (requires { ex.context(); }) {
    return &static_cast<const boost::asio::execution_context&>(ex.context());
  } else {
    return nullptr;
  }
}

/// The cancellation slot's handler: terminal, partial or total cancellation
/// aborts the wait (the pool is untouched).
class termination_wait_cancellation {
 public:
  explicit termination_wait_cancellation(std::weak_ptr<pool_core> core) noexcept : core_(std::move(core)) {}
  void operator()(boost::asio::cancellation_type_t type) noexcept {
    using ct = boost::asio::cancellation_type;
    if ((type & (ct::terminal | ct::partial | ct::total)) != ct::none) cancel_termination_wait(core_, this);
  }

 private:
  std::weak_ptr<pool_core> core_;
};

/// A termination wait with its handler (the handler's allocator).
template <class Handler, class DefaultExecutor>
class termination_wait_impl final : public termination_wait_op {
 public:
  using executor_type = boost::asio::associated_executor_t<Handler, DefaultExecutor>;
  using allocator_type = typename std::allocator_traits<
      boost::asio::associated_allocator_t<Handler>>::template rebind_alloc<termination_wait_impl>;

  static void start(Handler handler, const std::shared_ptr<pool_core>& core, const DefaultExecutor& pool_ex) {
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    const void* key = nullptr;
    if (slot.is_connected()) key = &slot.template emplace<termination_wait_cancellation>(core);
    allocator_type alloc(boost::asio::get_associated_allocator(handler));
    termination_wait_impl* op = std::allocator_traits<allocator_type>::allocate(alloc, 1);
    try {
      std::allocator_traits<allocator_type>::construct(alloc, op, std::move(handler), pool_ex);
    } catch (...) {
      std::allocator_traits<allocator_type>::deallocate(alloc, op, 1);
      throw;
    }
    op->cancel_key = key;
    start_termination_wait(*core, op);
  }

  termination_wait_impl(Handler&& handler, const DefaultExecutor& pool_ex)
      : termination_wait_op(&do_complete),
        ex_(boost::asio::get_associated_executor(handler, pool_ex)),
        on_pool_(context_behind(ex_) == context_behind(pool_ex)),
        handler_(std::move(handler)) {
    // Tracked work on the pool itself would hold off the very termination
    // this waits for: only another executor's work is tracked.
    if (!on_pool_) work_.emplace(ex_);
  }

 private:
  static void do_complete(termination_wait_op* base, termination_completion how) {
    auto* self = static_cast<termination_wait_impl*>(base);
    allocator_type alloc(boost::asio::get_associated_allocator(self->handler_));
    if (how == termination_completion::destroy) return free(alloc, self);
    const bool on_pool = self->on_pool_;
    Handler handler(std::move(self->handler_));
    executor_type ex(std::move(self->ex_));
    std::optional<boost::asio::executor_work_guard<executor_type>> work(std::move(self->work_));
    free(alloc, self);
    const bool aborted = how == termination_completion::aborted || how == termination_completion::aborted_stopped;
    boost::system::error_code ec;
    if (aborted) ec = boost::asio::error::operation_aborted;
    if (!on_pool) {
      boost::asio::post(ex, boost::asio::append(std::move(handler), ec));
    } else if (how == termination_completion::terminated) {
      std::move(handler)(ec);  // nothing of the pool's will ever run it: here, outside any lock
    } else if (how == termination_completion::aborted) {
      boost::asio::post(ex, boost::asio::append(std::move(handler), ec));  // the pool still runs posted work
    } else {
      // The pool runs nothing posted any more: the system executor does. The
      // lambda hides the handler's executor, which post() would otherwise
      // hand it back to.
      boost::asio::post(boost::asio::system_executor(), [h = std::move(handler), ec]() mutable { std::move(h)(ec); });
    }
  }

  static void free(allocator_type& alloc, termination_wait_impl* self) noexcept {
    std::allocator_traits<allocator_type>::destroy(alloc, self);
    std::allocator_traits<allocator_type>::deallocate(alloc, self, 1);
  }

  executor_type ex_;
  bool on_pool_;
  std::optional<boost::asio::executor_work_guard<executor_type>> work_;
  Handler handler_;
};

/// async_initiate's initiation for both operations: the pool's core and
/// executor by value (a deferred operation runs it later) and whether to
/// shut the pool down first (async_join).
template <class PoolExecutor>
class initiate_termination_wait {
 public:
  using executor_type = PoolExecutor;
  initiate_termination_wait(std::shared_ptr<pool_core> core, PoolExecutor ex, void (*shutdown)(pool_core&))
      : core_(std::move(core)), ex_(std::move(ex)), shutdown_(shutdown) {}
  executor_type get_executor() const noexcept { return ex_; }

  template <class Handler>
  void operator()(Handler&& handler) const {
    if (shutdown_ != nullptr) shutdown_(*core_);
    termination_wait_impl<std::decay_t<Handler>, PoolExecutor>::start(std::forward<Handler>(handler), core_, ex_);
  }

 private:
  std::shared_ptr<pool_core> core_;
  PoolExecutor ex_;
  void (*shutdown_)(pool_core&);
};

/// pool_core::shutdown(), callable where pool_core is incomplete.
void shutdown_core(pool_core& core);

}  // namespace chronopool::detail

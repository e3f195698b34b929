// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The machinery of the pool's own asynchronous waits: async_join /
// async_wait_for_termination (for TERMINATED) and async_wait_quiet (for a
// quiet pool). A pending wait sits in one of the pool core's intrusive lists
// under the core's mutex; whoever finds its condition met takes it out under
// that mutex and completes it after unlocking (lock, collect, unlock,
// complete), as does a cancellation through the handler's slot.
//
// A wait's handler runs on its associated executor, except when that
// executor's context is the pool itself and the pool no longer runs work
// posted to it (from STOP on, Asio's rule would drop the handler): then it
// runs directly on the thread that brought the pool to TERMINATED (a pool
// thread leaving, or the thread whose shutdown()/shutdown_now()/... finished
// the pool), or, when that is not where it completes (a wait started on a
// terminated pool, a cancellation), on the system executor. Never inside the
// initiating call.
#pragma once

#include <chronopool/detail/support/handler_op.hpp>
#include <chronopool/detail/config/asio.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

class pool_core;

/// How a pool wait ends, as the core tells it.
struct pool_wait_completion {
  bool destroy = false;                 ///< the core is destroyed with the wait pending: no call
  bool aborted = false;                 ///< its cancellation slot was emitted
  bool pool_runs_posted_work = true;    ///< the pool is before STOP
  bool may_run_here = false;            ///< this is the terminating thread, outside every lock
};

/// A pending wait on the pool: non-virtual, intrusive.
class pool_wait_op {
 public:
  using func_type = void (*)(pool_wait_op* op, const pool_wait_completion& how);

  /// The cancellation-slot handler's address (null without one).
  const void* cancel_key = nullptr;
  /// A quiet wait's horizon: work due before it keeps the pool busy.
  std::chrono::steady_clock::time_point horizon{};

 protected:
  explicit pool_wait_op(func_type f) noexcept : func_(f) {}
  ~pool_wait_op() = default;

 private:
  friend class pool_core;
  func_type func_;
  pool_wait_op* next_ = nullptr;
};

/// Which of the core's lists a wait goes to.
enum class pool_wait_kind { termination, quiet };

/// Links @p op into @p core's list of @p kind; when its condition holds
/// already, completes it from this call.
void start_pool_wait(pool_core& core, pool_wait_kind kind, pool_wait_op* op) noexcept;
/// Completes @p core's pending wait keyed @p key as aborted; nothing when
/// there is none (or the core is gone).
void cancel_pool_wait(const std::weak_ptr<pool_core>& core, const void* key) noexcept;

/// The execution context behind @p ex, when it can tell (null otherwise).
template <class Executor>
const asio_ns::execution_context* context_behind(const Executor& ex) noexcept {
  if constexpr (asio_ns::can_query<const Executor&, asio_ns::execution::context_t>::value) {
    return &static_cast<const asio_ns::execution_context&>(
        asio_ns::query(ex, asio_ns::execution::context));
  } else if constexpr (requires { ex.context(); }) {
    return &static_cast<const asio_ns::execution_context&>(ex.context());
  } else {
    return nullptr;
  }
}

/// The cancellation slot's handler: terminal, partial or total cancellation
/// aborts the wait (the pool is untouched).
class pool_wait_cancellation {
 public:
  explicit pool_wait_cancellation(std::weak_ptr<pool_core> core) noexcept : core_(std::move(core)) {}
  void operator()(asio_ns::cancellation_type_t type) noexcept {
    if (cancellation_aborts_wait(type)) cancel_pool_wait(core_, this);
  }

 private:
  std::weak_ptr<pool_core> core_;
};

/// A pool wait with its handler (the handler's allocator).
template <class Handler, class DefaultExecutor>
class pool_wait_impl final : public pool_wait_op {
 public:
  using executor_type = asio_ns::associated_executor_t<Handler, DefaultExecutor>;
  using allocator_type = typename std::allocator_traits<
      asio_ns::associated_allocator_t<Handler>>::template rebind_alloc<pool_wait_impl>;

  static void start(Handler handler, const std::shared_ptr<pool_core>& core, const DefaultExecutor& pool_ex,
                    pool_wait_kind kind, std::chrono::steady_clock::time_point horizon) {
    const void* key = connect_cancellation<pool_wait_cancellation>(handler, core);
    allocator_type alloc(asio_ns::get_associated_allocator(handler));
    pool_wait_impl* op = new_handler_op<pool_wait_impl>(alloc, std::move(handler), pool_ex);
    op->cancel_key = key;
    op->horizon = horizon;
    start_pool_wait(*core, kind, op);
  }

  pool_wait_impl(Handler&& handler, const DefaultExecutor& pool_ex)
      : pool_wait_op(&do_complete),
        ex_(asio_ns::get_associated_executor(handler, pool_ex)),
        on_pool_(context_behind(ex_) == context_behind(pool_ex)),
        handler_(std::move(handler)) {
    // Tracked work on the pool itself would hold off termination, which a
    // termination wait waits for (and a quiet wait may outlast): only
    // another executor's work is tracked.
    if (!on_pool_) work_.emplace(ex_);
  }

 private:
  static void do_complete(pool_wait_op* base, const pool_wait_completion& how) {
    auto* self = static_cast<pool_wait_impl*>(base);
    allocator_type alloc(asio_ns::get_associated_allocator(self->handler_));
    if (how.destroy) return free(alloc, self);
    const bool on_pool = self->on_pool_;
    Handler handler(std::move(self->handler_));
    executor_type ex(std::move(self->ex_));
    std::optional<asio_ns::executor_work_guard<executor_type>> work(std::move(self->work_));
    free(alloc, self);
    sys_ns::error_code ec;
    if (how.aborted) ec = asio_ns::error::operation_aborted;
    if (!on_pool || how.pool_runs_posted_work) {
      asio_ns::post(ex, detail::asio_compat::append(std::move(handler), ec));
    } else if (how.may_run_here) {
      std::move(handler)(ec);  // nothing of the pool's will ever run it: here, outside any lock
    } else {
      // The pool runs nothing posted any more: the system executor does. The
      // lambda hides the handler's executor, which post() would otherwise
      // hand it back to.
      asio_ns::post(asio_ns::system_executor(), [h = std::move(handler), ec]() mutable { std::move(h)(ec); });
    }
  }

  static void free(allocator_type& alloc, pool_wait_impl* self) noexcept { delete_handler_op(alloc, self); }

  executor_type ex_;
  bool on_pool_;
  std::optional<asio_ns::executor_work_guard<executor_type>> work_;
  Handler handler_;
};

/// async_initiate's initiation for the pool's waits: the pool's core and
/// executor by value (a deferred operation runs it later), which list, the
/// horizon of a quiet wait, and whether to shut the pool down first
/// (async_join).
template <class PoolExecutor>
class initiate_pool_wait {
 public:
  using executor_type = PoolExecutor;
  initiate_pool_wait(std::shared_ptr<pool_core> core, PoolExecutor ex, pool_wait_kind kind,
                     std::chrono::steady_clock::time_point horizon, void (*before)(pool_core&))
      : core_(std::move(core)), ex_(std::move(ex)), kind_(kind), horizon_(horizon), before_(before) {}
  executor_type get_executor() const noexcept { return ex_; }

  template <class Handler>
  void operator()(Handler&& handler) const {
    if (before_ != nullptr) before_(*core_);
    pool_wait_impl<std::decay_t<Handler>, PoolExecutor>::start(std::forward<Handler>(handler), core_, ex_, kind_,
                                                               horizon_);
  }

 private:
  std::shared_ptr<pool_core> core_;
  PoolExecutor ex_;
  pool_wait_kind kind_;
  std::chrono::steady_clock::time_point horizon_;
  void (*before_)(pool_core&);
};

/// pool_core::shutdown(), callable where pool_core is incomplete.
void shutdown_core(pool_core& core);

}  // namespace chronopool::detail

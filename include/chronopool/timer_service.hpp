// chronopool::timer_service — the Asio service behind chronopool's timers.
#pragma once

#include <chronopool/detail/delayed_work_queue.hpp>
#include <chronopool/detail/saturating_time.hpp>
#include <chronopool/detail/task_ptr.hpp>
#include <chronopool/detail/wait_op.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace chronopool {

class scheduled_thread_pool;

namespace detail {
class pool_core;
struct native_wakeup;

/// The waits started on one timer and not yet known to be done, oldest
/// first. The first lives inline: a timer almost always has one wait at a
/// time, and re-arming it then allocates nothing here.
class pending_waits {
 public:
  bool empty() const noexcept { return !first_; }
  /// Appends @p op after dropping waits that have completed meanwhile.
  void push(task_ptr op);
  /// Takes @p op out, wherever it is (a wait whose start failed).
  void remove(const task_base& op) noexcept;
  /// Removes and returns the oldest; null when empty.
  task_ptr take_oldest();
  /// Moves every wait into @p out (oldest first); @p out is cleared first.
  /// The overflow vector keeps its buffer when @p out had none to swap in.
  void take_all(task_ptr& first, std::vector<task_ptr>& rest) noexcept;

 private:
  /// Drops the oldest and moves the next one up into the inline slot.
  void drop_first() noexcept;

  task_ptr first_;
  std::vector<task_ptr> rest_;
};

/// One timer object's state. Behind a pointer so that moving a timer is a
/// pointer swap, and guarded by its own mutex so cancel() and expires_*()
/// may be called from any thread while a wait is pending.
struct timer_state {
  std::mutex mutex;
  time_point expiry{};
  pending_waits pending;
};
}  // namespace detail

/// One per execution context: keeps that context's timer waits in a delayed
/// work queue and completes them when due.
///
/// Which threads run what:
/// - On a scheduled_thread_pool, the pool's own queue holds the waits and its
///   workers complete them; handlers go to their associated executors.
/// - On any other context (an io_context), the waits stay in this service's
///   queue and are driven on that context's own threads: one native Asio timer
///   is armed at the earliest deadline and re-armed only when the head
///   changes; when it fires, the due waits are completed right there (a
///   handler whose executor is that context runs inline, with no hop); a
///   batch of more than share_grain waits is split into chunks, all but the
///   first posted to the context in order, so its other threads share the
///   burst.
/// - After use_pool(ctx, pool), the context's waits live in the pool's queue
///   instead, so time-keeping runs on the pool's threads and completions are
///   posted back to each handler's executor.
///
/// When the context is destroyed, pending waits are destroyed without their
/// handlers being called (Asio's rule).
class timer_service : public boost::asio::execution_context::service, private detail::task_owner,
                      private detail::wait_registry {
 public:
  using key_type = timer_service;
  static boost::asio::execution_context::id id;

  struct implementation_type {
    std::unique_ptr<detail::timer_state> state;
  };

  explicit timer_service(boost::asio::execution_context& ctx);
  ~timer_service() override;

  /// Routes this context's waits to @p pool. Only before the first timer of
  /// the context exists; later calls throw std::logic_error.
  void use_pool(scheduled_thread_pool& pool);
  /// True when waits are driven by a scheduled_thread_pool's threads.
  bool driven_by_pool() const noexcept;
  /// Waits started and not yet completed, across all timers of the context.
  std::size_t pending_waits() const;

  // ---- per-object operations (the I/O object forwards to these) -------------
  void construct(implementation_type& impl);
  void destroy(implementation_type& impl);
  void move_construct(implementation_type& impl, implementation_type& other);
  void move_assign(implementation_type& impl, timer_service& other_service, implementation_type& other);
  std::size_t cancel(implementation_type& impl);
  std::size_t cancel_one(implementation_type& impl);
  detail::time_point expiry(const implementation_type& impl) const;
  std::size_t expires_at(implementation_type& impl, detail::time_point t);
  /// Blocks until the expiry passes.
  void wait(implementation_type& impl, boost::system::error_code& ec);

  template <class Handler, class IoExecutor>
  void async_wait(implementation_type& impl, Handler&& handler, const IoExecutor& io_ex) {
    detail::task_ptr op = detail::make_wait_op(std::forward<Handler>(handler), io_ex);
    using op_type = detail::wait_op<std::decay_t<Handler>, IoExecutor>;
    static_cast<op_type&>(*op).connect_cancellation(op);
    if (!native_executor_known_) learn_executor(boost::asio::any_io_executor(io_ex));
    start(op, impl.state.get());
  }

  /// A wait that belongs to no timer object: completes @p handler at
  /// @p deadline (or with operation_aborted when cancelled through its
  /// cancellation slot or the returned handle). Used by async_sleep and by
  /// periodic handlers on executors.
  template <class Handler, class IoExecutor>
  detail::task_ptr async_wait_at(detail::time_point deadline, Handler&& handler, const IoExecutor& io_ex) {
    detail::task_ptr op = detail::make_wait_op(std::forward<Handler>(handler), io_ex);
    using op_type = detail::wait_op<std::decay_t<Handler>, IoExecutor>;
    static_cast<op_type&>(*op).connect_cancellation(op);
    if (!native_executor_known_) learn_executor(boost::asio::any_io_executor(io_ex));
    op->set_deadline(deadline);
    start(op, nullptr);
    return op;
  }

 private:
  void shutdown() override;

  /// Takes every pending wait off the timer and, with @p expiry, sets the
  /// new expiry under the same lock; then cancels the waits taken.
  std::size_t cancel_and_set_expiry(implementation_type& impl, const detail::time_point* expiry);

  void learn_executor(const boost::asio::any_io_executor& ex);
  /// Registers @p op, adds it to @p timer's pending waits (when it has a
  /// timer; its deadline is then the timer's expiry) and queues it. Strong
  /// guarantee: if anything throws, the wait is gone again and its handler
  /// is destroyed uncalled, so a call that reports failure never completes.
  void start(const detail::task_ptr& op, detail::timer_state* timer);
  struct registration {
    bool accepted;            // false once the context is shutting down
    detail::pool_core* pool;  // the pool that drives this context's timers, or null
  };
  /// Adds @p op (also @p queued) to the live waits and, when no pool drives
  /// this context's waits, queues it here, under the same lock; the caller
  /// hands it to the returned pool otherwise.
  registration register_op(detail::wait_op_base& op, const detail::task_ptr& queued);
  void unregister_op_locked(detail::wait_op_base& op) noexcept;
  /// Takes a cancelled, natively queued wait out of the queue (disarming the
  /// native wake-up when none is left) and marks it dequeued.
  void dequeue_cancelled_locked(detail::wait_op_base& op) noexcept;

  // Native driving (contexts that are not pools).
  void schedule_native_locked(const detail::task_ptr& op);
  void arm_locked(detail::time_point t);
  /// Points the native wake-up at the queue's wake_deadline(), if there is one to wait
  /// for. Never throws: after an allocation failure the waits stay queued and
  /// the next wait re-arms.
  void rearm_at_head_locked() noexcept;
  void on_native_expiry(const boost::system::error_code& ec, std::uint64_t generation);
  /// Completes (*due)[begin, end); with end 0, the whole batch from begin,
  /// sharing it with the context's other threads in chunks.
  void complete_due(const std::shared_ptr<std::vector<detail::task_ptr>>& due, std::size_t begin, std::size_t end);
  void fire(const detail::task_ptr& op);
  /// Due waits per chunk of a batch (see complete_due).
  static constexpr std::size_t share_grain = 16;

  // task_owner (native driving)
  void on_cancelled(detail::task_base& t) noexcept override;
  bool reschedule(detail::task_base& t) override;
  void report_error(std::exception_ptr error, const detail::task_base& t) noexcept override;

  // wait_registry
  bool begin_delivery(detail::wait_op_base& op) noexcept override;
  void end_delivery(detail::wait_op_base& op) noexcept override;
  void withdraw(detail::wait_op_base& op) noexcept override;

  boost::asio::execution_context& context_;
  std::shared_ptr<detail::pool_core> pool_;  // set when a pool drives the waits

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable deliveries_done_;
  bool any_timer_ = false;
  bool shutting_down_ = false;
  // Deliveries begun and not ended, plus closing_bit once shutdown() waits
  // for them. Atomic so that ending a delivery takes no lock in the usual case.
  static constexpr std::size_t closing_bit = std::size_t{1} << (sizeof(std::size_t) * 8 - 1);
  std::atomic<std::size_t> in_flight_{0};
  detail::wait_op_base* live_head_ = nullptr;  // intrusive list of registered waits
  std::size_t live_count_ = 0;

  std::atomic<bool> native_executor_known_{false};
  std::optional<boost::asio::any_io_executor> native_executor_;
  std::unique_ptr<detail::native_wakeup> native_;  // an Asio timer on the context's own reactor
  detail::delayed_work_queue queue_;
  bool armed_ = false;
  detail::time_point armed_at_{};
  std::uint64_t generation_ = 0;  // tells stale native expiries from the current one
  std::uint64_t sequence_ = 0;    // FIFO among equal deadlines
};

/// Points @p ctx's chronopool timers at @p pool, so their time-keeping runs on
/// the pool's threads. Call before the first timer of @p ctx exists.
void use_pool(boost::asio::execution_context& ctx, scheduled_thread_pool& pool);

}  // namespace chronopool

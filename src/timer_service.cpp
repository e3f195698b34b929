// The timer service: where a context's waits are kept and who completes them.
// See timer_service.hpp for which threads run what.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/detail/pool_core.hpp>

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace chronopool {

// Defined once, here: an id defined inline in a header can be duplicated
// across shared objects, splitting the service in two.
boost::asio::execution_context::id timer_service::id;

namespace detail {

void pending_waits::drop_first() noexcept {
  first_.reset();
  if (!rest_.empty()) {
    first_ = std::move(rest_.front());
    rest_.erase(rest_.begin());
  }
}

void pending_waits::push(task_ptr op) {
  std::erase_if(rest_, [](const task_ptr& p) { return p->done(); });
  if (first_ && first_->done()) drop_first();
  if (!first_) {
    first_ = std::move(op);
  } else {
    rest_.push_back(std::move(op));
  }
}

void pending_waits::remove(const task_base& op) noexcept {
  if (first_.get() == &op) return drop_first();
  std::erase_if(rest_, [&](const task_ptr& p) { return p.get() == &op; });
}

task_ptr pending_waits::take_oldest() {
  task_ptr oldest = std::move(first_);
  drop_first();  // first_ is already empty: this moves the next one up
  return oldest;
}

void pending_waits::take_all(task_ptr& first, std::vector<task_ptr>& rest) noexcept {
  first = std::move(first_);
  first_.reset();
  rest.swap(rest_);  // the caller's (empty) vector comes back; no allocation
}

/// The one native wake-up of a context that is not a pool.
struct native_wakeup {
  explicit native_wakeup(const boost::asio::any_io_executor& ex) : timer(ex) {}
  boost::asio::steady_timer timer;
};
}  // namespace detail

timer_service::timer_service(boost::asio::execution_context& ctx)
    : boost::asio::execution_context::service(ctx), context_(ctx) {}

timer_service::~timer_service() = default;

void timer_service::use_pool(scheduled_thread_pool& pool) {
  std::lock_guard lock(mutex_);
  if (pool_) throw std::logic_error("chronopool::use_pool: this context's timers already use a pool");
  if (any_timer_)
    throw std::logic_error("chronopool::use_pool: call it before the first timer of the context exists");
  pool_ = pool.core_;
}

bool timer_service::driven_by_pool() const noexcept {
  std::lock_guard lock(mutex_);
  return pool_ != nullptr;
}

std::size_t timer_service::pending_waits() const {
  std::lock_guard lock(mutex_);
  return live_count_;
}

// ---- per-object operations ---------------------------------------------------

void timer_service::construct(implementation_type& impl) {
  impl.state = std::make_unique<detail::timer_state>();
  std::lock_guard lock(mutex_);
  any_timer_ = true;
}

void timer_service::destroy(implementation_type& impl) {
  if (!impl.state) return;
  cancel(impl);  // as Asio's timers: destruction cancels pending waits
  impl.state.reset();
}

void timer_service::move_construct(implementation_type& impl, implementation_type& other) {
  impl.state = std::move(other.state);
  other.state = std::make_unique<detail::timer_state>();  // as if newly constructed
}

void timer_service::move_assign(implementation_type& impl, timer_service&, implementation_type& other) {
  cancel(impl);
  impl.state = std::move(other.state);
  other.state = std::make_unique<detail::timer_state>();
}

std::size_t timer_service::cancel(implementation_type& impl) { return cancel_and_set_expiry(impl, nullptr); }

std::size_t timer_service::cancel_and_set_expiry(implementation_type& impl, const detail::time_point* expiry) {
  detail::task_ptr one;
  std::vector<detail::task_ptr> many;
  {
    std::lock_guard lock(impl.state->mutex);
    impl.state->pending.take_all(one, many);
    if (expiry) impl.state->expiry = *expiry;
  }
  // Outside the timer's lock: cancelling posts handlers and touches queues.
  std::size_t n = 0;
  if (one && one->cancel(false)) ++n;
  for (auto& op : many)
    if (op->cancel(false)) ++n;
  return n;
}

std::size_t timer_service::cancel_one(implementation_type& impl) {
  for (;;) {
    detail::task_ptr op;
    {
      std::lock_guard lock(impl.state->mutex);
      op = impl.state->pending.take_oldest();
      if (!op) return 0;
    }
    if (op->cancel(false)) return 1;  // else it had completed already: try the next oldest
  }
}

detail::time_point timer_service::expiry(const implementation_type& impl) const {
  std::lock_guard lock(impl.state->mutex);
  return impl.state->expiry;
}

std::size_t timer_service::expires_at(implementation_type& impl, detail::time_point t) {
  return cancel_and_set_expiry(impl, &t);
}

void timer_service::wait(implementation_type& impl, boost::system::error_code& ec) {
  for (;;) {
    const detail::time_point t = expiry(impl);
    if (detail::clock::now() >= t) break;
    std::this_thread::sleep_until(t);
  }
  ec = {};
}

void timer_service::learn_executor(const boost::asio::any_io_executor& ex) {
  std::lock_guard lock(mutex_);
  if (!native_executor_) native_executor_.emplace(ex);
  native_executor_known_.store(true);
}

void timer_service::start(const detail::task_ptr& op, detail::timer_state* timer) {
  auto& wait = static_cast<detail::wait_op_base&>(*op);
  // The timer's lock is held from reading its expiry until the wait is in
  // its pending list, so a concurrent cancel() or expires_*() of the timer
  // sees the wait either not started or pending, and the registration and,
  // when this service drives the waits, the queueing happen under one lock
  // of the service. Lock order: a timer's mutex, then the service's; nothing
  // takes them the other way round.
  std::unique_lock<std::mutex> timer_lock;
  if (timer) {
    timer_lock = std::unique_lock(timer->mutex);
    op->set_deadline(timer->expiry);
  }
  registration r{};
  try {
    r = register_op(wait, op);
    if (r.accepted && timer) timer->pending.push(op);
  } catch (...) {
    // Allocation failed on the way in (the pending list, the queue, the
    // native wake-up): take the wait back out everywhere. Nobody could have
    // run it: it is queued only under locks we held until now.
    if (timer_lock.owns_lock()) timer_lock.unlock();
    wait.abandon();
    throw;
  }
  if (timer_lock.owns_lock()) timer_lock.unlock();
  if (!r.accepted) return wait.abandon();  // the context is going: destroyed uncalled, as Asio does
  if (r.pool == nullptr) return;           // queued here already
  try {
    r.pool->submit_internal(op);
  } catch (...) {
    // The pool gives it back before anyone could run it.
    if (timer) {
      std::lock_guard lock(timer->mutex);
      timer->pending.remove(*op);
    }
    wait.abandon();
    throw;
  }
}

// ---- the registry of live waits ----------------------------------------------

timer_service::registration timer_service::register_op(detail::wait_op_base& op, const detail::task_ptr& queued) {
  std::lock_guard lock(mutex_);
  if (shutting_down_) return {false, nullptr};
  any_timer_ = true;  // a standalone wait counts as a timer for use_pool()
  op.registry = this;
  op.registered = true;
  op.prev = nullptr;
  op.next = live_head_;
  if (live_head_) live_head_->prev = &op;
  live_head_ = &op;
  ++live_count_;
  // Read here, under the lock we hold anyway: pool_ is fixed from the first
  // timer on (use_pool() refuses later), and it lives as long as the service.
  if (pool_) return {true, pool_.get()};
  schedule_native_locked(queued);  // may throw: the caller abandons the wait, which unregisters it
  return {true, nullptr};
}

void timer_service::unregister_op_locked(detail::wait_op_base& op) noexcept {
  if (!op.registered) return;
  if (op.prev) op.prev->next = op.next;
  if (op.next) op.next->prev = op.prev;
  if (live_head_ == &op) live_head_ = op.next;
  op.prev = op.next = nullptr;
  op.registered = false;
  --live_count_;
}

bool timer_service::begin_delivery(detail::wait_op_base& op) noexcept {
  std::lock_guard lock(mutex_);
  unregister_op_locked(op);
  dequeue_cancelled_locked(op);
  // Counted even when refused: the caller then releases the handler and its
  // tracked work on this context, which shutdown() must outlast.
  in_flight_.fetch_add(1);
  return !shutting_down_;
}

void timer_service::withdraw(detail::wait_op_base& op) noexcept {
  std::lock_guard lock(mutex_);
  unregister_op_locked(op);
  dequeue_cancelled_locked(op);
  if (shutting_down_ && live_head_ == nullptr) deliveries_done_.notify_all();
}

void timer_service::end_delivery(detail::wait_op_base&) noexcept {
  // Lock-free while the service runs. Once shutdown() has set closing_bit
  // it may be waiting for the count to reach zero, and may destroy the
  // service right after: the last decrement must then happen under the
  // mutex, so that shutdown() cannot see zero before we let go of it.
  std::size_t v = in_flight_.load();
  while ((v & closing_bit) == 0)
    if (in_flight_.compare_exchange_weak(v, v - 1)) return;
  std::lock_guard lock(mutex_);
  if (((in_flight_.fetch_sub(1) - 1) & ~closing_bit) == 0) deliveries_done_.notify_all();
}

void timer_service::shutdown() {
  std::vector<detail::task_ptr> live;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;  // from here on no wait registers, none is delivered
    in_flight_.fetch_or(closing_bit);
    // Every registered wait is alive: whoever holds it calls
    // begin_delivery() or withdraw() before letting go of it.
    for (auto* op = live_head_; op != nullptr; op = op->next) live.emplace_back(op);
  }
  // Asio's rule: pending handlers are destroyed without being called. A
  // wait still pending is discarded (and withdraws itself); one a pool
  // thread has already started firing cannot be, and reaches
  // begin_delivery(), which refuses it.
  for (auto& op : live) op->discard();
  live.clear();
  std::unique_ptr<detail::native_wakeup> native;
  {
    std::unique_lock lock(mutex_);
    // Wait for those in-flight ones: they touch this service and release
    // tracked work on the context, so both must outlive them.
    deliveries_done_.wait(lock, [&] { return live_head_ == nullptr && (in_flight_.load() & ~closing_bit) == 0; });
    native = std::move(native_);
    armed_ = false;
    ++generation_;
  }
  queue_.drain();
  native.reset();
}

// ---- native driving -------------------------------------------------------------

void timer_service::schedule_native_locked(const detail::task_ptr& op) {
  op->set_owner(this);
  op->set_sequence(sequence_++);
  bool new_head = false;
  // Cancelled meanwhile: completed already.
  if (!queue_.offer(op, new_head)) return;
  // Re-arm only when the queue's wake-up moved earlier: a later wait never
  // touches the native timer, so most waits cost no reactor work at all. The
  // wake-up is the new wait's deadline, or for a wait in the queue's far
  // tier the time its bucket must move into the heap.
  if (!new_head) return;
  const auto wake = queue_.wake_deadline();
  if (!wake) return;
  const detail::time_point head = *wake;
  if (detail::is_never(head) || (armed_ && head >= armed_at_)) return;
  try {
    arm_locked(head);
  } catch (...) {
    // Out before any thread could take it (we still hold the lock).
    queue_.remove(*op);
    rearm_at_head_locked();
    throw;
  }
}

void timer_service::arm_locked(detail::time_point t) {
  if (!native_) native_ = std::make_unique<detail::native_wakeup>(*native_executor_);
  // Disarmed until the new native wait is in place: if async_wait throws,
  // the previous one is already cancelled by expires_at().
  armed_ = false;
  const std::uint64_t generation = ++generation_;
  native_->timer.expires_at(t);  // cancels the previous native wait, if any
  native_->timer.async_wait(
      [this, generation](const boost::system::error_code& ec) { on_native_expiry(ec, generation); });
  armed_ = true;
  armed_at_ = t;
}

void timer_service::rearm_at_head_locked() noexcept {
  try {
    const auto head = queue_.wake_deadline();
    if (head && !detail::is_never(*head)) arm_locked(*head);
  } catch (...) {
    // Still out of memory: the waits stay queued, and the next wait re-arms.
  }
}

void timer_service::on_native_expiry(const boost::system::error_code& ec, std::uint64_t generation) {
  std::vector<detail::task_ptr> due;
  {
    std::lock_guard lock(mutex_);
    if (ec == boost::asio::error::operation_aborted || generation != generation_ || shutting_down_) return;
    armed_ = false;
    while (detail::task_ptr t = queue_.poll()) due.push_back(std::move(t));
    rearm_at_head_locked();  // at the new wake-up; noexcept, best effort
  }
  if (due.empty()) return;
  complete_due(std::make_shared<std::vector<detail::task_ptr>>(std::move(due)), 0, 0);
}

void timer_service::complete_due(const std::shared_ptr<std::vector<detail::task_ptr>>& due, std::size_t begin,
                                 std::size_t end) {
  if (end == 0) {
    // A whole batch. A large one is shared with the context's other threads,
    // as Asio's reactor shares expired timers through the scheduler queue:
    // every chunk after the first is posted, in order (so a one-thread
    // context still completes them in deadline order), and this thread
    // completes the first chunk. A burst of due waits then runs on every io
    // thread instead of one after another on the thread the native timer woke.
    end = due->size();
    for (std::size_t c = begin + share_grain; c < end; c += share_grain)
      boost::asio::post(*native_executor_,
                        [this, due, c, e = std::min(c + share_grain, end)] { complete_due(due, c, e); });
    end = std::min(begin + share_grain, end);
  }
  // A handler that throws propagates out of io_context::run() as Asio
  // documents; the waits after it in this chunk are posted so none is lost.
  // Handlers of this context run inline (wait_op::deliver), so each one's
  // exception leaves run() on its own.
  struct completing_here {
    const boost::asio::execution_context* outer;
    explicit completing_here(const boost::asio::execution_context* ctx) noexcept
        : outer(std::exchange(detail::completing_context, ctx)) {}
    ~completing_here() { detail::completing_context = outer; }
  } scope(&context_);
  std::size_t i = begin;
  try {
    for (; i < end; ++i) fire((*due)[i]);
  } catch (...) {
    if (i + 1 < end) boost::asio::post(*native_executor_, [this, due, from = i + 1, end] { complete_due(due, from, end); });
    throw;
  }
}

void timer_service::fire(const detail::task_ptr& op) {
  if (!op->try_start()) return;  // cancelled just before it came due
  struct finish {
    const detail::task_ptr& op;
    ~finish() { op->finish_run(nullptr, detail::clock::now()); }
  } done{op};
  op->invoke();  // completes the handler with success, inline when it belongs here
}

void timer_service::dequeue_cancelled_locked(detail::wait_op_base& op) noexcept {
  // Only a natively queued wait whose cancel() is under way: a fired one
  // left the queue when it came due, a pool's waits are the pool's.
  if (op.owner() != this || !op.cancelled()) return;
  op.dequeued = true;
  std::size_t left = 0;
  if (queue_.remove(op, left) && left == 0 && armed_ && native_) {
    // Nothing left to wait for: disarm, so io_context::run() can return.
    native_->timer.cancel();
    armed_ = false;
    ++generation_;
  }
}

void timer_service::on_cancelled(detail::task_base& t) noexcept {
  // Every task this service owns is a wait. Its cancel() normally took it
  // out of the queue already, when it began the operation_aborted delivery
  // (or withdrew a discarded wait) under the same lock as the registry:
  // this thread set `dequeued` moments ago, so it reads it unlocked.
  auto& op = static_cast<detail::wait_op_base&>(t);
  if (op.dequeued) return;
  std::lock_guard lock(mutex_);
  dequeue_cancelled_locked(op);
}

bool timer_service::reschedule(detail::task_base&) { return false; }  // waits are one-shot

void timer_service::report_error(std::exception_ptr, const detail::task_base&) noexcept {}  // unused: handler errors propagate

void use_pool(boost::asio::execution_context& ctx, scheduled_thread_pool& pool) {
  boost::asio::use_service<timer_service>(ctx).use_pool(pool);
}

}  // namespace chronopool

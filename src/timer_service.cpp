// The timer service: which shard keeps a context's waits and who drives it.
// See timer_service.hpp for which threads run what.
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/detail/pool_core.hpp>


#include <stdexcept>
#include <thread>

namespace chronopool {

// Defined once, here: an id defined inline in a header can be duplicated
// across shared objects, splitting the service in two.
boost::asio::execution_context::id timer_service::id;

timer_service::timer_service(boost::asio::execution_context& ctx)
    : boost::asio::execution_context::service(ctx),
      context_(ctx),
      shard_(std::make_shared<detail::timer_shard>(ctx)) {}

timer_service::~timer_service() = default;

void timer_service::use_pool(scheduled_thread_pool& pool) {
  if (pool_set_.exchange(true))
    throw std::logic_error("chronopool::use_pool: this context's timers already use a pool");
  if (any_timer_.load()) {
    pool_set_.store(false);
    throw std::logic_error("chronopool::use_pool: call it before the first timer of the context exists");
  }
  const bool context_is_pool = &context_ == static_cast<boost::asio::execution_context*>(&pool);
  if (context_is_pool) {
    shard_->set_context_executor(pool.get_executor());
    context_known_.store(true);
  }
  shard_->use_pool(pool.core_, context_is_pool);
}

bool timer_service::driven_by_pool() const noexcept { return pool_set_.load(); }

std::size_t timer_service::pending_waits() const { return shard_->pending(); }

void timer_service::move_assign(implementation_type& impl, timer_service&, implementation_type& other) {
  destroy(impl);
  other.shard->move_timer(impl, other);
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
  shard_->set_context_executor(ex);  // the first one wins
  context_known_.store(true, std::memory_order_release);
}

void timer_service::shutdown() { shard_->shutdown(); }

void use_pool(boost::asio::execution_context& ctx, scheduled_thread_pool& pool) {
  boost::asio::use_service<timer_service>(ctx).use_pool(pool);
}

}  // namespace chronopool

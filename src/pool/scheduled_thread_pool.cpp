// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// scheduled_thread_pool: the public object forwards to its pool_core.
#include <chronopool/detail/time/periodic_schedule.hpp>
#include <chronopool/detail/pool/pool_core.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/timer_service.hpp>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace chronopool {

scheduled_thread_pool::scheduled_thread_pool(std::size_t core_pool_size)
    : scheduled_thread_pool([&] {
        scheduled_thread_pool_options o;
        o.core_pool_size = core_pool_size;
        return o;
      }()) {}

scheduled_thread_pool::scheduled_thread_pool(scheduled_thread_pool_options options)
    : core_(std::make_shared<detail::pool_core>(std::move(options))) {
  // Timers on this context keep their waits in the pool's own queue.
  timer_service& timers = asio_ns::use_service<timer_service>(*this);
  timers.use_pool(*this);
  if (pool_manual_clock* m = core_->manual_clock()) {
    // Before any timer or task exists: the pool's timers read its manual
    // time, and its system timers follow the clock's steps.
    manual_ = &m->time_;
    timers.run_on_pool_time(manual_);
    m->timers_ = &timers;
  }
}

scheduled_thread_pool::~scheduled_thread_pool() {
  core_->close();
  // As every execution context that owns threads must: threads first, then
  // the services, while our members still exist.
  asio_ns::execution_context::shutdown();
  asio_ns::execution_context::destroy();
}

void scheduled_thread_pool::enqueue(const detail::task_ptr& t, const char* where) { core_->enqueue(t, where); }
void scheduled_thread_pool::enqueue_wall(const detail::task_ptr& t, detail::sys_time instant, const char* where) {
  core_->enqueue_wall(t, instant, where);
}

void scheduled_thread_pool::submit_from_executor(const detail::task_ptr& t) { core_->submit_from_executor(t); }
bool scheduled_thread_pool::runs_plain_functions() const noexcept { return core_->runs_plain_functions(); }
void scheduled_thread_pool::submit_function(detail::queued_function* f) { core_->submit_function(f); }
void scheduled_thread_pool::work_started() noexcept { core_->work_started(); }
void scheduled_thread_pool::work_finished() noexcept { core_->work_finished(); }
void scheduled_thread_pool::report_executor_error(std::exception_ptr e) noexcept {
  core_->report_untied_error(std::move(e), "a function run by the executor", "function_failed");
}

void scheduled_thread_pool::check_periodic(duration period, const periodic_options& options, const char* where) {
  detail::validate_periodic(period, options, where);
  if (options.error_handler)
    throw std::invalid_argument(std::string("chronopool: ") + where +
                                ": periodic_options::error_handler is for handlers on executors; a pool's tasks "
                                "report to scheduled_thread_pool_options::error_handler");
}

void scheduled_thread_pool::shutdown() { core_->shutdown(); }

std::vector<pending_task> scheduled_thread_pool::shutdown_now() {
  auto tasks = core_->shutdown_now();
  std::vector<pending_task> out;
  out.reserve(tasks.size());
  for (auto& t : tasks) out.push_back(pending_task(std::move(t)));
  return out;
}

bool scheduled_thread_pool::is_shutdown() const noexcept { return core_->state() != run_state::running; }
bool scheduled_thread_pool::is_terminating() const noexcept {
  const run_state s = core_->state();
  return s != run_state::running && s != run_state::terminated;
}
bool scheduled_thread_pool::is_terminated() const noexcept { return core_->state() == run_state::terminated; }
run_state scheduled_thread_pool::state() const noexcept { return core_->state(); }

bool scheduled_thread_pool::wait_for_termination_until(time_point limit) {
  return core_->wait_for_termination_until(limit);
}

void scheduled_thread_pool::join() { core_->join(); }

bool scheduled_thread_pool::wait_until_quiet_steady(time_point horizon, duration timeout) {
  if (timeout <= duration::zero())
    throw std::invalid_argument(
        fmt::format("chronopool: wait_until_quiet: timeout must be positive, got {} ns", timeout.count()));
  return core_->wait_until_quiet(horizon, detail::deadline_after(clock::now(), timeout));
}

bool scheduled_thread_pool::remove(const scheduled_future_base& handle) {
  return handle.task_ && core_->owns(*handle.task_) && core_->remove(*handle.task_);
}

std::size_t scheduled_thread_pool::purge() { return core_->purge(); }

void scheduled_thread_pool::set_core_pool_size(std::size_t n) { core_->set_core_pool_size(n); }
std::size_t scheduled_thread_pool::core_pool_size() const noexcept { return core_->core_pool_size(); }
bool scheduled_thread_pool::prestart_core_thread() { return core_->prestart_core_thread(); }
std::size_t scheduled_thread_pool::prestart_core_threads() { return core_->prestart_core_threads(); }
void scheduled_thread_pool::allow_core_thread_timeout(bool allow) { core_->allow_core_thread_timeout(allow); }
bool scheduled_thread_pool::allows_core_thread_timeout() const noexcept { return core_->allows_core_thread_timeout(); }

void scheduled_thread_pool::set_continue_existing_periodic_tasks_after_shutdown(bool v) {
  core_->continue_periodic_after_shutdown.store(v);
  // Turning it off after shutdown cancels the periodic tasks still queued (as Java).
  if (!v && is_shutdown()) core_->shutdown();
}
bool scheduled_thread_pool::continue_existing_periodic_tasks_after_shutdown() const noexcept {
  return core_->continue_periodic_after_shutdown.load();
}
void scheduled_thread_pool::set_execute_existing_delayed_tasks_after_shutdown(bool v) {
  core_->execute_delayed_after_shutdown.store(v);
  if (!v && is_shutdown()) core_->shutdown();
}
bool scheduled_thread_pool::execute_existing_delayed_tasks_after_shutdown() const noexcept {
  return core_->execute_delayed_after_shutdown.load();
}
void scheduled_thread_pool::set_remove_on_cancel(bool v) noexcept { core_->remove_on_cancel.store(v); }
bool scheduled_thread_pool::remove_on_cancel() const noexcept { return core_->remove_on_cancel.load(); }
void scheduled_thread_pool::set_rejection_policy(rejection_policy p) noexcept { core_->rejection.store(p); }
rejection_policy scheduled_thread_pool::get_rejection_policy() const noexcept { return core_->rejection.load(); }
void scheduled_thread_pool::set_rejection_handler(std::function<void(rejected_task&)> handler) {
  core_->set_rejection_handler(std::move(handler));
}
bool scheduled_thread_pool::has_rejection_handler() const { return core_->has_rejection_handler(); }

pool_stats scheduled_thread_pool::stats() const { return core_->stats(); }
std::size_t scheduled_thread_pool::pool_size() const { return core_->pool_size(); }
std::size_t scheduled_thread_pool::largest_pool_size() const { return core_->largest_pool_size(); }
std::size_t scheduled_thread_pool::active_count() const noexcept { return core_->active_count(); }
std::size_t scheduled_thread_pool::queued_count() const { return core_->queued_count(); }
std::uint64_t scheduled_thread_pool::task_count() const {
  return core_->completed_task_count() + core_->active_count() + core_->queued_count();
}
std::uint64_t scheduled_thread_pool::completed_task_count() const noexcept { return core_->completed_task_count(); }
bool scheduled_thread_pool::running_in_this_thread() const noexcept { return core_->running_in_this_thread(); }

std::exception_ptr pending_task::run() {
  if (!task_) return {};
  const detail::task_ptr t = std::move(task_);
  return t->run_here();  // detached from the pool: this run is the last
}

}  // namespace chronopool

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// The typed parts of a task: its result storage and its callable, allocated
// together with the task's bookkeeping in one object.
#pragma once

#include <chronopool/detail/support/check_not_empty.hpp>
#include <chronopool/detail/support/handoff_allocator.hpp>
#include <chronopool/detail/pool/task_base.hpp>
#include <chronopool/detail/pool/task_ptr.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace chronopool::detail {

/// A callable that takes a std::stop_token gets the task's own token, as
/// std::jthread does; cancel(true) and shutdown_now() request it.
template <class F>
inline constexpr bool takes_stop_token_v = std::is_invocable_v<F&, std::stop_token>;

template <class F>
struct callable_result {
  using type = std::invoke_result_t<F&>;
};
template <class F>
  requires takes_stop_token_v<F>
struct callable_result<F> {
  using type = std::invoke_result_t<F&, std::stop_token>;
};
template <class F>
using callable_result_t = typename callable_result<std::decay_t<F>>::type;

template <class F>
concept task_callable = std::is_invocable_v<std::decay_t<F>&> || takes_stop_token_v<std::decay_t<F>>;

/// Result storage, shared by every task that returns R.
///
/// The value can be moved out once (take()); taken_ records it, so that
/// every later read through any handle throws future_already_retrieved
/// instead of seeing a moved-from object, and of two concurrent takes exactly
/// one moves. A read racing with the take that empties the slot is the
/// caller's data race, as with any shared object.
template <class R>
class task_with_result : public task_base {
 public:
  using task_base::task_base;
  /// The stored value. Call only once the task has succeeded. Throws
  /// std::future_error(future_already_retrieved) once it was taken.
  const R& result() const {
    if (taken_.load(std::memory_order_acquire)) throw std::future_error(std::future_errc::future_already_retrieved);
    return *result_;
  }
  /// Moves the value out, once. Call only once the task has succeeded.
  /// Throws std::future_error(future_already_retrieved) if it was taken before.
  R take() {
    if (taken_.exchange(true, std::memory_order_acq_rel))
      throw std::future_error(std::future_errc::future_already_retrieved);
    return std::move(*result_);
  }
  /// What an rvalue handle's get() hands out: the value moved out when no
  /// other handle to the task can exist (the caller's reference is the only
  /// one) or when R cannot be copied; otherwise a copy, so that other
  /// handles still see it.
  R release_or_copy() {
    if constexpr (std::is_copy_constructible_v<R>) {
      if (!this->sole_owner()) return R(result());
    }
    return take();
  }

 protected:
  std::optional<R> result_;

 private:
  std::atomic<bool> taken_{false};
};

template <>
class task_with_result<void> : public task_base {
 public:
  using task_base::task_base;
};

/// What a one-shot task has in place of a periodic_task_state: nothing.
struct no_periodic_state {};

/// A task with callable F and result R, allocated with Allocator. A
/// Periodic one holds its periodic_task_state; a one-shot one does not.
template <class F, class R, class Allocator, bool Periodic>
class task_impl final : public task_with_result<R> {
 public:
  template <class G>
  task_impl(task_kind kind, G&& g, const Allocator& a)
      : task_with_result<R>(kind), fn_(std::in_place, std::forward<G>(g)), allocator_(a) {
    if constexpr (Periodic) this->attach_periodic(schedule_);
    if constexpr (takes_stop_token_v<F>) this->stop_ = std::stop_source();
  }

 private:
  using self_allocator = typename std::allocator_traits<Allocator>::template rebind_alloc<task_impl>;

  void do_invoke() override {
    // periodic_options::until: a run taken so late that it would start at
    // or after the end does not call the callable; it ends the schedule.
    if constexpr (Periodic) {
      if (this->past_end(this->now())) [[unlikely]] {
        this->end_schedule_after_run();
        return;
      }
    }
    F& f = *fn_;
    if constexpr (std::is_void_v<R>) {
      call(f);
    } else if constexpr (std::is_same_v<R, periodic_control>) {
      // A periodic run steers its schedule; a one-shot one has a result.
      const periodic_control c = call(f);
      if constexpr (Periodic) {
        if (c == periodic_control::stop) this->end_schedule_after_run();
      } else {
        this->result_.emplace(c);
      }
    } else {
      this->result_.emplace(call(f));
    }
  }

  decltype(auto) call(F& f) {
    if constexpr (takes_stop_token_v<F>) {
      return std::invoke(f, this->stop_.get_token());
    } else {
      return std::invoke(f);
    }
  }

  void release_callable() noexcept override { fn_.reset(); }

  void destroy() noexcept override {
    self_allocator a(allocator_);
    std::allocator_traits<self_allocator>::destroy(a, this);
    std::allocator_traits<self_allocator>::deallocate(a, this, 1);
  }

  std::optional<F> fn_;
  [[no_unique_address]] Allocator allocator_;
  [[no_unique_address]] std::conditional_t<Periodic, periodic_task_state, no_periodic_state> schedule_;
};

/// The allocator a task made with @p Allocator keeps: the given one, except
/// that the default std::allocator becomes the handoff allocator, since a
/// task is usually freed by another thread than the one that made it.
template <class Allocator>
using task_allocator_t =
    std::conditional_t<std::is_same_v<typename std::allocator_traits<Allocator>::template rebind_alloc<void>, std::allocator<void>>,
                       handoff_allocator<void>, Allocator>;

/// Allocates a task for @p f with @p given (rebound to the task's type, the
/// default allocator replaced as task_allocator_t says). One allocation
/// holds the callable, the result slot, the bookkeeping and, for a Periodic
/// task, its schedule.
template <bool Periodic, class F, class Allocator>
task_ptr allocate_task(task_kind kind, F&& f, const Allocator& given) {
  using fn_type = std::decay_t<F>;
  using result_type = callable_result_t<fn_type>;
  static_assert(!std::is_reference_v<result_type>, "chronopool: a task must return a value or void, not a reference");
  using alloc_type = task_allocator_t<Allocator>;
  using impl = task_impl<fn_type, result_type, alloc_type, Periodic>;
  using impl_allocator = typename std::allocator_traits<alloc_type>::template rebind_alloc<impl>;
  const alloc_type alloc = [&] {
    if constexpr (std::is_same_v<alloc_type, Allocator>) {
      return given;
    } else {
      return alloc_type();
    }
  }();
  impl_allocator a(alloc);
  impl* p = std::allocator_traits<impl_allocator>::allocate(a, 1);
  try {
    std::allocator_traits<impl_allocator>::construct(a, p, kind, std::forward<F>(f), alloc);
  } catch (...) {
    std::allocator_traits<impl_allocator>::deallocate(a, p, 1);
    throw;
  }
  return task_ptr(p);
}

/// A one-shot task for @p f: no periodic_task_state.
template <class F, class Allocator = std::allocator<void>>
task_ptr make_one_shot_task(F&& f, const Allocator& alloc = Allocator()) {
  return allocate_task<false>(task_kind::one_shot, std::forward<F>(f), alloc);
}

/// A periodic task (@p kind fixed_rate or fixed_delay) for @p f; give it its
/// schedule with set_periodic() before queueing it.
template <class F, class Allocator = std::allocator<void>>
task_ptr make_periodic_task(task_kind kind, F&& f, const Allocator& alloc = Allocator()) {
  return allocate_task<true>(kind, std::forward<F>(f), alloc);
}

/// A task of @p kind, either form (for callers that pick the kind at run
/// time; each form is instantiated).
template <class F, class Allocator = std::allocator<void>>
task_ptr make_task(task_kind kind, F&& f, const Allocator& alloc = Allocator()) {
  if (kind == task_kind::one_shot) return make_one_shot_task(std::forward<F>(f), alloc);
  return make_periodic_task(kind, std::forward<F>(f), alloc);
}

}  // namespace chronopool::detail

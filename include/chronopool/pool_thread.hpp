// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// A pool thread as a thread factory hands it to the pool.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

namespace chronopool {

/// A thread type the pool can keep: movable, with joinable(), join() and
/// detach() (std::thread, std::jthread, boost::thread, or a small wrapper of
/// a native handle, e.g. a pthread made with a stack size).
template <class T>
concept joinable_thread = std::movable<T> && requires(T& t) {
  { t.joinable() } -> std::convertible_to<bool>;
  t.join();
  t.detach();
};

/// A started thread, as the pool keeps it: it joins it once the thread has
/// left the pool (or detaches it when the pool is destroyed from one of its
/// own threads). Built implicitly from any joinable_thread; a default-made
/// one, or one made from a thread that is not joinable, is "no thread".
///
/// @par Thread Safety
/// Distinct objects may be used concurrently; one object is not shared.
class pool_thread {
 public:
  pool_thread() noexcept = default;
  /// Takes @p t (no allocation).
  pool_thread(std::thread t) noexcept : thread_(std::move(t)) {}  // NOLINT: implicit by design
  /// Takes any other thread type. Should its holder not be allocated, @p t
  /// is detached (it cannot be kept) and std::bad_alloc propagates.
  template <class Thread>
    // pool_thread itself is excluded first: checking joinable_thread<pool_thread>
    // would ask whether pool_thread is movable, i.e. consider this constructor again.
    requires(!std::is_same_v<std::remove_cvref_t<Thread>, pool_thread>) &&
            (!std::is_same_v<std::remove_cvref_t<Thread>, std::thread>) && (!std::is_lvalue_reference_v<Thread>) &&
            joinable_thread<std::remove_cvref_t<Thread>>
  pool_thread(Thread&& t) {  // NOLINT: implicit by design
    using held = std::remove_cvref_t<Thread>;
    if (!t.joinable()) return;
    try {
      other_ = std::make_unique<holder<held>>(std::move(t));
    } catch (...) {
      if (t.joinable()) t.detach();
      throw;
    }
  }

  /// Takes over the source's thread; the source is left as "no thread".
  pool_thread(pool_thread&&) noexcept = default;
  /// Takes over the source's thread. Join or detach the thread held before
  /// first: a joinable std::thread replaced this way calls std::terminate.
  pool_thread& operator=(pool_thread&&) noexcept = default;
  pool_thread(const pool_thread&) = delete;
  pool_thread& operator=(const pool_thread&) = delete;
  ~pool_thread() = default;

  /// Whether a thread is held that has been neither joined nor detached.
  bool joinable() const noexcept { return thread_.joinable() || (other_ && other_->joinable()); }
  /// Waits for the thread to end; afterwards not joinable.
  void join() {
    if (thread_.joinable()) thread_.join();
    if (other_) {
      if (other_->joinable()) other_->join();
      other_.reset();
    }
  }
  /// Lets the thread run on unowned; afterwards not joinable.
  void detach() {
    if (thread_.joinable()) thread_.detach();
    if (other_) {
      if (other_->joinable()) other_->detach();
      other_.reset();
    }
  }

 private:
  struct holder_base {
    virtual ~holder_base() = default;
    virtual bool joinable() noexcept = 0;
    virtual void join() = 0;
    virtual void detach() = 0;
  };
  template <class T>
  struct holder final : holder_base {
    explicit holder(T&& t) : thread(std::move(t)) {}
    bool joinable() noexcept override { return static_cast<bool>(thread.joinable()); }
    void join() override { thread.join(); }
    void detach() override { thread.detach(); }
    T thread;
  };

  std::thread thread_;
  std::unique_ptr<holder_base> other_;
};

/// Starts one pool thread (Java's ThreadFactory); see
/// scheduled_thread_pool_options::thread_factory.
using thread_factory = std::function<pool_thread(std::size_t thread_index, std::function<void()> body)>;

}  // namespace chronopool

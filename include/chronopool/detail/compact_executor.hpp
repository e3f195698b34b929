// A timer's executor in one word when it is a context's plain executor.
//
// Asio's timers keep an any_io_executor (56 bytes here: a small buffer for
// the target plus two function tables) in every timer object. Almost every
// timer is made from a context or its executor, whose whole state is the
// context's address, so a million pending timeouts would spend 56 MB on
// copies of a few pointers. For any_io_executor this keeps a tagged pointer
// instead: the io_context or scheduled_thread_pool whose default executor it
// is, or, for anything else (a strand, an executor with properties
// preferred, a context of another kind), a boxed copy on the heap. get()
// rebuilds an equal any_io_executor. Other executor types are kept as they are.
#pragma once

#include <chronopool/scheduled_thread_pool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <typeinfo>
#include <utility>

namespace chronopool::detail {

template <class Executor>
class compact_executor {
 public:
  explicit compact_executor(const Executor& ex) : ex_(ex) {}

  Executor get() const { return ex_; }
  /// Calls @p f with the executor as a const Executor&.
  template <class F>
  decltype(auto) with(F&& f) const {
    return std::forward<F>(f)(ex_);
  }

 private:
  Executor ex_;
};

template <>
class compact_executor<boost::asio::any_io_executor> {
  using io_executor = boost::asio::io_context::executor_type;
  using pool_executor = scheduled_thread_pool::executor_type;
  // The low two bits of word_ say what the rest points at.
  enum kind : std::uintptr_t { io_kind = 0, pool_kind = 1, boxed_kind = 2, kind_mask = 3 };
  static_assert(alignof(boost::asio::io_context) > kind_mask && alignof(scheduled_thread_pool) > kind_mask &&
                alignof(boost::asio::any_io_executor) > kind_mask);

 public:
  explicit compact_executor(const boost::asio::any_io_executor& ex) : word_(encode(ex)) {}
  compact_executor(const compact_executor& o) : word_(o.kind_of() == boxed_kind ? box(*o.boxed()) : o.word_) {}
  compact_executor& operator=(const compact_executor& o) {
    compact_executor copy(o);
    std::swap(word_, copy.word_);
    return *this;
  }
  ~compact_executor() {
    if (kind_of() == boxed_kind) delete boxed();
  }

  boost::asio::any_io_executor get() const {
    switch (kind_of()) {
      case io_kind:
        return reinterpret_cast<boost::asio::io_context*>(word_)->get_executor();
      case pool_kind:
        return reinterpret_cast<scheduled_thread_pool*>(word_ & ~std::uintptr_t{kind_mask})->get_executor();
      default:
        return *boxed();
    }
  }
  /// Calls @p f with the executor as a const any_io_executor& (a rebuilt
  /// one, alive for the call, unless it is boxed).
  template <class F>
  decltype(auto) with(F&& f) const {
    if (kind_of() == boxed_kind) return std::forward<F>(f)(*boxed());
    const boost::asio::any_io_executor ex = get();
    return std::forward<F>(f)(ex);
  }

 private:
  static std::uintptr_t encode(const boost::asio::any_io_executor& ex) {
    // Only an executor equal to its context's default one: anything with a
    // property preferred must come back from get() with it.
    // By the target's type and the context query rather than through
    // target<>(): GCC 12 then sees no read of a target that is not there.
    if (ex.target_type() == typeid(io_executor)) return fold<boost::asio::io_context>(ex, io_kind);
    if (ex.target_type() == typeid(pool_executor)) return fold<scheduled_thread_pool>(ex, pool_kind);
    return box(ex);
  }
  /// @p ex's context tagged @p k when @p ex is that context's own executor, else a boxed copy.
  template <class Context>
  static std::uintptr_t fold(const boost::asio::any_io_executor& ex, kind k) {
    auto& ctx = static_cast<Context&>(boost::asio::query(ex, boost::asio::execution::context));
    if (ex == boost::asio::any_io_executor(ctx.get_executor())) return reinterpret_cast<std::uintptr_t>(&ctx) | k;
    return box(ex);
  }
  static std::uintptr_t box(const boost::asio::any_io_executor& ex) {
    return reinterpret_cast<std::uintptr_t>(new boost::asio::any_io_executor(ex)) | boxed_kind;
  }
  kind kind_of() const noexcept { return static_cast<kind>(word_ & kind_mask); }
  boost::asio::any_io_executor* boxed() const noexcept {
    return reinterpret_cast<boost::asio::any_io_executor*>(word_ & ~std::uintptr_t{kind_mask});
  }

  std::uintptr_t word_;
};

}  // namespace chronopool::detail

// Cancelled inline waits on their way to delivery, many to a block.
//
// A timer's inline wait (see timer_impl) must leave the timer object when it
// is cancelled: the handler runs later, from the shard's abort batch, and by
// then its owner may have destroyed or moved the timer. Moving each into a
// block of its own made a mass cancel allocate once per wait (a million
// timeouts cancelled at once: 58 -> 221 ns a cancel, mostly fresh pages).
// Instead the handler word moves into a record of a chunk, a block that
// stands in the abort batch like one wait and holds up to `capacity` of
// them: consecutive aborts share it, so the batch keeps cancel order and a
// mass cancel allocates once per `capacity` waits.
#pragma once

#include <chronopool/detail/wait_op.hpp>

#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

namespace chronopool::detail {

class inline_abort_chunk final : public wait_op_base {
 public:
  /// 14 records of 16 bytes beside the 48-byte wait: a 288-byte block.
  static constexpr std::size_t capacity = 14;

  /// Throws std::bad_alloc.
  static inline_abort_chunk* make() { return new inline_abort_chunk(); }
  /// A delivered chunk made ready for new records (see timer_shard's spare chunks).
  static inline_abort_chunk* reuse(inline_abort_chunk* done) noexcept {
    done->~inline_abort_chunk();
    return ::new (static_cast<void*>(done)) inline_abort_chunk();
  }

  bool full() const noexcept { return count_ == capacity; }
  /// Records not delivered yet.
  std::size_t remaining() const noexcept { return count_ - next_; }
  /// Takes @p t's inline wait (out of the index) in: its handler moves here
  /// and the inline wait is freed.
  void add(timer_impl& t) noexcept {
    record& r = records_[count_++];
    r.ops = t.inline_ops();
    r.ops->relocate(r.handler, t.inline_storage());
    t.free_inline();
  }
  /// Delivers the next record (operation_aborted); the chunk stays, with
  /// the records after it, when its handler throws. Not the last one (see
  /// complete_last).
  void complete_next() {
    record& r = records_[next_++];
    r.ops->complete(r.handler, boost::asio::error::operation_aborted);
  }
  /// Delivers the last record, after handing the chunk to @p recycle (so
  /// that the memory is back before the handler runs, which may cancel).
  template <class Recycle>
  void complete_last(Recycle&& recycle) {
    record r = records_[next_++];
    recycle(this);
    r.ops->complete(r.handler, boost::asio::error::operation_aborted);
  }

 private:
  struct record {
    const inline_wait_ops* ops;
    alignas(void*) unsigned char handler[sizeof(void*)];
  };

  // The free list of spare chunks links them through the wait's inbox link.
  friend class timer_shard;

  inline_abort_chunk() noexcept : wait_op_base(&do_action) {
    mark_chunk();
    aborted = true;
    state.store(wait_state::aborted, std::memory_order_relaxed);
  }

  static void do_action(wait_op_base* base, action a) {
    auto* self = static_cast<inline_abort_chunk*>(base);
    switch (a) {
      case action::complete: {
        // Every record, as a last resort (deliver() takes them one by one):
        // one that throws does not keep the others from running.
        std::exception_ptr first_error;
        while (self->remaining() > 1) {
          try {
            self->complete_next();
          } catch (...) {
            if (!first_error) first_error = std::current_exception();
          }
        }
        try {
          self->complete_last([](inline_abort_chunk* c) { delete c; });
        } catch (...) {
          if (!first_error) first_error = std::current_exception();
        }
        if (first_error) std::rethrow_exception(first_error);
        return;
      }
      case action::discard: {
        for (; self->next_ < self->count_; ++self->next_) {
          record& r = self->records_[self->next_];
          r.ops->destroy(r.handler);
        }
        delete self;
        return;
      }
      case action::release: delete self; return;
    }
  }

  record records_[capacity];
  std::uint8_t count_ = 0;
  std::uint8_t next_ = 0;
};

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Cancelled inline waits on their way to delivery, many to a block. A
// cancelled inline wait (see timer_impl) must leave its timer object, whose
// owner may destroy or move it before the abort batch is delivered: its
// handler moves into a record of a chunk, a block that stands in the abort
// batch like one wait and holds many, so a mass cancel allocates once per
// chunk, not once per wait, and the batch keeps cancel order. A chunk's
// records share one handler type, so a record is the handler alone (one or
// two words), and fewer cache lines pass from the cancelling core to the
// delivering one.
#pragma once

#include <chronopool/detail/timer/wait_op.hpp>

#include <chronopool/detail/config/asio.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

namespace chronopool::detail {

class inline_abort_chunk final : public wait_op_base {
 public:
  /// 28 words of records (28 one-word handlers, 14 two-word ones) beside
  /// the 48-byte wait and the operations: a 288-byte block.
  static constexpr std::size_t capacity_words = 28;

  /// Throws std::bad_alloc.
  static inline_abort_chunk* make() { return new inline_abort_chunk(); }
  /// A delivered chunk made ready for new records (see timer_shard's spare chunks).
  static inline_abort_chunk* reuse(inline_abort_chunk* done) noexcept {
    done->~inline_abort_chunk();
    return ::new (static_cast<void*>(done)) inline_abort_chunk();
  }

  /// Whether a record for a handler of @p ops fits.
  bool takes(const inline_wait_ops* ops) const noexcept {
    return count_ == 0 || (ops_ == ops && (count_ + std::size_t{1}) * ops->words <= capacity_words);
  }
  /// Records not delivered yet.
  std::size_t remaining() const noexcept { return count_ - next_; }
  /// Takes @p t's inline wait (out of the index) in: its handler moves here
  /// and the inline wait is freed.
  void add(timer_impl& t) noexcept {
    ops_ = t.inline_ops();
    ops_->relocate(record_at(count_++), t.inline_storage());
    t.free_inline();
  }
  /// Delivers the next record (operation_aborted); the chunk stays, with
  /// the records after it, when its handler throws. Not the last one (see
  /// complete_last).
  void complete_next() { ops_->complete(record_at(next_++), asio_ns::error::operation_aborted); }
  /// Delivers the last record, after handing the chunk to @p recycle (so
  /// that the memory is back before the handler runs, which may cancel).
  template <class Recycle>
  void complete_last(Recycle&& recycle) {
    // The handler moves out first (a relocation, which cannot throw): the
    // chunk may be reused once recycled.
    const inline_wait_ops* const ops = ops_;
    alignas(void*) unsigned char handler[timer_impl::inline_words * sizeof(void*)];
    ops->relocate(handler, record_at(next_++));
    recycle(this);
    ops->complete(handler, asio_ns::error::operation_aborted);
  }

 private:
  void* record_at(std::size_t i) noexcept { return records_ + i * ops_->words * sizeof(void*); }

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
        for (; self->next_ < self->count_; ++self->next_) self->ops_->destroy(self->record_at(self->next_));
        delete self;
        return;
      }
      case action::release: delete self; return;
    }
  }

  const inline_wait_ops* ops_ = nullptr;  // of every record
  alignas(void*) unsigned char records_[capacity_words * sizeof(void*)];
  std::uint8_t count_ = 0;
  std::uint8_t next_ = 0;
};

}  // namespace chronopool::detail

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Fuzz target: chronopool::steady_timer on an io_context, against a model.
//
// The bytes decode into operations on up to four timers, run on one thread:
// construct (three ways), destroy, move-construct, move-assign, expires_at,
// expires_after, async_wait (plain or with a per-operation cancellation
// slot), cancel, cancel_one, emitting a wait's cancellation signal, and
// io_context poll_one/poll. Expiries come from the whole clock range but are
// either past (due at once) or at least an hour away, so the model knows
// which waits may fire. The model says, for every wait, whether it may still
// fire or must complete with operation_aborted; each handler checks that as
// it runs, and must run at most once. When the ops are done, settling the
// io_context must complete exactly the waits the model expects, with the
// counts cancel()/expires_*() returned, pending_waits() must agree, and every
// handler object must be destroyed once the context is gone.
#include "byte_reader.hpp"

#include <chronopool/steady_timer.hpp>
#include <chronopool/timer_service.hpp>

#include "../support/asio.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

namespace {

using namespace std::chrono_literals;
using sys_ns::error_code;
using timer = chronopool::steady_timer;
using clock = std::chrono::steady_clock;
using time_point = clock::time_point;
using duration = clock::duration;

[[noreturn]] void mismatch(const char* what) {
  std::fprintf(stderr, "timer_ops: model mismatch: %s\n", what);
  std::abort();
}

void expect(bool ok, const char* what) {
  if (!ok) mismatch(what);
}

/// Live handler objects: all must be gone once the io_context is.
long live_handlers = 0;

struct handler_token {
  handler_token() noexcept { ++live_handlers; }
  handler_token(const handler_token&) noexcept { ++live_handlers; }
  handler_token& operator=(const handler_token&) = delete;
  ~handler_token() { --live_handlers; }
};

struct wait_record {
  enum class state { may_fire, must_abort, done };
  time_point deadline;  // the timer's expiry when the wait started
  state expected = state::may_fire;
  int calls = 0;
  error_code ec;
  bool has_slot = false;
  asio::cancellation_signal signal;  // per-operation cancellation, when has_slot
  class harness* owner = nullptr;    // for a small_handler
};

class harness;

/// A handler of one or two words (@p Extra: nothing, or a second word) that
/// moves without throwing: a wait started with it on a timer with none
/// pending lives in the timer itself (see chronopool::detail::timer_impl).
/// Counted live as handler_token counts (moved-from ones are empty).
struct no_second_word {};
template <class Extra>
class small_handler {
 public:
  explicit small_handler(wait_record* w) noexcept : w_(w) { ++live_handlers; }
  small_handler(small_handler&& o) noexcept : w_(std::exchange(o.w_, nullptr)), extra_(o.extra_) {}
  small_handler& operator=(small_handler&&) = delete;
  ~small_handler() {
    if (w_ != nullptr) --live_handlers;
  }
  void operator()(const error_code& ec);

 private:
  wait_record* w_;
  [[no_unique_address]] Extra extra_{};
};
using one_word_handler = small_handler<no_second_word>;
using two_word_handler = small_handler<std::uintptr_t>;
static_assert(sizeof(one_word_handler) == sizeof(void*) && sizeof(two_word_handler) == 2 * sizeof(void*));

struct timer_model {
  std::unique_ptr<timer> t;
  time_point expiry{};
  std::vector<wait_record*> waiting;  // started on this timer, may still fire, oldest first
};

class harness {
 public:
  explicit harness(fuzz::byte_reader& in) : in_(in), base_(clock::now()) {}

  void run() {
    {
      // How it ends (the first byte): either settle, then destroy (every wait
      // completes), or destroy the timers and then the context without
      // running it again (pending handlers are destroyed, never called).
      const bool run_to_the_end = in_.pick(2) == 0;
      for (int steps = 0; !in_.empty() && steps < 2048; ++steps) step();
      if (run_to_the_end) settle();
      for (std::size_t i = 0; i < timers_.size(); ++i) destroy(i);
      if (run_to_the_end) {
        settle();
        for (const auto& w : waits_) expect(w.expected == wait_record::state::done, "a wait never completed");
        expect(service().pending_waits() == 0, "pending_waits() is not zero at the end");
      }
      io_.reset();
    }
    for (const auto& w : waits_) {
      if (w.expected == wait_record::state::must_abort)
        expect(w.calls == 0, "a handler ran after its context was destroyed");
    }
    expect(live_handlers == 0, "handler objects outlived the io_context");
  }

 private:
  chronopool::timer_service& service() { return asio::use_service<chronopool::timer_service>(*io_); }

  time_point expiry_point() {
    switch (in_.pick(7)) {
      case 0: return time_point::min();
      case 1: return time_point{};
      case 2: return base_ - std::chrono::microseconds(in_.integral<std::uint16_t>());  // past
      case 3: return base_ + 1h + std::chrono::milliseconds(in_.byte());              // far
      case 4: return time_point::max();                                                // never
      case 5: return time_point::max() - std::chrono::nanoseconds(1 + in_.byte());
      default: return base_;
    }
  }

  duration expiry_delay() {
    switch (in_.pick(5)) {
      case 0: return duration::min();
      case 1: return -std::chrono::microseconds(in_.integral<std::uint16_t>());
      case 2: return duration::zero();
      case 3: return 1h + std::chrono::milliseconds(in_.byte());
      default: return duration::max();
    }
  }

  timer_model* existing() {
    timer_model& m = timers_[in_.pick(timers_.size())];
    return m.t ? &m : nullptr;
  }

  /// Every wait that may still fire on @p m must now complete with operation_aborted.
  std::size_t abort_all(timer_model& m) {
    for (wait_record* w : m.waiting) w->expected = wait_record::state::must_abort;
    const std::size_t n = m.waiting.size();
    m.waiting.clear();
    return n;
  }

  void destroy(std::size_t i) {
    timer_model& m = timers_[i];
    if (!m.t) return;
    abort_all(m);
    m.t.reset();
  }

  void on_complete(wait_record& w, const error_code& ec) {
    ++w.calls;
    w.ec = ec;
    expect(w.calls == 1, "a handler ran twice");
    if (!ec) {
      expect(w.expected == wait_record::state::may_fire, "a cancelled wait completed with success");
      expect(w.deadline <= clock::now(), "a wait completed before its expiry");
      for (auto& m : timers_) std::erase(m.waiting, &w);
    } else {
      expect(ec == asio::error::operation_aborted, "a wait completed with an unexpected error");
      expect(w.expected == wait_record::state::must_abort, "a wait was aborted that nobody cancelled");
    }
    w.expected = wait_record::state::done;
  }

  /// Runs the context until every completion the model expects has run.
  void settle() {
    const time_point now = clock::now();
    auto outstanding = [&] {
      for (const auto& w : waits_)
        if (w.expected == wait_record::state::must_abort ||
            (w.expected == wait_record::state::may_fire && w.deadline <= now))
          return true;
      return false;
    };
    for (int i = 0; i < 10000 && outstanding(); ++i) {
      io_->restart();
      io_->poll();
    }
    expect(!outstanding(), "due or cancelled waits did not complete");
    for (const auto& w : waits_)
      if (w.expected == wait_record::state::may_fire) expect(w.calls == 0, "a far wait fired");
  }

  void step() {
    switch (in_.pick(13)) {
      case 0: {  // construct
        timer_model& m = timers_[in_.pick(timers_.size())];
        if (m.t) break;
        switch (in_.pick(3)) {
          case 0:
            m.t = std::make_unique<timer>(*io_);
            m.expiry = time_point{};
            break;
          case 1:
            m.expiry = expiry_point();
            m.t = std::make_unique<timer>(*io_, m.expiry);
            break;
          default: {
            const duration d = expiry_delay();
            m.t = std::make_unique<timer>(*io_, d);
            m.expiry = m.t->expiry();
            break;
          }
        }
        break;
      }
      case 1: {  // destroy: pending waits are aborted
        destroy(in_.pick(timers_.size()));
        break;
      }
      case 2: {  // expires_at
        timer_model* m = existing();
        if (!m) break;
        const time_point e = expiry_point();
        const std::size_t expected = abort_all(*m);
        expect(m->t->expires_at(e) == expected, "expires_at returned a wrong count");
        m->expiry = e;
        expect(m->t->expiry() == e, "expiry() differs from what expires_at set");
        break;
      }
      case 3: {  // expires_after: saturating now + d
        timer_model* m = existing();
        if (!m) break;
        const duration d = expiry_delay();
        const std::size_t expected = abort_all(*m);
        const time_point before = clock::now();
        expect(m->t->expires_after(d) == expected, "expires_after returned a wrong count");
        m->expiry = m->t->expiry();
        if (d == duration::max()) expect(m->expiry == time_point::max(), "expires_after(max) is not 'never'");
        if (d >= duration::zero() && d < 2h) expect(m->expiry >= before + d, "expires_after set an early expiry");
        if (d <= duration::zero()) expect(m->expiry <= clock::now(), "expires_after(<= 0) is not due");
        break;
      }
      case 4:
      case 5: {  // async_wait, sometimes with a cancellation slot
        timer_model* m = existing();
        if (!m) break;
        wait_record& w = waits_.emplace_back();
        w.deadline = m->expiry;
        w.has_slot = in_.pick(2) == 0;
        auto h = [this, &w, token = handler_token()](const error_code& ec) {
          (void)token;
          on_complete(w, ec);
        };
        if (!w.has_slot && in_.pick(2) == 0) {
          w.owner = this;
          // Inline when the timer has no wait.
          if (waits_.size() % 2 == 0) {
            m->t->async_wait(one_word_handler(&w));
          } else {
            m->t->async_wait(two_word_handler(&w));
          }
        } else if (w.has_slot) {
          m->t->async_wait(asio::bind_cancellation_slot(w.signal.slot(), std::move(h)));
        } else {
          m->t->async_wait(std::move(h));
        }
        m->waiting.push_back(&w);
        break;
      }
      case 6: {  // cancel
        timer_model* m = existing();
        if (!m) break;
        const std::size_t expected = abort_all(*m);
        expect(m->t->cancel() == expected, "cancel returned a wrong count");
        break;
      }
      case 7: {  // cancel_one: the oldest wait that may still fire
        timer_model* m = existing();
        if (!m) break;
        const std::size_t expected = m->waiting.empty() ? 0 : 1;
        if (expected) {
          m->waiting.front()->expected = wait_record::state::must_abort;
          m->waiting.erase(m->waiting.begin());
        }
        expect(m->t->cancel_one() == expected, "cancel_one returned a wrong count");
        break;
      }
      case 8: {  // per-operation cancellation of one wait
        if (waits_.empty()) break;
        wait_record& w = waits_[in_.pick(waits_.size())];
        if (!w.has_slot) break;
        if (w.expected == wait_record::state::may_fire) {
          w.expected = wait_record::state::must_abort;
          for (auto& m : timers_) std::erase(m.waiting, &w);
        }
        w.signal.emit(in_.pick(2) == 0 ? asio::cancellation_type::terminal : asio::cancellation_type::total);
        break;
      }
      case 9: {  // move-construct into an empty slot: the source is as if new
        timer_model& to = timers_[in_.pick(timers_.size())];
        timer_model* from = existing();
        if (to.t || !from) break;
        to.t = std::make_unique<timer>(std::move(*from->t));
        to.expiry = from->expiry;
        to.waiting = std::move(from->waiting);
        from->waiting.clear();
        from->expiry = time_point{};
        expect(to.t->expiry() == to.expiry && from->t->expiry() == time_point{}, "move construction lost the expiry");
        break;
      }
      case 10: {  // move-assign: the target's waits are aborted, the source's move over
        timer_model* to = existing();
        timer_model* from = existing();
        if (!to || !from || to == from) break;
        abort_all(*to);
        *to->t = std::move(*from->t);
        to->expiry = from->expiry;
        to->waiting = std::move(from->waiting);
        from->waiting.clear();
        from->expiry = time_point{};
        expect(to->t->expiry() == to->expiry, "move assignment lost the expiry");
        break;
      }
      case 11: {  // run a little: handlers check themselves as they run
        io_->restart();
        if (in_.pick(2) == 0) {
          io_->poll_one();
        } else {
          io_->poll();
        }
        break;
      }
      default: {  // settle, and compare the registry with the model
        settle();
        std::size_t may_fire = 0;
        for (const auto& w : waits_) may_fire += w.expected == wait_record::state::may_fire;
        expect(service().pending_waits() == may_fire, "pending_waits() disagrees with the model");
        break;
      }
    }
  }

  fuzz::byte_reader& in_;
  const time_point base_;
  std::deque<wait_record> waits_;  // outlives the context: handlers point into it
  std::unique_ptr<asio::io_context> io_ = std::make_unique<asio::io_context>();
  std::array<timer_model, 4> timers_;  // destroyed before io_ (declared after it)

  template <class Extra>
  friend class small_handler;
};

template <class Extra>
void small_handler<Extra>::operator()(const error_code& ec) {
  w_->owner->on_complete(*w_, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    fuzz::byte_reader in(data, size);
    harness h(in);
    h.run();
  }
  if (live_handlers != 0) mismatch("handler objects leaked");
  return 0;
}

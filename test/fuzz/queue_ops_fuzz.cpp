// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Fuzz target: delayed_work_queue against a model.
//
// The bytes decode into a sequence of queue operations — offer, offer_within,
// offer_now, remove (queued, no longer queued, queued in another queue), poll,
// pop_head, drain, remove_if, cancel while queued, a non-blocking
// wait_for_task, mode changes — with deadlines from the whole clock range
// (its minimum and maximum, "now", far past and future, raw values), on
// queues whose near window the input picks (2 ns to 4 s), so that tasks
// cross from the far tier into the heap while the run goes on. The
// model is an ordered map keyed by (deadline, sequence), sequences growing as
// a pool's do. After every operation the queue's answers, size, head
// deadline and check_invariants() must agree with the model; any difference
// aborts. Tasks are counted by their allocator, so a leaked or doubly freed
// task shows up even without a sanitizer.
//
// Periodic tasks owned by a stand-in for the pool (withdraw, park and
// reschedule on this queue) also go through the controls of
// scheduled_future<void>: pause takes a queued one out, resume puts it back
// at its ideal instant, reschedule_next moves it, trigger_now moves it no
// later; the model follows, so a control that lost or doubled a queued
// task is a size or order mismatch.
#include "byte_reader.hpp"

#include <chronopool/detail/queue/delayed_work_queue.hpp>
#include <chronopool/detail/pool/task_impl.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace {

namespace cpd = chronopool::detail;
using namespace std::chrono_literals;
using cpd::clock;
using cpd::task_ptr;
using cpd::time_point;
using queue = cpd::delayed_work_queue;

[[noreturn]] void mismatch(const char* what) {
  std::fprintf(stderr, "queue_ops: model mismatch: %s\n", what);
  std::abort();
}

void expect(bool ok, const char* what) {
  if (!ok) mismatch(what);
}

/// Counts live tasks: every input must end with none.
long live_tasks = 0;

template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    ++live_tasks;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    --live_tasks;
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  friend bool operator==(const counting_allocator&, const counting_allocator<U>&) noexcept {
    return true;
  }
};

using key = std::pair<time_point::rep, std::uint64_t>;  // (deadline, sequence)

key key_of(const cpd::task_base& t) { return {t.deadline().time_since_epoch().count(), t.sequence()}; }

/// The pool's part in the controls, on one queue: a paused task is kept by
/// the harness, a re-queued one is offered here.
class queue_owner final : public cpd::task_owner {
 public:
  explicit queue_owner(cpd::delayed_work_queue& q) : q_(q) {}
  void on_cancelled(cpd::task_base&) noexcept override {}
  bool reschedule(cpd::task_base& t) override { return last_offer = q_.offer(task_ptr(&t)); }
  void report_error(std::exception_ptr, const cpd::task_base&) noexcept override {}
  bool withdraw(cpd::task_base& t) noexcept override { return q_.remove(t); }
  bool park(cpd::task_base& t, bool from_queue) noexcept override { return !from_queue || q_.remove(t); }
  bool last_offer = false;

 private:
  cpd::delayed_work_queue& q_;
};

class harness {
 public:
  // The first byte picks the near window, from 2 ns to about 4 s: small ones
  // move tasks from the far tier into the heap all through a run.
  explicit harness(fuzz::byte_reader& in)
      : in_(in), base_(clock::now()), near_bits_(1 + static_cast<unsigned>(in_.pick(32))), other_(near_bits_),
        q_(near_bits_), owner_(q_) {}

  void run() {
    for (int steps = 0; !in_.empty() && steps < 4096; ++steps) {
      step();
      check();
    }
    // The destructor releases what is still queued; drop our references too.
  }

 private:
  task_ptr make(time_point deadline) {
    task_ptr t = cpd::make_task(cpd::task_kind::one_shot, [] {}, counting_allocator<void>());
    t->set_deadline(deadline);
    t->set_sequence(next_sequence_++);
    return t;
  }

  time_point deadline() {
    switch (in_.pick(9)) {
      case 0: return time_point::min() + std::chrono::nanoseconds(in_.byte());
      case 1: return base_ - std::chrono::milliseconds(in_.byte());  // due, many ties
      case 2: return base_ - std::chrono::nanoseconds(in_.integral<std::uint32_t>());
      case 3: return base_ + 1h + std::chrono::milliseconds(in_.byte());  // not due during a run
      case 4: return time_point::max();                                  // "never"
      case 5: return time_point::max() - std::chrono::nanoseconds(1 + in_.byte());
      case 6: return time_point(cpd::duration(in_.integral<std::int64_t>()));  // anything at all
      case 7: return base_ + std::chrono::nanoseconds(in_.integral<std::uint32_t>());  // due during a run, or soon after
      default: return base_;
    }
  }

  /// A queued task chosen by the input, or null.
  const task_ptr* pick_queued() {
    if (model_.empty()) return nullptr;
    auto it = model_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(in_.pick(model_.size())));
    return &it->second;
  }

  void queued(task_ptr t) {
    const key k = key_of(*t);
    expect(model_.emplace(k, std::move(t)).second, "duplicate key in the model");
  }

  /// The model's head, taken out, for a queue answer that must equal it.
  void took(const task_ptr& got, const char* what) {
    expect(got && !model_.empty() && got == model_.begin()->second, what);
    out_.push_back(got);
    model_.erase(model_.begin());
  }

  /// The head of the model is due at @p before and must be returned; not
  /// due at @p after and must not; in between either answer is right.
  void check_due_answer(const task_ptr& got, time_point before, time_point after, const char* what) {
    if (model_.empty()) return expect(!got, what);
    const time_point head(cpd::duration(model_.begin()->first.first));
    if (head <= before) return took(got, what);
    if (head > after) return expect(!got, what);
    if (got) took(got, what);
  }

  void step() {
    switch (in_.pick(16)) {
      case 0: {  // offer
        task_ptr t = make(deadline());
        expect(q_.offer(t), "offer refused a live task");
        queued(std::move(t));
        break;
      }
      case 1: {  // offer_within a bound around the current size
        task_ptr t = make(deadline());
        const std::size_t bound = in_.pick(model_.size() + 3);
        const auto r = q_.offer_within(t, bound);
        if (model_.size() >= bound) {
          expect(r == queue::offer_status::full, "offer_within ignored its bound");
        } else {
          expect(r == queue::offer_status::queued, "offer_within refused below its bound");
          queued(std::move(t));
        }
        break;
      }
      case 2: {  // offer_now: due the moment it is queued
        task_ptr t = make(clock::now());
        expect(q_.offer_now(t), "offer_now refused a live task");
        queued(std::move(t));
        break;
      }
      case 3: {  // a task cancelled before it is offered is refused, by every offer
        task_ptr t = make(deadline());
        t->cancel(false);
        switch (in_.pick(3)) {
          case 0: expect(!q_.offer(t), "offer accepted a cancelled task"); break;
          case 1:
            expect(q_.offer_within(t, in_.pick(4)) == queue::offer_status::cancelled,
                   "offer_within accepted a cancelled task");
            break;
          default: expect(!q_.offer_now(t), "offer_now accepted a cancelled task"); break;
        }
        out_.push_back(std::move(t));
        break;
      }
      case 4: {  // remove a queued task
        const task_ptr* t = pick_queued();
        if (t == nullptr) break;
        task_ptr keep = *t;
        expect(q_.remove(*keep), "remove missed a queued task");
        model_.erase(key_of(*keep));
        out_.push_back(std::move(keep));
        break;
      }
      case 5: {  // remove a task that is not queued here
        if (!out_.empty() && in_.pick(2) == 0) {
          expect(!q_.remove(*out_[in_.pick(out_.size())]), "remove found a task no longer queued");
        } else if (in_.pick(2) == 0) {
          task_ptr fresh = make(deadline());
          expect(!q_.remove(*fresh), "remove found a task never queued");
        } else {
          // Queued in another queue: its slot index may be valid here too.
          task_ptr t = in_.pick(2) == 0 ? make(deadline()) : make(clock::now());
          if (in_.pick(2) == 0) {
            other_.offer(t);
          } else {
            other_.offer_now(t);
          }
          expect(!q_.remove(*t), "remove found a task queued in another queue");
          other_tasks_.push_back(std::move(t));
        }
        break;
      }
      case 6: {  // poll
        const time_point before = clock::now();
        task_ptr got = q_.poll();
        check_due_answer(got, before, clock::now(), "poll disagrees with the model");
        break;
      }
      case 7: {  // pop_head, due or not
        task_ptr got = q_.pop_head();
        if (model_.empty()) {
          expect(!got, "pop_head of an empty queue returned a task");
        } else {
          took(got, "pop_head did not return the head");
        }
        break;
      }
      case 8: {  // drain (rarely: it empties everything)
        if (in_.pick(4) != 0) break;
        std::vector<task_ptr> got = q_.drain();
        expect(got.size() == model_.size(), "drain returned a different number of tasks");
        std::size_t i = 0;
        for (auto& [k, t] : model_) expect(i < got.size() && got[i++] == t, "drain out of (deadline, sequence) order");
        for (auto& t : got) out_.push_back(std::move(t));
        model_.clear();
        break;
      }
      case 9: {  // remove_if
        const std::size_t kind = in_.pick(5);
        const std::uint64_t mod = 2 + in_.pick(3);
        const std::uint64_t rem = in_.pick(static_cast<std::size_t>(mod));
        const time_point::rep base = base_.time_since_epoch().count();
        auto pred = [&](const cpd::task_base& t) {
          switch (kind) {
            case 0: return true;
            case 1: return false;
            case 2: return t.cancelled();  // what purge() removes
            case 3: return t.sequence() % mod == rem;
            default: return t.deadline().time_since_epoch().count() > base;
          }
        };
        std::vector<task_ptr> expected;
        for (auto it = model_.begin(); it != model_.end();) {
          if (pred(*it->second)) {
            expected.push_back(it->second);
            it = model_.erase(it);
          } else {
            ++it;
          }
        }
        std::vector<task_ptr> got = q_.remove_if(pred);
        expect(got == expected, "remove_if returned other tasks, or out of order");
        for (auto& t : got) out_.push_back(std::move(t));
        break;
      }
      case 10: {  // cancel a queued task: the queue keeps it (remove_on_cancel is the pool's business)
        if (const task_ptr* t = pick_queued()) {
          const bool was_cancelled = (*t)->cancelled();
          expect((*t)->cancel(false) == !was_cancelled, "cancel of a queued task answered wrongly");
        }
        break;
      }
      case 11: {  // wait_for_task that must not block: its limit has passed
        const time_point before = clock::now();
        auto r = q_.wait_for_task(in_.pick(2) == 0 ? time_point::min() : before);
        const time_point after = clock::now();
        if (mode_ == queue::mode::closed) {
          expect(r.status == queue::wait_status::closed && !r.task, "a closed queue handed out a task");
        } else if (model_.empty()) {
          expect(!r.task, "wait_for_task on an empty queue returned a task");
          expect(r.status == (mode_ == queue::mode::draining ? queue::wait_status::closed : queue::wait_status::timeout),
                 "wait_for_task on an empty queue: wrong status");
        } else {
          expect((r.status == queue::wait_status::task) == static_cast<bool>(r.task), "wait status and task disagree");
          expect(r.status == queue::wait_status::task || r.status == queue::wait_status::timeout,
                 "wait_for_task: unexpected status");
          check_due_answer(r.task, before, after, "wait_for_task disagrees with the model");
        }
        break;
      }
      case 12: {  // advance the mode (rarely); modes never go back
        if (in_.pick(8) != 0) break;
        const auto m = static_cast<queue::mode>(in_.pick(3));
        q_.set_mode(m);
        if (m > mode_) mode_ = m;
        expect(q_.current_mode() == mode_, "set_mode moved the mode backwards");
        break;
      }
      case 14: {  // offer a periodic task owned by the queue's stand-in pool
        task_ptr t = cpd::make_task(cpd::task_kind::fixed_rate, [] {}, counting_allocator<void>());
        const time_point first = deadline();
        t->set_periodic(1ms, first, {});  // no jitter, no leeway: the deadline is the instant
        t->set_sequence(next_sequence_++);
        ideal_[t->sequence()] = first;
        t->set_owner(&owner_);
        expect(q_.offer(t), "offer refused a live periodic task");
        queued(std::move(t));
        break;
      }
      case 15: {  // a control on a queued or paused periodic task
        control();
        break;
      }
      default: {  // drop references held outside the queue (frees their tasks)
        out_.clear();
        other_tasks_.clear();
        break;
      }
    }
  }

  void control() {
    if (!paused_.empty() && in_.pick(2) == 0) {  // resume a paused task at its old deadline
      const std::size_t i = in_.pick(paused_.size());
      task_ptr t = std::move(paused_[i]);
      paused_.erase(paused_.begin() + static_cast<std::ptrdiff_t>(i));
      expect(t->resume(), "resume of a paused task refused");
      // At its ideal instant: where the pause left it (an extra run dropped).
      expect(t->deadline() == ideal_[t->sequence()], "resume queued the task elsewhere than its ideal instant");
      if (owner_.last_offer) {
        queued(std::move(t));
      } else {
        expect(t->cancelled(), "a refused re-queue did not cancel the task");
        out_.push_back(std::move(t));
      }
      return;
    }
    const task_ptr* picked = pick_queued();
    if (picked == nullptr || !(*picked)->is_periodic()) return;
    task_ptr t = *picked;
    const bool live = !t->cancelled();
    const key old = key_of(*t);
    switch (in_.pick(4)) {
      case 0:  // pause: out of the queue
        expect(t->pause() == live, "pause of a queued task answered wrongly");
        if (!live) return;
        expect(t->paused(), "a paused task is not paused");
        triggered_.erase(t->sequence());  // a pause drops the queued extra run
        model_.erase(old);
        paused_.push_back(std::move(t));
        return;
      case 1: {  // reschedule_next: moved
        const time_point next = deadline();
        expect(t->rebase(cpd::duration::zero(), next) == live, "rebase of a queued task answered wrongly");
        if (!live) return;
        model_.erase(old);
        ideal_[t->sequence()] = next;
        // A queued extra run (trigger_now) stays due; otherwise the task moves.
        if (triggered_.count(t->sequence()) != 0) {
          expect(t->deadline().time_since_epoch().count() == old.first, "rebase moved a queued extra run");
        } else {
          expect(t->deadline() == next, "rebase did not move the deadline");
        }
        break;
      }
      case 2: {  // trigger_now: due now, or as early as it was
        const bool ok = t->trigger_now();
        if (!live) return expect(!ok, "trigger_now of a cancelled task");
        // At most one extra run is pending: a second trigger is a no-op.
        expect(ok == (triggered_.count(t->sequence()) == 0), "trigger_now answered wrongly");
        if (!ok) return;
        triggered_.insert(t->sequence());
        model_.erase(old);
        expect(t->deadline().time_since_epoch().count() <= old.first, "trigger_now made the task later");
        break;
      }
      default:  // resume of a task that is not paused: a no-op
        expect(!t->resume(), "resume of a queued task did something");
        return;
    }
    if (owner_.last_offer) {
      queued(std::move(t));
    } else {
      expect(t->cancelled(), "a refused re-queue did not cancel the task");
      out_.push_back(std::move(t));
    }
  }

  void check() {
    expect(q_.size() == model_.size(), "size() disagrees with the model");
    expect(q_.empty() == model_.empty(), "empty() disagrees with the model");
    const std::optional<time_point> head = q_.head_deadline();
    if (model_.empty()) {
      expect(!head, "head_deadline() of an empty queue");
    } else {
      expect(head && head->time_since_epoch().count() == model_.begin()->first.first,
             "head_deadline() is not the model's first deadline");
    }
    expect(q_.check_invariants(), "check_invariants() failed");
  }

  fuzz::byte_reader& in_;
  const time_point base_;
  const unsigned near_bits_;
  std::uint64_t next_sequence_ = 0;
  queue::mode mode_ = queue::mode::open;
  // Declared before the queues, so they are destroyed after them.
  std::map<key, task_ptr> model_;
  std::vector<task_ptr> out_;          // once queued here, now taken out
  std::vector<task_ptr> other_tasks_;  // queued in other_
  std::vector<task_ptr> paused_;       // periodic tasks paused out of q_
  // By sequence (never reused): periodic tasks queued with an extra run
  // pending (none ever runs here), and each periodic task's ideal instant.
  std::set<std::uint64_t> triggered_;
  std::map<std::uint64_t, time_point> ideal_;
  queue other_;
  queue q_;
  queue_owner owner_;  // after q_: it refers to it
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    fuzz::byte_reader in(data, size);
    harness h(in);
    h.run();
  }
  if (live_tasks != 0) mismatch("tasks leaked or freed twice (allocator count is not zero)");
  return 0;
}

// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// pool-task: the pool's own task path, ScheduledThreadPoolExecutor's shape.
// One thread submits N one-shot tasks with deadlines uniform over a window,
// through execute_after() (no future), schedule() and schedule_at() with
// the future dropped at once, or schedule_at() keeping every future. Each
// task records how late it started. Measures the submitting call, lateness
// and the process's CPU time. The deadlines are the ones `fire` arms on the
// same offsets: each is the clock read at its submission plus its offset
// (schedule_at() is given that instant), so a slow submission does not
// count as lateness. Asio has no delayed post to compare with; the peer
// (cp-pool) arms a steady_timer on the same kind of pool with the same
// deadlines and a handler of the same two words, alternating with the tasks
// (cp-pool-task). A fifth case, execute_at() with every task queued 1.5 s
// ahead, measures the pool's threads alone: nothing is submitted while the
// tasks come due, and its CPU time counts from the last submission on.
#include "../harness.hpp"
#include "../stats.hpp"
#include "../usage.hpp"
#include "../workloads.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bench {
namespace {

enum class task_call { execute_after, schedule_dropped, schedule_at_dropped, schedule_at_kept, queued_ahead };

// queued_ahead: every task is submitted before the first one is due, so the
// pool's threads run them with no submission competing for the CPU.
constexpr std::chrono::milliseconds queued_lead{1500};

const char* call_name(task_call c) {
  switch (c) {
    case task_call::execute_after: return "execute_after";
    case task_call::schedule_dropped: return "schedule, future dropped";
    case task_call::schedule_at_dropped: return "schedule_at, future dropped";
    case task_call::schedule_at_kept: return "schedule_at, futures kept";
    case task_call::queued_ahead: return "execute_at, all queued 1.5 s ahead";
  }
  return "";
}

struct task_state {
  explicit task_state(std::size_t n) : deadline(n), lateness_ns(n, -1), left(static_cast<std::int64_t>(n)) {}
  std::vector<clock::time_point> deadline;  // written before the task is submitted
  std::vector<std::int64_t> lateness_ns;    // written by the task only
  countdown left;
};

/// The figures of one run, from its submission time and lateness.
run_result figures_of(std::size_t n, std::int64_t submit_ns, const std::vector<std::int64_t>& lateness_ns,
                      const usage::meter& use) {
  std::vector<std::int64_t> sorted = lateness_ns;
  std::sort(sorted.begin(), sorted.end());
  run_result out;
  out.figures = {{"submit ns/op", static_cast<double>(submit_ns) / static_cast<double>(n)}};
  for (figure& f : lateness_figures(sorted)) out.figures.push_back(std::move(f));
  out.figures.push_back(use.cpu_ms());
  return out;
}

/// The deadline of a task submitted now with @p delay (the queued case:
/// counted from @p t0, the first submission).
clock::time_point deadline_of(task_call call, clock::time_point t0, std::chrono::nanoseconds delay) {
  return call == task_call::queued_ahead ? t0 + queued_lead + delay : clock::now() + delay;
}

/// Submits every deadline through @p arm(i, delay) (s.deadline[i] already
/// set), waits for every run, and measures. @p r is stopped before this
/// returns, so that whatever the caller keeps alive outlives its threads.
template <class Arm>
run_result measure(task_state& s, cp_pool_runner& r, task_call call, const std::vector<std::int64_t>& offsets_ns,
                   Arm&& arm) {
  const std::size_t n = offsets_ns.size();
  usage::meter use;
  use.start();
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    const auto delay = std::chrono::nanoseconds(offsets_ns[i]);
    s.deadline[i] = deadline_of(call, t0, delay);
    arm(i, delay);
  }
  const auto submit_ns = ns_between(t0, clock::now());
  if (call == task_call::queued_ahead) use.start();  // the runs' CPU alone
  s.left.wait();
  use.stop();
  r.finish();
  return figures_of(n, submit_ns, s.lateness_ns, use);
}

run_result pool_task_run(unsigned threads, task_call call, const std::vector<std::int64_t>& offsets_ns) {
  task_state s(offsets_ns.size());
  std::vector<chronopool::scheduled_future<void>> kept;
  if (call == task_call::schedule_at_kept) kept.reserve(offsets_ns.size());
  cp_pool_runner r(threads);
  auto& pool = r.context();
  return measure(s, r, call, offsets_ns, [&](std::size_t i, std::chrono::nanoseconds delay) {
    // Two words, as a server's small action: the state and the index.
    auto task = [&s, i] {
      s.lateness_ns[i] = ns_between(s.deadline[i], clock::now());
      s.left.arrive();
    };
    switch (call) {
      case task_call::execute_after: pool.execute_after(delay, task); break;
      case task_call::schedule_dropped: (void)pool.schedule(delay, task); break;
      case task_call::schedule_at_dropped: (void)pool.schedule_at(s.deadline[i], task); break;
      case task_call::schedule_at_kept: kept.push_back(pool.schedule_at(s.deadline[i], task)); break;
      case task_call::queued_ahead: pool.execute_at(s.deadline[i], task); break;
    }
  });
}

/// The peer: the same deadlines as steady_timer waits on the same kind of
/// pool, each handler the task's two words (the timers kept in a vector, as
/// `fire` keeps them).
run_result pool_timer_run(unsigned threads, task_call call, const std::vector<std::int64_t>& offsets_ns) {
  task_state s(offsets_ns.size());
  std::vector<chronopool::steady_timer> timers;
  timers.reserve(offsets_ns.size());
  cp_pool_runner r(threads);
  return measure(s, r, call, offsets_ns, [&](std::size_t i, std::chrono::nanoseconds) {
    timers.emplace_back(r.context(), s.deadline[i]);
    timers.back().async_wait([&s, i](const boost::system::error_code& ec) {
      const auto started = clock::now();
      if (!ec) s.lateness_ns[i] = ns_between(s.deadline[i], started);
      s.left.arrive();
    });
  });
}

}  // namespace

std::vector<bench_case> pool_task_cases(const options& o) {
  std::vector<std::pair<std::size_t, std::int64_t>> sizes;  // (N, window in ns)
  if (o.quick)
    sizes = {{20'000, 100'000'000}};
  else
    sizes = {{1'000'000, 1'000'000'000}, {100'000, 1'000'000'000}};
  std::vector<bench_case> cases;
  const unsigned threads = o.threads;
  for (const auto& [n, window] : sizes) {
    // The same offsets for every call and repetition (fixed seed; the seed
    // and window of `fire`, so both measure the same deadlines).
    auto offsets = std::make_shared<std::vector<std::int64_t>>(n);
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> dist(0, window);
    for (auto& x : *offsets) x = dist(rng);
    for (const task_call call : {task_call::execute_after, task_call::schedule_dropped,
                                    task_call::schedule_at_dropped, task_call::schedule_at_kept,
                                    task_call::queued_ahead}) {
      cases.push_back(bench_case{"pool-task",
                                 std::string(call_name(call)) + " N=" + with_commas(n) +
                                     " window=" + std::to_string(window / 1'000'000) + "ms",
                                 {variant::cp_pool, variant::cp_pool_task},
                                 [=](variant v) {
                                   return v == variant::cp_pool_task ? pool_task_run(threads, call, *offsets)
                                                                     : pool_timer_run(threads, call, *offsets);
                                 }});
    }
  }
  return cases;
}

}  // namespace bench

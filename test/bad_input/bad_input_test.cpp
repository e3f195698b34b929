// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Every public entry point against bad input, as one list: what is passed,
// which exception comes back, and that its message names the parameter (or
// the entry point and what was wrong with it). The list is printed with
// --log_level=message. Untrusted durations are a separate list: they must
// never throw or overflow, only saturate ("never" or "now").
//
// Some cases are also covered, one by one, in test/unit/*; this file is the
// catalogue the reliability issue asks for.
#include <chronopool/async_sleep.hpp>
#include <chronopool/cancel_after.hpp>
#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_schedule.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_timer.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/system_timer.hpp>

#include "../support/asio.hpp"
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "../support/bounded_wait.hpp"

using namespace std::chrono_literals;
using chronopool::scheduled_thread_pool;
using chronopool::scheduled_thread_pool_options;
using steady = std::chrono::steady_clock;

namespace {

constexpr auto long_wait = std::chrono::seconds(10);

/// Polls @p pred every millisecond until it holds or long_wait passes.
template <class Pred>
bool eventually(Pred pred) {
  return test_support::eventually(pred, long_wait);
}
const double not_a_number = std::numeric_limits<double>::quiet_NaN();
using dsec = std::chrono::duration<double>;

enum class expect { invalid_argument, logic_error, deadlock, no_state };

const char* name(expect e) {
  switch (e) {
    case expect::invalid_argument: return "std::invalid_argument";
    case expect::logic_error: return "std::logic_error";
    case expect::deadlock: return "std::system_error(resource_deadlock_would_occur)";
    case expect::no_state: return "std::future_error(no_state)";
  }
  return "?";
}

struct bad_input_case {
  std::string entry_point;
  std::string input;
  expect error;
  std::vector<std::string> message_names;  // what the message must mention
  std::function<void()> call;
};

/// Runs @p c and checks the exception's type, code and message.
void check(const bad_input_case& c) {
  BOOST_TEST_MESSAGE(c.entry_point << " <- " << c.input << " => " << name(c.error));
  BOOST_TEST_CONTEXT(c.entry_point << " <- " << c.input) {
    std::string what;
    bool right_type = false;
    try {
      c.call();
      BOOST_ERROR("accepted bad input");
      return;
    } catch (const std::future_error& e) {
      right_type = c.error == expect::no_state && e.code() == std::future_errc::no_state;
      what = e.what();
    } catch (const std::system_error& e) {
      right_type = c.error == expect::deadlock && e.code() == std::errc::resource_deadlock_would_occur;
      what = e.what();
    } catch (const std::invalid_argument& e) {
      right_type = c.error == expect::invalid_argument;
      what = e.what();
    } catch (const std::logic_error& e) {
      right_type = c.error == expect::logic_error;
      what = e.what();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "(not a std::exception)";
    }
    BOOST_TEST(right_type, "expected " << name(c.error) << ", got: " << what);
    for (const auto& word : c.message_names)
      BOOST_TEST(what.find(word) != std::string::npos, "message \"" << what << "\" does not name \"" << word << "\"");
  }
}

/// Runs @p f on one of @p pool's threads and rethrows what it threw.
void on_pool_thread(scheduled_thread_pool& pool, std::function<void()> f) {
  auto done = pool.submit(std::move(f));
  if (done.wait_for(long_wait) != std::future_status::ready) throw std::runtime_error("pool task did not finish");
  // The exception is the one the pool's task holds. Kept here to the end of
  // the process, so that it is freed on this thread: otherwise the worker
  // dropping its task might free it after this thread read its message,
  // synchronised only by the C++ runtime's reference count, which
  // ThreadSanitizer does not see (a data race reported under the tsan preset).
  static std::vector<std::exception_ptr> kept;
  try {
    done.get();
  } catch (...) {
    kept.push_back(std::current_exception());
    throw;
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(every_entry_point_rejects_bad_input_naming_the_parameter) {
  scheduled_thread_pool pool(2);
  asio::io_context io;
  std::function<int()> empty_fn;
  std::function<void()> empty_void_fn;
  std::function<void(std::stop_token)> empty_stop_fn;
  int (*null_fn)() = nullptr;
  void (*null_void_fn)() = nullptr;
  auto noop = [] {};
  constexpr std::size_t too_many = scheduled_thread_pool::max_core_pool_size + 1;
  auto bad_jitter = [](double j) {
    chronopool::periodic_options o;
    o.jitter = j;
    return o;
  };
  auto bad_leeway = [](std::chrono::nanoseconds l) {
    chronopool::periodic_options o;
    o.leeway = l;
    return o;
  };
  auto options_with = [](auto change) {
    scheduled_thread_pool_options o;
    change(o);
    return o;
  };
  const auto ia = expect::invalid_argument;
  auto far = pool.schedule(1h, noop);  // a valid handle to wait on
  scheduled_thread_pool manual_pool(options_with([](auto& o) { o.use_manual_clock = true; }));
  chronopool::pool_manual_clock& manual_pool_clock = chronopool::manual_clock_of(manual_pool);

  const std::vector<bad_input_case> cases = {
      // ---- pool construction and sizing
      {"scheduled_thread_pool(core_pool_size)", "max_core_pool_size + 1", ia, {"core_pool_size", "4097", "4096"},
       [&] { scheduled_thread_pool p(too_many); }},
      {"scheduled_thread_pool(options)", "core_pool_size = SIZE_MAX", ia, {"core_pool_size"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.core_pool_size = static_cast<std::size_t>(-1); })); }},
      {"scheduled_thread_pool(options)", "keep_alive = 0", ia, {"keep_alive"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.keep_alive = 0ns; })); }},
      {"scheduled_thread_pool(options)", "keep_alive < 0", ia, {"keep_alive"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.keep_alive = -1s; })); }},
      {"scheduled_thread_pool(options)", "wakeup_slack < 0", ia, {"wakeup_slack", "-1ns"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.wakeup_slack = -1ns; })); }},
      {"scheduled_thread_pool(options)", "wakeup_slack = 2 ms", ia, {"wakeup_slack", "2000000ns"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.wakeup_slack = 2ms; })); }},
      {"set_wakeup_slack", "a negative slack", ia, {"set_wakeup_slack", "-5000ns"},
       [&] { chronopool::set_wakeup_slack(io, -5us); }},
      {"set_wakeup_slack", "a slack over 1 ms", ia, {"set_wakeup_slack", "1000001ns"},
       [&] { chronopool::set_wakeup_slack(io, 1ms + 1ns); }},
      {"set_poll_window", "a window over 1 ms", ia, {"set_poll_window", "2000000ns"},
       [&] { chronopool::set_poll_window(io, 2ms); }},
      {"set_poll_window", "a negative window", ia, {"set_poll_window", "-1000ns"},
       [&] { chronopool::set_poll_window(io, -1us); }},
      {"set_core_pool_size", "max_core_pool_size + 1", ia, {"core_pool_size", "4097", "4096"},
       [&] { pool.set_core_pool_size(too_many); }},
      // ---- empty callables
      {"submit", "empty std::function", ia, {"submit", "empty callable"}, [&] { pool.submit(empty_fn); }},
      {"submit", "empty std::function taking a stop_token", ia, {"submit", "empty callable"},
       [&] { pool.submit(empty_stop_fn); }},
      {"submit", "null function pointer", ia, {"submit", "empty callable"}, [&] { pool.submit(null_fn); }},
      {"execute", "empty std::function", ia, {"execute", "empty callable"}, [&] { pool.execute(empty_void_fn); }},
      {"schedule", "null function pointer", ia, {"schedule", "empty callable"}, [&] { pool.schedule(1ms, null_fn); }},
      {"execute_after", "empty std::function", ia, {"execute_after", "empty callable"},
       [&] { pool.execute_after(1ms, empty_void_fn); }},
      {"execute_at", "null function pointer", ia, {"execute_at", "empty callable"},
       [&] { pool.execute_at(steady::now(), null_void_fn); }},
      {"schedule_at", "empty std::function", ia, {"schedule_at", "empty callable"},
       [&] { pool.schedule_at(steady::now(), empty_fn); }},
      {"schedule_at_fixed_rate", "empty std::function", ia, {"schedule_at_fixed_rate", "empty callable"},
       [&] { pool.schedule_at_fixed_rate(0ms, 1ms, empty_void_fn); }},
      {"schedule_with_fixed_delay", "null function pointer", ia, {"schedule_with_fixed_delay", "empty callable"},
       [&] { pool.schedule_with_fixed_delay(0ms, 1ms, null_void_fn); }},
      // ---- periods and jitter
      {"schedule_at_fixed_rate", "period = 0", ia, {"schedule_at_fixed_rate", "period"},
       [&] { pool.schedule_at_fixed_rate(0ms, 0ms, noop); }},
      {"schedule_at_fixed_rate", "period < 0", ia, {"period"}, [&] { pool.schedule_at_fixed_rate(0ms, -1h, noop); }},
      {"schedule_at_fixed_rate", "period = hours::min()", ia, {"period"},
       [&] { pool.schedule_at_fixed_rate(0ms, std::chrono::hours::min(), noop); }},
      {"schedule_at_fixed_rate", "period = 1e-12 s (rounds to 0 ns)", ia, {"period"},
       [&] { pool.schedule_at_fixed_rate(0ms, dsec(1e-12), noop); }},
      {"schedule_with_fixed_delay", "delay = 0", ia, {"schedule_with_fixed_delay", "period"},
       [&] { pool.schedule_with_fixed_delay(0ms, 0ns, noop); }},
      {"schedule_at_fixed_rate", "jitter = 1", ia, {"jitter"},
       [&] { pool.schedule_at_fixed_rate(0ms, 1ms, noop, bad_jitter(1.0)); }},
      {"schedule_with_fixed_delay", "jitter = -0.1", ia, {"jitter"},
       [&] { pool.schedule_with_fixed_delay(0ms, 1ms, noop, bad_jitter(-0.1)); }},
      {"schedule_at_fixed_rate", "jitter = NaN", ia, {"jitter"},
       [&] { pool.schedule_at_fixed_rate(0ms, 1ms, noop, bad_jitter(not_a_number)); }},
      {"schedule_at_fixed_rate", "periodic_options::error_handler set (pool task)", ia,
       {"schedule_at_fixed_rate", "error_handler"},
       [&] {
         chronopool::periodic_options o;
         o.error_handler = [](std::exception_ptr) {};
         pool.schedule_at_fixed_rate(0ms, 1ms, noop, o);
       }},
      {"schedule_at_fixed_rate", "leeway = period", ia, {"leeway", "period"},
       [&] { pool.schedule_at_fixed_rate(0ms, 1ms, noop, bad_leeway(1ms)); }},
      {"schedule_with_fixed_delay", "leeway < 0", ia, {"leeway"},
       [&] { pool.schedule_with_fixed_delay(0ms, 1ms, noop, bad_leeway(-1ns)); }},
      // ---- end conditions and control of a periodic task (pool)
      {"schedule_at_fixed_rate", "max_runs = 0", ia, {"max_runs"},
       [&] {
         chronopool::periodic_options o;
         o.max_runs = 0;
         pool.schedule_at_fixed_rate(0ms, 1ms, noop, o);
       }},
      {"schedule_with_fixed_delay(time_point)", "until before the first run", ia,
       {"until", "5000000000 ns", "first run", "10000000000 ns"},
       [&] {
         chronopool::periodic_options o;
         o.until = steady::time_point(5s);
         pool.schedule_with_fixed_delay(steady::time_point(10s), 1ms, noop, o);
       }},
      {"schedule_at_fixed_rate", "until = the first run's instant", ia, {"until", "first run"},
       [&] {
         chronopool::periodic_options o;
         const auto first = steady::now() + 1h;
         o.until = first;
         pool.schedule_at_fixed_rate(first, 1ms, noop, o);
       }},
      {"chronopool::schedule_at_fixed_rate(executor)", "max_runs = 0", ia, {"max_runs"},
       [&] {
         chronopool::periodic_options o;
         o.max_runs = 0;
         chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, noop, o);
       }},
      {"scheduled_future<void>::reschedule", "period = 0", ia, {"reschedule", "period"},
       [&] {
         auto f = pool.schedule_at_fixed_rate(1h, 1h, noop);
         f.cancel();
         f.reschedule(0ms);
       }},
      {"periodic_handle::reschedule", "period = 0", ia, {"periodic_handle::reschedule", "period"},
       [&] { chronopool::periodic_handle().reschedule(0ms); }},
      {"periodic_handle::reschedule", "period = leeway", ia, {"periodic_handle::reschedule", "leeway"},
       [&] {
         auto h = chronopool::schedule_at_fixed_rate(io.get_executor(), 1h, 1h, noop, bad_leeway(1ms));
         struct cancel_at_exit {
           chronopool::periodic_handle& h;
           ~cancel_at_exit() { h.cancel(); }
         } guard{h};
         h.reschedule(1ms);
       }},
      {"scheduled_future<void>::reschedule", "period < 0", ia, {"reschedule", "period"},
       [&] { chronopool::scheduled_future<void>().reschedule(-1s); }},
      {"scheduled_future<void>::reschedule", "period = leeway", ia, {"reschedule", "leeway"},
       [&] {
         auto f = pool.schedule_at_fixed_rate(1h, 1h, noop, bad_leeway(1ms));
         struct cancel_at_exit {
           chronopool::scheduled_future<void>& f;
           ~cancel_at_exit() { f.cancel(); }
         } guard{f};
         f.reschedule(1ms);
       }},
      // ---- NaN durations (the only duration that cannot saturate)
      {"schedule", "delay = NaN s", ia, {"delay", "NaN"}, [&] { pool.schedule(dsec(not_a_number), noop); }},
      {"schedule_at", "time point NaN s after the epoch", ia, {"deadline", "NaN"},
       [&] { pool.schedule_at(std::chrono::time_point<steady, dsec>(dsec(not_a_number)), noop); }},
      {"execute_after", "delay = NaN s", ia, {"delay", "NaN"}, [&] { pool.execute_after(dsec(not_a_number), noop); }},
      {"execute_at", "time point NaN s after the epoch", ia, {"deadline", "NaN"},
       [&] { pool.execute_at(std::chrono::time_point<steady, dsec>(dsec(not_a_number)), noop); }},
      {"schedule_at_fixed_rate", "initial delay = NaN", ia, {"initial delay", "NaN"},
       [&] { pool.schedule_at_fixed_rate(dsec(not_a_number), 1ms, noop); }},
      {"schedule_at_fixed_rate", "period = NaN", ia, {"period", "NaN"},
       [&] { pool.schedule_at_fixed_rate(0ms, dsec(not_a_number), noop); }},
      {"wait_for_termination", "timeout = NaN", ia, {"timeout", "NaN"},
       [&] { pool.wait_for_termination(dsec(not_a_number)); }},
      {"scheduled_future::wait_for", "timeout = NaN", ia, {"timeout", "NaN"},
       [&] { far.wait_for(dsec(not_a_number)); }},
      {"async_sleep", "duration = NaN", ia, {"sleep duration", "NaN"},
       [&] { chronopool::async_sleep(io.get_executor(), dsec(not_a_number), [](sys_ns::error_code) {}); }},
      {"chronopool::schedule_at_fixed_rate(executor)", "period = 0", ia, {"schedule_at_fixed_rate", "period"},
       [&] { chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 0ms, noop); }},
      {"chronopool::schedule_with_fixed_delay(executor)", "delay < 0", ia, {"schedule_with_fixed_delay", "period"},
       [&] { chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, -1ms, noop); }},
      {"chronopool::schedule_at_fixed_rate(executor)", "period = NaN", ia, {"period", "NaN"},
       [&] { chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, dsec(not_a_number), noop); }},
      {"chronopool::schedule_at_fixed_rate(executor)", "jitter = 2", ia, {"jitter"},
       [&] { chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, noop, bad_jitter(2.0)); }},
      {"chronopool::schedule_at_fixed_rate(executor)", "leeway > period", ia, {"leeway"},
       [&] { chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, noop, bad_leeway(1s)); }},
      // ---- periodic starts at an instant: the same checks as with an initial delay
      {"schedule_at_fixed_rate(time_point)", "period = 0", ia, {"schedule_at_fixed_rate", "period"},
       [&] { pool.schedule_at_fixed_rate(steady::now(), 0ms, noop); }},
      {"schedule_at_fixed_rate(time_point)", "period < 0", ia, {"period"},
       [&] { pool.schedule_at_fixed_rate(steady::now(), -1h, noop); }},
      {"schedule_at_fixed_rate(time_point)", "empty std::function", ia, {"schedule_at_fixed_rate", "empty callable"},
       [&] { pool.schedule_at_fixed_rate(steady::now(), 1ms, empty_void_fn); }},
      {"schedule_at_fixed_rate(time_point)", "first run NaN s after the epoch", ia, {"first run", "NaN"},
       [&] { pool.schedule_at_fixed_rate(std::chrono::time_point<steady, dsec>(dsec(not_a_number)), 1ms, noop); }},
      {"schedule_with_fixed_delay(time_point)", "delay = 0", ia, {"schedule_with_fixed_delay", "period"},
       [&] { pool.schedule_with_fixed_delay(steady::now(), 0ns, noop); }},
      {"schedule_with_fixed_delay(time_point)", "jitter = 1", ia, {"jitter"},
       [&] { pool.schedule_with_fixed_delay(steady::now(), 1ms, noop, bad_jitter(1.0)); }},
      {"chronopool::schedule_at_fixed_rate(executor, time_point)", "period = 0", ia,
       {"schedule_at_fixed_rate", "period"},
       [&] { chronopool::schedule_at_fixed_rate(io.get_executor(), steady::now(), 0ms, noop); }},
      {"chronopool::schedule_with_fixed_delay(executor, time_point)", "delay < 0", ia,
       {"schedule_with_fixed_delay", "period"},
       [&] { chronopool::schedule_with_fixed_delay(io.get_executor(), steady::now(), -1ms, noop); }},
      {"chronopool::schedule_at_fixed_rate(executor, time_point)", "first run NaN s after the epoch", ia,
       {"first run", "NaN"},
       [&] {
         chronopool::schedule_at_fixed_rate(io.get_executor(),
                                            std::chrono::time_point<steady, dsec>(dsec(not_a_number)), 1ms, noop);
       }},
      {"async_sleep_until", "deadline NaN s after the epoch", ia, {"sleep deadline", "NaN"},
       [&] {
         chronopool::async_sleep_until(io.get_executor(), std::chrono::time_point<steady, dsec>(dsec(not_a_number)),
                                       [](sys_ns::error_code) {});
       }},
      {"cancel_after", "timeout = NaN", ia, {"timeout", "NaN"},
       [&] { (void)chronopool::cancel_after(dsec(not_a_number), [](sys_ns::error_code) {}); }},
      {"steady_timer::expires_after", "leeway < 0", ia, {"leeway", "negative"},
       [&] {
         chronopool::steady_timer t(io);
         t.expires_after(1s, -1ns);
       }},
      {"steady_timer::expires_at", "leeway = NaN", ia, {"leeway", "NaN"},
       [&] {
         chronopool::steady_timer t(io);
         t.expires_at(steady::now(), dsec(not_a_number));
       }},
      {"periodic_timer", "period = 0", ia, {"periodic_timer", "period"},
       [&] { chronopool::periodic_timer t(io.get_executor(), 0ms); }},
      {"periodic_timer", "period < 0", ia, {"periodic_timer", "period"},
       [&] { chronopool::periodic_timer t(io, -1s); }},
      {"periodic_timer::set_leeway", "leeway = period", ia, {"periodic_timer", "leeway"},
       [&] {
         chronopool::periodic_timer t(io, 1s);
         t.set_leeway(1s);
       }},
      // ---- calendar schedules (test/unit/calendar has every parser error word for word)
      {"cron_schedule", "minute 61", ia, {"minute field", "61", "0-59", "'61 * * * *'"},
       [&] { chronopool::cron_schedule c("61 * * * *"); }},
      {"cron_schedule", "empty expression", ia, {"cron expression", "empty"}, [&] { chronopool::cron_schedule c(""); }},
      {"cron_schedule", "3 fields", ia, {"5 fields", "got 3"}, [&] { chronopool::cron_schedule c("* * *"); }},
      {"cron_schedule", "February 30th", ia, {"day-of-month field", "30"},
       [&] { chronopool::cron_schedule c("0 0 30 2 *"); }},
      {"cron_schedule", "unknown time zone", ia, {"unknown time zone", "Mars/Olympus_Mons"},
       [&] { chronopool::cron_schedule c("* * * * *", "Mars/Olympus_Mons"); }},
      // ---- calendar schedules run: the periodic forms' checks, and no jitter or leeway
      {"schedule_cron", "empty std::function", ia, {"schedule_cron", "empty callable"},
       [&] { pool.schedule_cron(chronopool::cron_schedule("* * * * *"), empty_void_fn); }},
      {"schedule_cron", "null function pointer", ia, {"schedule_cron", "empty callable"},
       [&] { pool.schedule_cron("* * * * *", "UTC", null_void_fn); }},
      {"schedule_cron", "jitter = NaN", ia, {"jitter"},
       [&] { pool.schedule_cron("* * * * *", "UTC", noop, bad_jitter(not_a_number)); }},
      {"schedule_cron", "jitter = 0.5 (no period to take a fraction of)", ia, {"schedule_cron", "jitter"},
       [&] { pool.schedule_cron("* * * * *", "UTC", noop, bad_jitter(0.5)); }},
      {"schedule_cron", "leeway = 1 ms", ia, {"schedule_cron", "leeway"},
       [&] { pool.schedule_cron("* * * * *", "UTC", noop, bad_leeway(1ms)); }},
      {"schedule_cron", "periodic_options::error_handler set (pool task)", ia, {"schedule_cron", "error_handler"},
       [&] {
         chronopool::periodic_options o;
         o.error_handler = [](std::exception_ptr) {};
         pool.schedule_cron("* * * * *", "UTC", noop, o);
       }},
      {"schedule_cron", "max_runs = 3 (the calendar decides the runs)", ia, {"schedule_cron", "max_runs"},
       [&] {
         chronopool::periodic_options o;
         o.max_runs = 3;
         pool.schedule_cron("* * * * *", "UTC", noop, o);
       }},
      {"chronopool::schedule_cron(executor)", "until set", ia, {"schedule_cron", "until"},
       [&] {
         chronopool::periodic_options o;
         o.until = steady::now() + 1h;
         chronopool::schedule_cron(io.get_executor(), "* * * * *", "UTC", noop, o);
       }},
      {"schedule_cron", "bad expression", ia, {"minute field", "61"},
       [&] { pool.schedule_cron("61 * * * *", "UTC", noop); }},
      {"schedule_cron", "unknown time zone", ia, {"unknown time zone", "Mars/Olympus_Mons"},
       [&] { pool.schedule_cron("* * * * *", "Mars/Olympus_Mons", noop); }},
      {"chronopool::schedule_cron(executor)", "empty std::function", ia, {"schedule_cron", "empty callable"},
       [&] { chronopool::schedule_cron(io.get_executor(), chronopool::cron_schedule("* * * * *"), empty_void_fn); }},
      {"chronopool::schedule_cron(executor)", "jitter = 2", ia, {"jitter"},
       [&] { chronopool::schedule_cron(io.get_executor(), "* * * * *", "UTC", noop, bad_jitter(2.0)); }},
      {"chronopool::schedule_cron(executor)", "leeway < 0", ia, {"schedule_cron", "leeway"},
       [&] { chronopool::schedule_cron(io.get_executor(), "* * * * *", "UTC", noop, bad_leeway(-1ns)); }},
      {"cron_timer", "unknown time zone", ia, {"unknown time zone", "Mars/Olympus_Mons"},
       [&] { chronopool::cron_timer t(io, chronopool::cron_schedule("* * * * *", "Mars/Olympus_Mons")); }},
      // ---- blocking from a pool thread, misuse
      {"join", "called from one of the pool's threads", expect::deadlock, {"join", "pool's own threads"},
       [&] { on_pool_thread(pool, [&] { pool.join(); }); }},
      {"wait_for_termination", "1 s, called from one of the pool's threads", expect::deadlock,
       {"waiting for termination", "pool's own threads"},
       [&] { on_pool_thread(pool, [&] { pool.wait_for_termination(1s); }); }},
      {"wait_until_quiet", "called from one of the pool's threads", expect::deadlock,
       {"wait_until_quiet", "pool's own threads"},
       [&] { on_pool_thread(pool, [&] { pool.wait_until_quiet(steady::now() + 1h, 1s); }); }},
      {"wait_until_quiet", "timeout = 0", ia, {"wait_until_quiet", "timeout", "0 ns"},
       [&] { pool.wait_until_quiet(steady::now() + 1h, 0s); }},
      {"wait_until_quiet", "timeout = -1 s", ia, {"wait_until_quiet", "timeout", "-1000000000 ns"},
       [&] { pool.wait_until_quiet(steady::now() + 1h, -1s); }},
      {"wait_until_quiet", "timeout = NaN", ia, {"timeout", "NaN"},
       [&] { pool.wait_until_quiet(steady::now() + 1h, dsec(not_a_number)); }},
      {"wait_until_quiet", "horizon NaN s after the epoch", ia, {"horizon", "NaN"},
       [&] { pool.wait_until_quiet(std::chrono::time_point<steady, dsec>(dsec(not_a_number)), 1s); }},
      {"async_wait_quiet", "horizon NaN s after the epoch", ia, {"horizon", "NaN"},
       [&] {
         pool.async_wait_quiet(std::chrono::time_point<steady, dsec>(dsec(not_a_number)),
                               [](sys_ns::error_code) {});
       }},
      {"use_pool", "after a timer of the context exists", expect::logic_error, {"use_pool"},
       [&] {
         asio::io_context other;
         chronopool::steady_timer t(other);
         chronopool::use_pool(other, pool);
       }},
      {"rejected_task::run", "a periodic task, from a rejection handler", expect::logic_error,
       {"rejected_task::run", "schedule_at_fixed_rate", "periodic"},
       [&] {
         scheduled_thread_pool p(options_with([](auto& o) {
           o.rejection_handler = [](chronopool::rejected_task& r) { r.run(); };
         }));
         p.shutdown();
         p.schedule_at_fixed_rate(0ms, 1ms, noop);
       }},
      {"scheduled_future::get", "a handle to no task", expect::no_state, {},
       [&] { chronopool::scheduled_future<int>().get(); }},
      {"scheduled_future::take", "a handle to no task", expect::no_state, {},
       [&] { chronopool::scheduled_future<std::unique_ptr<int>>().take(); }},
      {"scheduled_future::get() &&", "a handle to no task", expect::no_state, {},
       [&] { (void)chronopool::scheduled_future<int>().get(); }},
      {"scheduled_future::async_wait", "a handle to no task (thrown by the initiating call)", expect::no_state, {},
       [&] { chronopool::scheduled_future<int>().async_wait([](std::exception_ptr, int) {}); }},
      {"scheduled_future<void>::async_wait", "a handle to no task, deferred", expect::no_state, {},
       [&] { (void)chronopool::scheduled_future<void>().async_wait(asio_compat::deferred); }},
      {"scheduled_future::delay", "a handle to no task", expect::no_state, {},
       [&] { (void)chronopool::scheduled_future<void>().delay(); }},
      // Virtual time (issue 42): negative moves, a clock asked of a context
      // or pool on the real clock, and mixed clocks.
      {"manual_clock::advance", "-1 ms", ia, {"advance", "-1000000ns"},
       [&] {
         asio::io_context ctx;
         chronopool::use_manual_clock(ctx).advance(-1ms);
       }},
      {"use_manual_clock", "after a system_timer of the context exists", expect::logic_error,
       {"use_manual_clock", "before the first timer"},
       [&] {
         asio::io_context ctx;
         chronopool::system_timer t(ctx);
         chronopool::use_manual_clock(ctx);
       }},
      {"manual_clock::auto_advance", "true, on a context whose reactor came first", expect::logic_error,
       {"manual_clock::auto_advance", "use_manual_clock"},
       [&] {
         asio::io_context ctx;
         asio::steady_timer asio_timer(ctx);  // Asio's own timer makes the reactor
         chronopool::use_manual_clock(ctx).auto_advance(true);
       }},
      {"scheduled_thread_pool(options)", "manual_clock_auto_advance without use_manual_clock", ia,
       {"manual_clock_auto_advance is true", "use_manual_clock is false"},
       [&] { scheduled_thread_pool p(options_with([](auto& o) { o.manual_clock_auto_advance = true; })); }},
      {"manual_clock_of(io_context)", "a context on the real clock", expect::logic_error,
       {"manual_clock_of", "use_manual_clock"}, [&] { chronopool::manual_clock_of(io); }},
      {"pool_manual_clock::advance", "-1 ms", ia, {"pool_manual_clock::advance", "-1000000ns"},
       [&] { manual_pool_clock.advance(-1ms); }},
      {"pool_manual_clock::run_for", "-1 s", ia, {"pool_manual_clock::run_for", "-1000000000ns"},
       [&] { manual_pool_clock.run_for(-1s); }},
      {"pool_manual_clock::stall", "-1 ns", ia, {"pool_manual_clock::stall", "-1ns"},
       [&] { manual_pool_clock.stall(-1ns); }},
      {"pool_manual_clock::advance", "from one of the pool's threads", expect::logic_error,
       {"pool_manual_clock::advance", "pool's own threads"},
       [&] { on_pool_thread(manual_pool, [&] { manual_pool_clock.advance(1ms); }); }},
      {"manual_clock_of(scheduled_thread_pool)", "a pool on the real clock", expect::logic_error,
       {"manual_clock_of", "use_manual_clock"}, [&] { chronopool::manual_clock_of(pool); }},
      {"scheduled_thread_pool", "use_manual_clock with precision_spin_limit 50 us", ia,
       {"precision_spin_limit", "use_manual_clock", "50000ns"},
       [&] {
         scheduled_thread_pool p(options_with([](auto& o) {
           o.use_manual_clock = true;
           o.precision_spin_limit = 50us;
         }));
       }},
      {"use_pool", "an io_context's timers on a pool on a manual clock", expect::logic_error,
       {"use_pool", "manual clock"},
       [&] {
         asio::io_context other;
         chronopool::use_pool(other, manual_pool);
       }},
  };
  for (const auto& c : cases) check(c);
  BOOST_TEST_MESSAGE(cases.size() << " bad-input cases");
  BOOST_TEST(far.cancel());
  // None of it left anything behind.
  BOOST_TEST(pool.queued_count() == 0u);
  BOOST_TEST(pool.core_pool_size() == 2u);
}

// Untrusted durations (a timeout computed from a client's request) never
// throw and never overflow: too large means "never", too small means "now".
// Control calls that are documented no-ops: they return false and change
// nothing, rather than throw (see scheduled_future<void>'s controls).
BOOST_AUTO_TEST_CASE(periodic_controls_that_are_no_ops_return_false) {
  scheduled_thread_pool pool(2);
  auto noop = [] {};
  auto periodic = pool.schedule_at_fixed_rate(1h, 1h, noop);
  BOOST_TEST_MESSAGE("scheduled_future<void>::resume <- a task that is not paused => false");
  BOOST_TEST(!periodic.resume());
  BOOST_TEST_MESSAGE("scheduled_future<void>::pause <- a task paused already => false");
  BOOST_TEST(periodic.pause());
  BOOST_TEST(!periodic.pause());
  BOOST_TEST_MESSAGE("scheduled_future<void>::trigger_now <- a paused task => false");
  BOOST_TEST(!periodic.trigger_now());
  BOOST_TEST(periodic.cancel());
  BOOST_TEST_MESSAGE("pause / resume / reschedule / reschedule_next / trigger_now <- a done task => false");
  BOOST_TEST(!periodic.pause());
  BOOST_TEST(!periodic.resume());
  BOOST_TEST(!periodic.reschedule(1s));
  BOOST_TEST(!periodic.reschedule_next(steady::now()));
  BOOST_TEST(!periodic.trigger_now());
  BOOST_TEST_MESSAGE("pause / resume / reschedule / reschedule_next / trigger_now <- a one-shot task => false");
  auto one_shot = pool.schedule(1h, noop);
  BOOST_TEST(!one_shot.pause());
  BOOST_TEST(!one_shot.resume());
  BOOST_TEST(!one_shot.reschedule(1s));
  BOOST_TEST(!one_shot.reschedule_next(steady::now()));
  BOOST_TEST(!one_shot.trigger_now());
  one_shot.cancel();
  BOOST_TEST_MESSAGE("periodic_handle: the same on a stopped schedule and on an empty handle => false");
  asio::io_context io;
  auto handler = chronopool::schedule_at_fixed_rate(io.get_executor(), 1h, 1h, noop);
  BOOST_TEST(!handler.resume());
  BOOST_TEST(handler.pause());
  BOOST_TEST(!handler.pause());
  BOOST_TEST(!handler.trigger_now());
  BOOST_TEST(handler.cancel());
  BOOST_TEST(!handler.resume());
  BOOST_TEST(!handler.reschedule(1s));
  BOOST_TEST(!chronopool::periodic_handle().trigger_now());
  BOOST_TEST_MESSAGE("pause / resume / trigger_now <- a handle to no task => false");
  chronopool::scheduled_future<void> none;
  BOOST_TEST(!none.pause());
  BOOST_TEST(!none.resume());
  BOOST_TEST(!none.trigger_now());
}

BOOST_AUTO_TEST_CASE(untrusted_durations_saturate_everywhere_a_deadline_is_computed) {
  scheduled_thread_pool pool(2);
  using dur = steady::duration;
  BOOST_TEST_MESSAGE("schedule(hours::max() / duration::max() / 1e300 s / +inf s) => never");
  for (auto f : {pool.schedule(std::chrono::hours::max(), [] {}), pool.schedule(dur::max(), [] {}),
                 pool.schedule(dsec(1e300), [] {}), pool.schedule(dsec(std::numeric_limits<double>::infinity()), [] {}),
                 pool.schedule_at(steady::time_point::max(), [] {}),
                 pool.schedule_at(std::chrono::system_clock::time_point::max(), [] {})}) {
    BOOST_TEST(f.delay().count() > std::chrono::duration_cast<dur>(std::chrono::years(100)).count());
    BOOST_TEST(!f.done());
    f.cancel();
  }
  BOOST_TEST_MESSAGE("schedule(hours::min() / nanoseconds::min() / -1e300 s / -inf s) => now");
  for (auto f : {pool.schedule(std::chrono::hours::min(), [] { return 1; }),
                 pool.schedule(std::chrono::nanoseconds::min(), [] { return 1; }),
                 pool.schedule(dsec(-1e300), [] { return 1; }),
                 pool.schedule(dsec(-std::numeric_limits<double>::infinity()), [] { return 1; }),
                 pool.schedule_at(steady::time_point::min(), [] { return 1; })}) {
    BOOST_REQUIRE((f.wait_for(long_wait) == std::future_status::ready));
    BOOST_TEST(f.get() == 1);
  }
  BOOST_TEST_MESSAGE("execute_after(hours::max()) / execute_at(system_clock max) => never; (hours::min()) => now");
  {
    std::atomic<int> never{0};
    std::atomic<int> now{0};
    scheduled_thread_pool p(1);
    p.execute_after(std::chrono::hours::max(), [&] { never.fetch_add(1); });
    p.execute_at(std::chrono::system_clock::time_point::max(), [&] { never.fetch_add(1); });
    p.execute_after(std::chrono::hours::min(), [&] { now.fetch_add(1); });
    p.execute_at(steady::time_point::min(), [&] { now.fetch_add(1); });
    BOOST_TEST(eventually([&] { return now.load() == 2; }));
    const auto pending = p.shutdown_now();
    BOOST_TEST(pending.size() == 2u);
    for (const auto& t : pending)
      BOOST_TEST((t.deadline() - steady::now() > std::chrono::duration_cast<dur>(std::chrono::years(100))));
    BOOST_TEST(never.load() == 0);
  }
  BOOST_TEST_MESSAGE("fixed-rate catch-up with a period of hours::max(): one run, then never");
  std::atomic<int> runs{0};
  for (auto policy : {chronopool::missed_tick_policy::burst, chronopool::missed_tick_policy::delay,
                      chronopool::missed_tick_policy::skip}) {
    chronopool::periodic_options o;
    o.missed_ticks = policy;
    const int before = runs.load();
    auto f = pool.schedule_at_fixed_rate(-1h, std::chrono::hours::max(), [&] { runs.fetch_add(1); }, o);
    BOOST_TEST(eventually([&] { return f.delay() == dur::max(); }));  // the next tick saturated to "never"
    BOOST_TEST(runs.load() == before + 1);
    BOOST_TEST(!f.done());
    f.cancel();
  }
  BOOST_TEST_MESSAGE("timeouts of hours::max() on waits that are already over return at once");
  auto done = pool.submit([] { return 1; });
  BOOST_TEST((done.wait_for(std::chrono::hours::max()) == std::future_status::ready));
  BOOST_TEST((done.wait_for(std::chrono::hours::min()) == std::future_status::ready));

  BOOST_TEST_MESSAGE("steady_timer: expires_after(max/min), expires_at(max/min), async_sleep(max)");
  asio::io_context io;
  chronopool::steady_timer t(io);
  t.expires_after(dur::max());
  BOOST_TEST((t.expiry() == steady::time_point::max()));
  t.expires_after(dur::min());
  BOOST_TEST((t.expiry() <= steady::now()));
  t.expires_at(steady::time_point::min());
  int fired = 0;
  t.async_wait([&](sys_ns::error_code ec) { fired += ec ? 0 : 1; });
  bool slept = false;
  chronopool::async_sleep(io.get_executor(), std::chrono::hours::max(), [&](sys_ns::error_code) { slept = true; });
  io.run_for(50ms);
  BOOST_TEST(fired == 1);  // the past expiry fired at once
  BOOST_TEST(!slept);      // "never" never fires
  chronopool::periodic_timer ticker(io, dur::max());
  BOOST_TEST((ticker.next_tick() == steady::time_point::max()));
}

// steady_timer's expiry setters and constructors take durations of any unit
// and saturate them: hours::max() must not be converted to nanoseconds at the
// call site (a signed overflow) but mean "never" (found by this suite; it
// once overflowed).
BOOST_AUTO_TEST_CASE(timer_expires_after_saturates_durations_of_any_unit) {
  asio::io_context io;
  chronopool::steady_timer t(io);
  t.expires_after(std::chrono::hours::max());
  BOOST_TEST((t.expiry() == steady::time_point::max()));
  chronopool::steady_timer from_ctor(io, std::chrono::hours::max());
  BOOST_TEST((from_ctor.expiry() == steady::time_point::max()));
}

// schedule_at() with a time point of another clock near that clock's minimum
// is long past and runs now; the distance to that clock's now() once
// overflowed and wrapped to a far-future deadline.
BOOST_AUTO_TEST_CASE(schedule_at_the_minimum_time_point_of_another_clock_runs_now) {
  scheduled_thread_pool pool(1);
  auto f = pool.schedule_at(std::chrono::system_clock::time_point::min(), [] { return 1; });
  BOOST_REQUIRE((f.wait_for(2s) == std::future_status::ready));
  BOOST_TEST(f.get() == 1);
}

// scheduled_future::wait_until() with a time point of another clock near its
// minimum times out at once (`limit - Clock::now()` once overflowed into a
// huge positive timeout).
BOOST_AUTO_TEST_CASE(wait_until_the_minimum_time_point_of_another_clock_times_out_at_once) {
  scheduled_thread_pool pool(1);
  auto never = pool.schedule(1h, [] {});
  auto waited = std::async(std::launch::async, [&] { return never.wait_until(std::chrono::system_clock::time_point::min()); });
  const bool returned = waited.wait_for(2s) == std::future_status::ready;
  never.cancel();  // releases the waiter if it is stuck
  BOOST_TEST(returned);
  BOOST_TEST((waited.get() == std::future_status::timeout));
}

// The periodic handlers on executors reject an empty handler at once, like
// every pool entry point, instead of throwing std::bad_function_call out of
// io_context::run() at the first tick.
BOOST_AUTO_TEST_CASE(periodic_handlers_on_executors_reject_empty_handlers) {
  asio::io_context io;
  std::function<void()> empty;
  BOOST_CHECK_THROW(chronopool::schedule_at_fixed_rate(io.get_executor(), 0ms, 1ms, empty), std::invalid_argument);
  BOOST_CHECK_THROW(chronopool::schedule_with_fixed_delay(io.get_executor(), 0ms, 1ms, empty), std::invalid_argument);
  BOOST_CHECK_THROW(chronopool::schedule_cron(io.get_executor(), chronopool::cron_schedule("* * * * * *"), empty),
                    std::invalid_argument);
  BOOST_CHECK_NO_THROW(io.run_for(20ms));
}

BOOST_AUTO_TEST_SUITE_END()

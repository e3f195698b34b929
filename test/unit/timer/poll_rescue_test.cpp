// A deadline left to the poll (native mode) while the thread running the
// poll is held up: another thread of the context completes it.
#include "timer_test_support.hpp"

#include <chronopool/timer_service.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace {

/// Waits until @p done holds, or @p limit passed; whether it holds.
template <class Pred>
bool wait_until(Pred done, steady::duration limit) {
  const auto give_up = steady::now() + limit;
  while (!done()) {
    if (steady::now() > give_up) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(poll_rescue)

BOOST_AUTO_TEST_CASE(a_wait_left_to_a_stalled_poll_is_completed_by_another_thread) {
  // Two threads run the context. A's handler holds up the thread that
  // completes it (as a thread descheduled in the poll's turn would be), and
  // B, due half a millisecond after A (within the poll window, so left to
  // the poll), passes meanwhile. A thread that then arms other timers drains
  // them into the shard, finds the poll's time long passed and posts a
  // collect: the other thread completes B while A's handler still blocks.
  asio::io_context io;
  chronopool::set_poll_window(io, 1ms);
  auto work = asio::make_work_guard(io);
  std::thread runners[2] = {std::thread([&] { io.run_for(long_wait); }), std::thread([&] { io.run_for(long_wait); })};

  std::atomic<bool> a_running{false}, release_a{false}, b_done{false};
  std::thread::id a_thread, b_thread;
  const auto a_due = steady::now() + 50ms;
  timer a(io, a_due), b(io, a_due + 500us);
  a.async_wait([&](const error_code&) {
    a_thread = std::this_thread::get_id();
    a_running = true;
    wait_until([&] { return release_a.load(); }, long_wait);
  });
  b.async_wait([&](const error_code& ec) {
    BOOST_TEST(!ec);
    b_thread = std::this_thread::get_id();
    b_done = true;
  });

  BOOST_TEST_REQUIRE(wait_until([&] { return a_running.load(); }, long_wait));
  std::this_thread::sleep_until(a_due + 3ms);  // B is 2.5 ms past due
  BOOST_TEST(!b_done.load());  // the stalled poll's: nobody completed it yet
  std::vector<timer> others;
  others.reserve(64);
  for (int i = 0; i < 64; ++i) {
    others.emplace_back(io, 1h);
    others.back().async_wait([](const error_code&) {});
  }
  const bool b_while_a_blocks = wait_until([&] { return b_done.load(); }, 5s);
  release_a = true;

  BOOST_TEST(b_while_a_blocks);
  BOOST_TEST_REQUIRE(wait_until([&] { return b_done.load(); }, long_wait));
  BOOST_TEST((b_thread != a_thread));
  for (auto& t : others) t.cancel();
  work.reset();
  for (auto& r : runners) r.join();
}

BOOST_AUTO_TEST_SUITE_END()

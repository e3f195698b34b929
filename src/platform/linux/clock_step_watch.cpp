// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Clock steps on Linux: a timerfd on CLOCK_REALTIME armed with
// TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET at a far instant. The kernel
// cancels such a timer whenever the realtime clock is set discontinuously
// (clock_was_set: settimeofday, clock_settime, a step by NTP, a resume from
// suspend), and read() then fails with ECANCELED. An eventfd interrupts the
// wait. See detail/platform/clock_step_watch.hpp.
#include <chronopool/detail/platform/clock_step_watch.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <system_error>

namespace chronopool::detail::platform {

struct clock_step_watch::state {
  int timer = -1;
  int wake = -1;

  ~state() {
    if (timer >= 0) ::close(timer);
    if (wake >= 0) ::close(wake);
  }

  // Re-arming also clears the cancelled state a step left behind.
  void arm() const {
    itimerspec spec{};
    // Far enough never to expire, small enough for a 32-bit time_t.
    spec.it_value.tv_sec = 0x7fff0000;
    if (::timerfd_settime(timer, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, nullptr) != 0)
      throw std::system_error(errno, std::generic_category(), "chronopool: arming the clock-step timerfd");
  }
};

clock_step_watch::clock_step_watch() : state_(std::make_unique<state>()) {
  state_->timer = ::timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  if (state_->timer < 0)
    throw std::system_error(errno, std::generic_category(), "chronopool: timerfd_create(CLOCK_REALTIME)");
  state_->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state_->wake < 0) throw std::system_error(errno, std::generic_category(), "chronopool: eventfd");
  state_->arm();
}

clock_step_watch::~clock_step_watch() = default;

bool clock_step_watch::wait() {
  for (;;) {
    pollfd fds[2] = {{state_->timer, POLLIN, 0}, {state_->wake, POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "chronopool: poll on the clock-step timerfd");
    }
    // An interrupt wins over a step seen at the same time: its eventfd stays
    // readable, so every later wait() returns false too.
    if (fds[1].revents != 0) return false;
    if (fds[0].revents == 0) continue;
    std::uint64_t expirations = 0;
    if (::read(state_->timer, &expirations, sizeof expirations) < 0 && errno == ECANCELED) {
      state_->arm();
      return true;
    }
    // The far instant passed (the clock was set beyond it) or a spurious
    // readiness: arm again and keep waiting.
    state_->arm();
  }
}

void clock_step_watch::interrupt() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(state_->wake, &one, sizeof one);
}

std::int64_t clock_step_watch::notice_delay_ns() noexcept { return 0; }

}  // namespace chronopool::detail::platform

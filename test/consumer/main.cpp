// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A user of the installed library: a pool task, a calendar schedule, whose
// time zones link a dependency (date-tz) the package must bring along, and a
// timer on an io_context of the Asio the library was built on.
#include <chronopool/cron_schedule.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>

#include <chrono>
#include <system_error>

// The package (or chronopool.pc) passes CHRONOPOOL_STANDALONE_ASIO on exactly
// when the library was built on standalone Asio; run.cmake says which to expect.
#if defined(CHRONOPOOL_CONSUMER_EXPECTS_STANDALONE_ASIO) != defined(CHRONOPOOL_STANDALONE_ASIO)
#error "CHRONOPOOL_STANDALONE_ASIO does not match the Asio chronopool was built on"
#endif

#ifdef CHRONOPOOL_STANDALONE_ASIO
#include <asio/io_context.hpp>
namespace user_asio = ::asio;
using user_error_code = std::error_code;
#else
// A Boost.Asio user's code, unchanged.
#include <boost/asio/io_context.hpp>
namespace user_asio = boost::asio;
using user_error_code = boost::system::error_code;
#endif

int main() {
    chronopool::scheduled_thread_pool pool(1);
    auto f = pool.schedule(std::chrono::milliseconds(1), [] { return 42; });
    const chronopool::cron_schedule nightly("0 2 * * *", "Europe/Berlin");
    const auto next = nightly.next_after(std::chrono::system_clock::now());

    user_asio::io_context io;
    chronopool::steady_timer t(io, std::chrono::milliseconds(1));
    bool fired = false;
    t.async_wait([&](const user_error_code& ec) { fired = !ec; });
    io.run();
    return f.get() == 42 && next.has_value() && fired ? 0 : 1;
}

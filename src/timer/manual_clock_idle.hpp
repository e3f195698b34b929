// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Where a thread of an io_context on a manual clock meets the clock when it
// has nothing to run (auto-advance; see docs/design.md, "Testable time").
#pragma once

#include <chronopool/detail/config/asio.hpp>

namespace chronopool {
class manual_clock;
}  // namespace chronopool

namespace chronopool::detail {

class manual_clock_idle_hook;

/// Makes @p io's reactor (the scheduler's task, which a thread of
/// io_context::run runs, blocking, only when no handler is ready) one that
/// first offers the manual clock the chance to move the time. Null when it
/// cannot: the reactor exists already (an I/O object or timer of @p io was
/// made first), or the platform's io_context has no reactor task (IOCP,
/// io_uring as the default). Call it before the context's timer service
/// exists (its native timers make the reactor).
manual_clock_idle_hook* install_manual_clock_idle_hook(asio_ns::io_context& io);

/// Points @p hook at @p c (null: none, the plain reactor). The clock
/// calls it with null from its destructor.
void connect_manual_clock_idle_hook(manual_clock_idle_hook& hook, manual_clock* c) noexcept;

}  // namespace chronopool::detail

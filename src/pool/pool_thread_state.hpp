// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// Per-thread pool state that more than one part of pool_core reads.
#pragma once

namespace chronopool::detail {

class pool_core;

/// The stopped pool whose timer waits this thread is completing with
/// operation_aborted inside shutdown_now(): handlers bound to that pool's own
/// executor run here, since none of its threads will run anything again.
/// Defined in pool_submission.cpp, whose hot paths read it.
extern constinit thread_local const pool_core* aborting_waits_of;

}  // namespace chronopool::detail

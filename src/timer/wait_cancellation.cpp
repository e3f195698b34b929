// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
// A wait's cancellation slot handler: a request reaches the wait's shard.
#include <chronopool/detail/timer/timer_shard.hpp>
#include <chronopool/detail/timer/wait_op.hpp>

namespace chronopool::detail {

void wait_cancellation::operator()(asio_ns::cancellation_type_t type) {
  using ct = asio_ns::cancellation_type;
  if ((type & (ct::terminal | ct::partial | ct::total)) == ct::none) return;
  wait_state s = op->state.load();
  if (s == wait_state::starting) {
    // Not queued yet: start() sees the request, or we see it queued now.
    op->cancel_requested.store(true);
    s = op->state.load();
  }
  // Neither in the inbox, nor queued, nor fired and unclaimed: delivered or
  // dropped already, and the shard may be gone.
  if (s != wait_state::unlocked && s != wait_state::queued && s != wait_state::fired) return;
  shard.load()->cancel_wait(*op);
}

}  // namespace chronopool::detail

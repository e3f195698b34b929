// Copyright (c) 2026 The chronopool authors
// SPDX-License-Identifier: BSL-1.0
/// \file
/// The whole public API of chronopool in one include (the durable component,
/// a separate library, has its own: <chronopool/durable/scheduler.hpp>).
#pragma once

#include <chronopool/async_sleep.hpp>
#include <chronopool/basic_scheduled_timer.hpp>
#include <chronopool/cancel_after.hpp>
#include <chronopool/cron_fire.hpp>
#include <chronopool/cron_periodic.hpp>
#include <chronopool/cron_schedule.hpp>
#include <chronopool/cron_timer.hpp>
#include <chronopool/errors.hpp>
#include <chronopool/latency_histogram.hpp>
#include <chronopool/log.hpp>
#include <chronopool/manual_clock.hpp>
#include <chronopool/pending_task.hpp>
#include <chronopool/periodic.hpp>
#include <chronopool/periodic_options.hpp>
#include <chronopool/periodic_stats.hpp>
#include <chronopool/periodic_timer.hpp>
#include <chronopool/pool_manual_clock.hpp>
#include <chronopool/pool_options.hpp>
#include <chronopool/pool_stats.hpp>
#include <chronopool/pool_thread.hpp>
#include <chronopool/rejected_task.hpp>
#include <chronopool/rejection_policy.hpp>
#include <chronopool/run_state.hpp>
#include <chronopool/scheduled_future.hpp>
#include <chronopool/scheduled_thread_pool.hpp>
#include <chronopool/steady_timer.hpp>
#include <chronopool/system_timer.hpp>
#include <chronopool/task_view.hpp>
#include <chronopool/timer_service.hpp>
#include <chronopool/timer_service_stats.hpp>
#include <chronopool/version.hpp>

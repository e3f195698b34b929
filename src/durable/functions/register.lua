-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 6 of 6: the functions it registers.

-- At maxmemory with noeviction, Redis refuses a function unless it is
-- flagged allow-oom. Creating a schedule needs memory, so cp_put_v5 is
-- refused there (the caller gets OOM; cp_put_many_v5 likewise), and so is a re-drive (the dead letter
-- stays). The others free memory (ack of a one-shot, cancel, deleting a
-- dead letter) or rewrite fields of the same size (claim, ack of a periodic
-- schedule, nack, extend), so the fleet can drain what is already scheduled
-- while Redis is full. Two of them may add a little: a nack stores the
-- error text (at most 1 KiB), and a dead letter copies the payload of a
-- periodic schedule. They run anyway: refusing them would not lose the fire
-- but keep it leased, retried and failing for ever, and a full Redis should
-- not turn a bounded failure into an endless one.
redis.register_function('cp_put_v5', put)
redis.register_function('cp_put_many_v5', put_many)
redis.register_function{function_name = 'cp_claim_v5', callback = claim, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_ack_v5', callback = ack, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_nack_v5', callback = nack, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_extend_v5', callback = extend, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_release_v5', callback = release, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_cancel_v5', callback = cancel, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_get_v5', callback = get, flags = {'no-writes'}}
redis.register_function{function_name = 'cp_time_v5', callback = server_time, flags = {'no-writes'}}
-- One small key, once: processes must start at maxmemory too.
redis.register_function{function_name = 'cp_partitions_v5', callback = partitions, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_dead_list_v5', callback = dead_list, flags = {'no-writes'}}
redis.register_function('cp_dead_redrive_v5', dead_redrive)
redis.register_function{function_name = 'cp_dead_delete_v5', callback = dead_delete, flags = {'allow-oom'}}
-- Management: listing may add the ids of older schedules to the index once,
-- and pausing and resuming rewrite one field, so they run at maxmemory too
-- (an operator may need them most then); triggering and backfilling add
-- fires, so they are refused there like creating a schedule.
redis.register_function{function_name = 'cp_list_v5', callback = list, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_inspect_v5', callback = inspect, flags = {'no-writes'}}
redis.register_function{function_name = 'cp_pause_v5', callback = pause, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_resume_v5', callback = resume, flags = {'allow-oom'}}
redis.register_function('cp_trigger_v5', trigger)
redis.register_function('cp_backfill_v5', backfill)

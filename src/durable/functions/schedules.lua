-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 2 of 6 (see library.lua for the
-- keys and the rules): creating, cancelling and reading schedules, and the
-- server's clock.

-- cp_put_v4: creates a schedule; one with the same id fails EXISTS unless
-- `exists` says otherwise:
--   1 (replace): replaced, unless it was created with the same start time
--     (at_mode abs) and has exactly these parameters: then it is kept as it
--     is, so re-creating schedules at each deploy does not run again what
--     ran (a start relative to now always replaces);
--   2 (update): its task, payload, kind, period, misfire settings and
--     policy and history length are set in place, keeping its pending occurrence, lease and
--     counts, its pause, extra fires and history (the new start is not
--     applied).
-- ARGV: id, task, payload, kind (once|rate|delay), at_mode (abs|in),
--       at (ms: unix time for abs, delay for in), period_ms,
--       misfire (once|skip|catch_up), catch_up_max, exists (0|1|2),
--       history (runs to keep, 0 to 1000; empty: 10),
--       [max_attempts, backoff_ms, backoff_mult, backoff_max_ms]
-- The failure policy is sent, and stored, only when it is not the default
-- one, and the history length is stored only when it is not the default:
-- a creation then costs what it did in chronopool_v1.
-- Returns {due, now}: the pending occurrence's due (a kept or updated
-- schedule's own).
local function put(keys, args)
  local p = prefix_of(keys)
  check_library(p)
  local id, task, payload, kind = args[1], args[2], args[3], args[4]
  local at_mode, at = args[5], to_int(args[6], 'at')
  local period = to_int(args[7], 'period')
  local misfire, catch_up = args[8], to_int(args[9], 'catch_up')
  local exists_mode = args[10]
  local history = history_arg(args[11])
  if history > 1000 then error({err = 'BADARG history must be at most 1000'}) end
  -- The fields stored only when not the default: history length, policy.
  local extra = {}
  if history ~= default_history then extra = {'history', fmt(history), 'mg', '1'} end
  local policy = {}
  if args[12] ~= nil then policy = policy_args(args, 12) end
  if id == nil or id == '' then error({err = 'BADARG id must not be empty'}) end
  if task == nil or task == '' then error({err = 'BADARG task must not be empty'}) end
  if kind ~= 'once' and kind ~= 'rate' and kind ~= 'delay' then
    error({err = 'BADARG kind must be once, rate or delay'})
  end
  if kind ~= 'once' and period <= 0 then error({err = 'BADARG period must be positive'}) end
  if misfire ~= 'once' and misfire ~= 'skip' and misfire ~= 'catch_up' then
    error({err = 'BADARG misfire must be once, skip or catch_up'})
  end
  if misfire == 'catch_up' and catch_up < 1 then
    error({err = 'BADARG catch_up must be at least 1'})
  end
  local now = now_ms()
  local due
  if at_mode == 'abs' then due = at
  elseif at_mode == 'in' then
    if at < 0 then at = 0 end
    due = now + at
  else error({err = 'BADARG at_mode must be abs or in'}) end

  local key = p .. 's:' .. id
  if redis.call('EXISTS', key) == 1 then
    if exists_mode ~= '1' and exists_mode ~= '2' then error({err = 'EXISTS schedule ' .. id .. ' exists'}) end
    local f = redis.call('HMGET', key, 'task', 'payload', 'kind', 'period', 'misfire', 'catch_up', 'start', 'due',
                         'max_attempts', 'backoff', 'backoff_mult', 'backoff_max', 'history')
    -- A policy equal to the default is not stored (see put_call).
    local same_policy = true
    for i = 0, 3 do
      if (f[9 + i] or nil) ~= policy[2 * i + 2] then same_policy = false end
    end
    local same = f[1] == task and f[2] == payload and f[3] == kind and f[4] == fmt(period) and
                 f[5] == misfire and f[6] == fmt(catch_up) and same_policy and (f[13] or nil) == extra[2] and
                 at_mode == 'abs' and f[7] == fmt(due)
    if same then return {tonumber(f[8]), now} end
    if exists_mode == '2' then
      redis.call('HSET', key, 'task', task, 'payload', payload, 'kind', kind, 'period', fmt(period),
                 'misfire', misfire, 'catch_up', fmt(catch_up))
      if #extra > 0 then redis.call('HSET', key, unpack(extra)) else redis.call('HDEL', key, 'history') end
      if #policy > 0 then
        redis.call('HSET', key, unpack(policy))
      else
        redis.call('HDEL', key, 'max_attempts', 'backoff', 'backoff_mult', 'backoff_max')
      end
      return {tonumber(f[8]), now}
    end
    remove_schedule(p, id)
  end
  -- 'start': the due it was created with, to tell an identical re-creation;
  -- 'mg' first (see "The fast path"): '1' with a history length of its own.
  redis.call('HSET', key, 'mg', extra[4] or '0', 'task', task, 'payload', payload, 'kind', kind,
             'period', fmt(period), 'due', fmt(due), 'start', fmt(due), 'misfire', misfire,
             'catch_up', fmt(catch_up), 'created', fmt(now), 'fires', '0',
             'last_token', '0', unpack(policy))
  if #extra > 0 then redis.call('HSET', key, extra[1], extra[2]) end
  redis.call('ZADD', p .. 'due', due, id)
  redis.call('ZADD', p .. 'ids', 0, id)
  wake_if_head(p, id, due)
  return {due, now}
end

-- The occurrence a claim at `now` fires for a periodic schedule whose

-- cp_cancel_v4: deletes a schedule, its pending occurrence, any lease (a
-- running fire's ack then fails STALE), its pause, extra fires and
-- history. ARGV: id. Returns 1 if it existed.
local function cancel(keys, args)
  return remove_schedule(prefix_of(keys), args[1])
end

-- cp_get_v4: the schedule's fields (with those of its latest lease) as a
-- flat list, plus "eligible" while it waits in the due set and
-- "lease_expires" while a lease is held; empty when there is no schedule.
local function get(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local out = redis.call('HGETALL', p .. 's:' .. id)
  if #out == 0 then return out end
  local score = redis.call('ZSCORE', p .. 'due', id)
  if score then
    out[#out + 1] = 'eligible'
    out[#out + 1] = score
  end
  local expiry = redis.call('ZSCORE', p .. 'inflight', id)
  if expiry then
    out[#out + 1] = 'lease_expires'
    out[#out + 1] = expiry
  end
  return out
end

-- cp_time_v4: Redis's clock, the one that decides what is due.
local function server_time(keys, args)
  return now_ms()
end

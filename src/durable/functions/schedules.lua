-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 2 of 6 (see library.lua for the
-- keys and the rules): creating, cancelling and reading schedules, and the
-- server's clock.

-- cp_put_v5: creates a schedule; one with the same id fails EXISTS unless
-- `exists` says otherwise:
--   1 (replace): replaced, unless it has exactly these parameters and was
--     created with the same start time (at_mode abs), or is a cron
--     schedule (whose start is always the first instant after now): then it
--     is kept as it is, so re-creating schedules at each deploy does not
--     run again what ran (a start relative to now always replaces);
--   2 (update): its task, payload, kind, period, cron expression and zone,
--     misfire settings and policy and history length are set in place,
--     keeping its pending occurrence, lease and counts, its pause, extra
--     fires and history (the new start is not applied).
-- ARGV (18, PUT_ARGS): id, task, payload, kind (once|rate|delay|cron),
--       at_mode (abs|in), at (ms: unix time for abs, delay for in),
--       period_ms (0 for cron), misfire (once|skip|catch_up), catch_up_max,
--       exists (0|1|2), history (runs to keep, 0 to 1000; empty: 10),
--       max_attempts, backoff_ms, backoff_mult, backoff_max_ms (all four
--       empty: the default policy), cron, tz, cnext (kind cron: the
--       expression, its IANA zone and the instant after `at`, which a
--       process computed from Redis's TIME; empty otherwise)
-- The failure policy is stored only when it is not the default one, and
-- the history length only when it is not the default: a creation then
-- costs what it did in chronopool_v1.
-- Returns {due, now}: the pending occurrence's due (a kept or updated
-- schedule's own).
local put_args = 18

-- One schedule of cp_put_v5 / cp_put_many_v5 from args[b + 1 .. b + 18].
-- Every check comes before the first write, so an error leaves nothing
-- behind (cp_put_many_v5 goes on with the next item). Returns due and the
-- outcome: created, replaced, updated or unchanged.
local function put_one(p, args, b, now)
  local id, task, payload, kind = args[b + 1], args[b + 2], args[b + 3], args[b + 4]
  local at_mode, at = args[b + 5], to_int(args[b + 6], 'at')
  local period = to_int(args[b + 7], 'period')
  local misfire, catch_up = args[b + 8], to_int(args[b + 9], 'catch_up')
  local exists_mode = args[b + 10]
  local history = history_arg(args[b + 11])
  if history > 1000 then error({err = 'BADARG history must be at most 1000'}) end
  -- The fields stored only when not the default: history length, policy.
  local extra = {}
  if history ~= default_history then extra = {'history', fmt(history), 'mg', '1'} end
  local policy = {}
  if args[b + 12] ~= nil and args[b + 12] ~= '' then policy = policy_args(args, b + 12) end
  local cron, tz, cnext = args[b + 16] or '', args[b + 17] or '', args[b + 18] or ''
  if id == nil or id == '' then error({err = 'BADARG id must not be empty'}) end
  if task == nil or task == '' then error({err = 'BADARG task must not be empty'}) end
  if kind ~= 'once' and kind ~= 'rate' and kind ~= 'delay' and kind ~= 'cron' then
    error({err = 'BADARG kind must be once, rate, delay or cron'})
  end
  if kind == 'cron' then
    if cron == '' or tz == '' then error({err = 'BADARG a cron schedule needs cron and tz'}) end
    if period ~= 0 then error({err = 'BADARG period must be 0 for a cron schedule'}) end
    if at_mode ~= 'abs' then error({err = 'BADARG a cron schedule starts at an instant (at_mode abs)'}) end
    cnext = fmt(to_int(cnext, 'cnext'))
  elseif cron ~= '' then
    error({err = 'BADARG cron is only for kind cron'})
  end
  if (kind == 'rate' or kind == 'delay') and period <= 0 then error({err = 'BADARG period must be positive'}) end
  if misfire ~= 'once' and misfire ~= 'skip' and misfire ~= 'catch_up' then
    error({err = 'BADARG misfire must be once, skip or catch_up'})
  end
  if misfire == 'catch_up' and catch_up < 1 then
    error({err = 'BADARG catch_up must be at least 1'})
  end
  local due
  if at_mode == 'abs' then due = at
  elseif at_mode == 'in' then
    if at < 0 then at = 0 end
    due = now + at
  else error({err = 'BADARG at_mode must be abs or in'}) end

  local key = p .. 's:' .. id
  local outcome = 'created'
  if redis.call('EXISTS', key) == 1 then
    if exists_mode ~= '1' and exists_mode ~= '2' then error({err = 'EXISTS schedule ' .. id .. ' exists'}) end
    local f = redis.call('HMGET', key, 'task', 'payload', 'kind', 'period', 'misfire', 'catch_up', 'start', 'due',
                         'max_attempts', 'backoff', 'backoff_mult', 'backoff_max', 'history', 'cron', 'tz')
    -- A policy equal to the default is not stored (see put_call).
    local same_policy = true
    for i = 0, 3 do
      if (f[9 + i] or nil) ~= policy[2 * i + 2] then same_policy = false end
    end
    -- A cron schedule's start is the first instant after now, never the
    -- same twice: its expression and zone stand for it.
    local same_start = at_mode == 'abs' and f[7] == fmt(due)
    if kind == 'cron' then same_start = f[14] == cron and f[15] == tz end
    local same = f[1] == task and f[2] == payload and f[3] == kind and f[4] == fmt(period) and
                 f[5] == misfire and f[6] == fmt(catch_up) and same_policy and (f[13] or nil) == extra[2] and
                 same_start
    if same then return tonumber(f[8]), 'unchanged' end
    if exists_mode == '2' then
      redis.call('HSET', key, 'task', task, 'payload', payload, 'kind', kind, 'period', fmt(period),
                 'misfire', misfire, 'catch_up', fmt(catch_up))
      if #extra > 0 then redis.call('HSET', key, unpack(extra)) else redis.call('HDEL', key, 'history') end
      if #policy > 0 then
        redis.call('HSET', key, unpack(policy))
      else
        redis.call('HDEL', key, 'max_attempts', 'backoff', 'backoff_mult', 'backoff_max')
      end
      -- The pending occurrence stays; a new expression (or a schedule that
      -- becomes a cron one) applies from its first instant after now, `due`
      -- here: the next for a fire that ends without a plan of the new
      -- expression (claimed before the update), and for the claim's dead
      -- letter. Later acks compute their plans with the new expression.
      if kind == 'cron' then
        redis.call('HSET', key, 'cron', cron, 'tz', tz)
        if f[3] ~= 'cron' or f[14] ~= cron or f[15] ~= tz then
          redis.call('HSET', key, 'cnext', fmt(due))
          redis.call('HDEL', key, 'cbudget')
        end
      else
        redis.call('HDEL', key, 'cron', 'tz', 'cnext', 'cbudget')
      end
      return tonumber(f[8]), 'updated'
    end
    remove_schedule(p, id)
    outcome = 'replaced'
  end
  -- 'start': the due it was created with, to tell an identical re-creation;
  -- 'mg' first (see "The fast path"): '1' with a history length of its own.
  -- One HSET with every field: each redis.call costs more than its fields.
  local fields = {'mg', extra[4] or '0', 'task', task, 'payload', payload, 'kind', kind, 'period', fmt(period),
                  'due', fmt(due), 'start', fmt(due), 'misfire', misfire, 'catch_up', fmt(catch_up),
                  'created', fmt(now), 'fires', '0', 'last_token', '0'}
  for _, v in ipairs(policy) do fields[#fields + 1] = v end
  if #extra > 0 then
    fields[#fields + 1] = extra[1]
    fields[#fields + 1] = extra[2]
  end
  if kind == 'cron' then
    fields[#fields + 1] = 'cron'
    fields[#fields + 1] = cron
    fields[#fields + 1] = 'tz'
    fields[#fields + 1] = tz
    fields[#fields + 1] = 'cnext'
    fields[#fields + 1] = cnext
  end
  redis.call('HSET', key, unpack(fields))
  redis.call('ZADD', p .. 'due', due, id)
  redis.call('ZADD', p .. 'ids', 0, id)
  wake_if_head(p, id, due)
  return due, outcome
end

local function put(keys, args)
  local p = prefix_of(keys)
  check_library(p)
  local now = now_ms()
  local due = put_one(p, args, 0, now)
  return {due, now}
end

-- cp_put_many_v5: creates or upserts many schedules in one call, each as
-- cp_put_v5 would, in order. ARGV: items of put_args (18) values each.
-- Returns {now, {outcome, due or error text}...}, one entry per item:
-- outcome created, replaced, updated, unchanged, or error (that item left
-- nothing behind; the others are not affected).
local function put_many(keys, args)
  local p = prefix_of(keys)
  if #args % put_args ~= 0 then
    error({err = 'BADARG cp_put_many_v5 takes items of ' .. put_args .. ' values'})
  end
  check_library(p)
  local now = now_ms()
  local out = {now}
  for b = 0, #args - put_args, put_args do
    local ok, due, outcome = pcall(put_one, p, args, b, now)
    if ok then
      out[#out + 1] = {outcome, due}
    else
      local text = due
      if type(due) == 'table' then text = due.err or due.message or 'error' end
      out[#out + 1] = {'error', tostring(text)}
    end
  end
  return out
end

-- The occurrence a claim at `now` fires for a periodic schedule whose

-- cp_cancel_v5: deletes a schedule, its pending occurrence, any lease (a
-- running fire's ack then fails STALE), its pause, extra fires and
-- history. ARGV: id. Returns 1 if it existed.
local function cancel(keys, args)
  return remove_schedule(prefix_of(keys), args[1])
end

-- cp_get_v5: the schedule's fields (with those of its latest lease) as a
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

-- cp_time_v5: Redis's clock, the one that decides what is due.
local function server_time(keys, args)
  return now_ms()
end

local max_partitions = 1024  -- scheduler_options.hpp: max_partitions

-- cp_partitions_v5 (key "cp:{<ns>}:due"; ARGV: the caller's count): the
-- stored count, written on first use: the caller's, or 1 when "cp:{<ns>}:"
-- holds data already (from before partitions).
local function partitions(keys, args)
  local p = prefix_of(keys)
  local want = to_int(args[1], 'partitions')
  if want < 1 or want > max_partitions then
    error({err = 'BADARG partitions must be 1 to ' .. max_partitions .. ', got ' .. fmt(want)})
  end
  local stored = redis.call('GET', p .. 'partitions')
  if stored then return tonumber(stored) end
  if want > 1 and redis.call('EXISTS', p .. 'epoch', p .. 'due', p .. 'inflight', p .. 'ids', p .. 'dead',
                             p .. 'fence') > 0 then
    want = 1
  end
  redis.call('SET', p .. 'partitions', fmt(want))
  return want
end

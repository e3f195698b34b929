-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 5 of 6 (see library.lua for the
-- keys and the rules): managing schedules, for operators: listing,
-- inspecting, pausing and resuming, triggering now, backfilling.

-- The most schedules one list call returns, and the most occurrences one
-- backfill call enqueues (a caller may ask for fewer).
local max_list = 1000
local max_backfill = 1000

local function not_found(id)
  error({err = 'NOTFOUND schedule ' .. id .. ' does not exist'})
end

local function not_periodic(id)
  error({err = 'NOTPERIODIC schedule ' .. id .. ' is a one-shot: only periodic schedules take extra fires'})
end

-- Whether schedule `id` is between two attempts of one occurrence (nacked
-- or given back, not leased now): its lease fields name an occurrence still
-- pending. Callers check the inflight set first.
local function retrying(p, id, lease_due, lease_x, due)
  if not lease_due then return false end
  if lease_x == '1' then return redis.call('ZSCORE', p .. 'x:' .. id, lease_due) ~= false end
  return tonumber(lease_due) == tonumber(due)
end

-- One schedule as listed, {id, task, kind, period, due, state, attempts,
-- eligible, extras, cron, tz}, or nil when there is none (cron and tz are
-- empty but for a cron schedule). state: paused, running (a
-- fire of it is leased) or active; attempts: those of its pending
-- occurrence (the running one, or one between retries), else 0; eligible:
-- when it may next be claimed (-1: not waiting in the due set); extras:
-- how many extra fires wait.
local function summary(p, id)
  local f = redis.call('HMGET', p .. 's:' .. id, 'task', 'kind', 'period', 'due', 'paused', 'lease_due',
                       'lease_attempt', 'lease_x', 'xnext', 'cron', 'tz')
  if not f[1] then return nil end
  local running = redis.call('ZSCORE', p .. 'inflight', id)
  local state = 'active'
  if f[5] then state = 'paused' elseif running then state = 'running' end
  local attempts = 0
  if running or retrying(p, id, f[6], f[8], f[4]) then attempts = tonumber(f[7]) or 0 end
  local eligible = redis.call('ZSCORE', p .. 'due', id) or '-1'
  local extras = 0
  if f[9] then extras = redis.call('ZCARD', p .. 'x:' .. id) end
  return {id, f[1], f[2], f[3], f[4], state, attempts, eligible, extras, f[10] or '', f[11] or ''}
end

-- Schedules created by chronopool_v3 are not in the ids index: the first
-- list call adds those waiting or leased (a v3 schedule is always in one of
-- the two sets), once per namespace.
local function build_index(p)
  if redis.call('EXISTS', p .. 'ids_built') == 1 then return end
  for _, set in ipairs({'due', 'inflight'}) do
    local ids = redis.call('ZRANGE', p .. set, 0, -1)
    for i = 1, #ids, 500 do  -- in slices: unpack() has a limit
      local zargs = {}
      for j = i, math.min(i + 499, #ids) do
        zargs[#zargs + 1] = 0
        zargs[#zargs + 1] = ids[j]
      end
      redis.call('ZADD', p .. 'ids', unpack(zargs))
    end
  end
  redis.call('SET', p .. 'ids_built', '1')
end

-- cp_list_v5: up to n (at most 1000) schedules in id order (bytewise), those
-- whose id starts with `prefix` (empty: all), after id `after` (exclusive;
-- empty: from the first).
-- ARGV: prefix, after, n
-- Returns {cursor, {summary...}}: cursor is the last id returned when there
-- may be more (pass it as `after`), else empty.
local function list(keys, args)
  local p = prefix_of(keys)
  local prefix, after = args[1] or '', args[2] or ''
  local n = to_int(args[3], 'n')
  if n <= 0 then error({err = 'BADARG n must be positive'}) end
  if n > max_list then n = max_list end
  build_index(p)
  local min, max = '-', '+'
  if prefix ~= '' then
    min = '[' .. prefix
    max = '[' .. prefix .. '\255'
  end
  if after ~= '' and after >= prefix then min = '(' .. after end
  local ids = redis.call('ZRANGEBYLEX', p .. 'ids', min, max, 'LIMIT', 0, n)
  local out = {}
  for _, id in ipairs(ids) do
    local s = summary(p, id)
    if s then out[#out + 1] = s else redis.call('ZREM', p .. 'ids', id) end
  end
  local cursor = ''
  if #ids == n then cursor = ids[#ids] end
  return {cursor, out}
end

-- cp_inspect_v5: one schedule in full.
-- ARGV: id
-- Returns {summary, fields, runs, extras}: the summary as listed; every
-- field of its hash as a flat list, plus lease_expires while leased; its
-- history, newest first, its history length of them (see record_run); the
-- first 100 extra fires' times.
-- Error NOTFOUND when there is no such schedule.
local function inspect(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local s = summary(p, id)
  if not s then not_found(id) end
  local f = redis.call('HGETALL', p .. 's:' .. id)
  local keep = default_history
  for i = 1, #f, 2 do
    if f[i] == 'history' then keep = tonumber(f[i + 1]) end
  end
  local expiry = redis.call('ZSCORE', p .. 'inflight', id)
  if expiry then
    f[#f + 1] = 'lease_expires'
    f[#f + 1] = expiry
  end
  local runs = {}
  if keep > 0 then runs = redis.call('LRANGE', p .. 'h:' .. id, 0, keep - 1) end
  return {s, f, runs, redis.call('ZRANGE', p .. 'x:' .. id, 0, 99)}
end

-- cp_pause_v5: no fire of the schedule is claimed until it is resumed; one
-- running now runs on (its ack records it and moves the schedule on, but
-- does not put it back in the due set).
-- ARGV: id. Returns 1 when paused now, 0 when it was paused already; error
-- NOTFOUND.
local function pause(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'kind', 'paused')
  if not f[1] then not_found(id) end
  if f[2] then return 0 end
  redis.call('HSET', skey, 'paused', '1', 'mg', '1')
  redis.call('ZREM', p .. 'due', id)
  return 1
end

-- cp_resume_v5: a paused schedule waits to be claimed again: a fire between
-- retries at its retry time, else its pending occurrence (or an earlier
-- extra fire) at its time. Occurrences missed meanwhile are then handled by
-- the claim as after an outage: the schedule's misfire policy applies.
-- ARGV: id. Returns 1 when resumed now, 0 when it was not paused; error
-- NOTFOUND.
local function resume(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'kind', 'paused', 'due', 'lease_due', 'lease_x', 'xnext', 'retry_at')
  if not f[1] then not_found(id) end
  if not f[2] then return 0 end
  redis.call('HDEL', skey, 'paused')
  if redis.call('ZSCORE', p .. 'inflight', id) then return 1 end  -- its ack or nack puts it back
  if retrying(p, id, f[4], f[5], f[3]) then
    local at = tonumber(f[7]) or now_ms()
    redis.call('ZADD', p .. 'due', at, id)
    wake_if_head(p, id, at)
  else
    requeue(p, id, tonumber(f[3]), f[6], nil)
  end
  return 1
end

-- Adds extra fires at `times` (ms) to schedule `id`, whose fields f are
-- {kind, paused, due, lease_due, lease_x, xnext}, and brings its claim
-- forward to the earliest when it waits in the due set for something later
-- (not while paused, leased or between retries: the extra fires then wait
-- their turn, so runs never overlap). Returns how many were new (an
-- occurrence already waiting is not added twice).
local function add_extras(p, id, f, times)
  local added = 0
  for i = 1, #times, 500 do
    local zargs = {}
    for j = i, math.min(i + 499, #times) do
      zargs[#zargs + 1] = times[j]
      zargs[#zargs + 1] = fmt(times[j])
    end
    added = added + redis.call('ZADD', p .. 'x:' .. id, unpack(zargs))
  end
  local earliest = tonumber(f[6])
  for _, t in ipairs(times) do
    if earliest == nil or t < earliest then earliest = t end
  end
  redis.call('HSET', p .. 's:' .. id, 'xnext', fmt(earliest), 'mg', '1')
  local score = redis.call('ZSCORE', p .. 'due', id)
  if score and earliest < tonumber(score) and not retrying(p, id, f[4], f[5], f[3]) then
    redis.call('ZADD', p .. 'due', earliest, id)
    wake_if_head(p, id, earliest)
  end
  return added
end

local function extra_fields(p, id)
  local f = redis.call('HMGET', p .. 's:' .. id, 'kind', 'paused', 'due', 'lease_due', 'lease_x', 'xnext', 'period',
                       'cron', 'tz')
  if not f[1] then not_found(id) end
  if f[1] == 'once' then not_periodic(id) end
  return f
end

-- cp_trigger_v5: one extra fire of a periodic schedule, due now (its fire
-- id "<id>@<now>"); the periodic occurrences keep their times. While a fire
-- of the schedule runs, the extra one is queued behind it; while it is
-- paused, until it is resumed.
-- ARGV: id. Returns {now, 1 when a fire of it is running (queued behind
-- it), else 0}; errors NOTFOUND, NOTPERIODIC.
local function trigger(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local f = extra_fields(p, id)
  local now = now_ms()
  add_extras(p, id, f, {now})
  local running = 0
  if redis.call('ZSCORE', p .. 'inflight', id) then running = 1 end
  return {now, running}
end

-- cp_backfill_v5: the occurrences of a periodic schedule in [from, to) as
-- extra fires, each run once, oldest first, without moving the schedule.
-- Occurrences lie on the grid of its pending occurrence (due + k period,
-- which for a fixed-rate schedule is its own grid); those at or after the
-- pending one are left out, as the schedule runs them itself.
-- A cron schedule's instants come from a process (Lua has no calendar):
-- called without them, it answers {'cron', due, cron, tz}, and the process
-- sends the instants in [from, min(to, due)) it computed with them.
-- ARGV: id, from, to, limit (at most 1000)[, instant...]
-- Returns {occurrences in the range, how many were new}; errors NOTFOUND,
-- NOTPERIODIC, BADARG for from >= to, RANGE when more than `limit`
-- occurrences lie in the range (nothing is enqueued then).
local function backfill(keys, args)
  local p = prefix_of(keys)
  local id = args[1]
  local from, to = to_int(args[2], 'from'), to_int(args[3], 'to')
  local limit = to_int(args[4], 'limit')
  if limit <= 0 or limit > max_backfill then limit = max_backfill end
  if from >= to then error({err = 'BADARG from must be before to'}) end
  local f = extra_fields(p, id)
  local period, due = tonumber(f[7]), tonumber(f[3])
  local last = to
  if due < last then last = due end  -- exclusive
  local times = {}
  if f[1] == 'cron' then
    if args[5] == nil then return {'cron', due, f[8], f[9]} end
    -- The schedule may have moved since the process asked: keep [from, last).
    for i = 5, #args do
      local t = to_int(args[i], 'instant')
      if t >= from and t < last then times[#times + 1] = t end
    end
    if #times > limit then
      error({err = 'RANGE backfill of ' .. id .. ' from ' .. fmt(from) .. ' to ' .. fmt(to) .. ' ms has ' ..
                   fmt(#times) .. ' occurrences, more than ' .. fmt(limit)})
    end
  else
    local first = due + math.ceil((from - due) / period) * period
    if first < last then
      local count = math.floor((last - 1 - first) / period) + 1
      if count > limit then
        error({err = 'RANGE backfill of ' .. id .. ' from ' .. fmt(from) .. ' to ' .. fmt(to) .. ' ms has ' ..
                     fmt(count) .. ' occurrences, more than ' .. fmt(limit)})
      end
      for t = first, last - 1, period do times[#times + 1] = t end
    end
  end
  local added = 0
  if #times > 0 then added = add_extras(p, id, f, times) end
  return {#times, added}
end

#!lua name=chronopool_v3
-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's durable schedules: the server-side half.
--
-- Every function takes one key, the namespace's due set "<p>due", where <p>
-- is "cp:{<namespace>}:". All other keys are derived from that prefix and
-- share its hash tag, so in a cluster they live in the one slot the key
-- routes to. Keys:
--   <p>due        ZSET  schedule id -> when it may be claimed (ms, Redis TIME)
--   <p>inflight   ZSET  schedule id -> when its lease expires (ms)
--   <p>s:<id>     HASH  the schedule: task, payload, kind, period, due, ...
--                       and the lease of its latest fire: lease_owner,
--                       lease_token, lease_due, lease_attempt
--                       (one hash, so a claim or an ack touches one key per fire)
--   <p>fence      STRING the last fencing token handed out (see "Tokens")
--   <p>epoch      STRING the namespace's epoch, "<ms>/<owner>": created by
--                       the first claim that finds it missing (see "Epoch")
--   <p>dead       ZSET  fire id -> when it was dead-lettered (ms)
--   <p>dl:<fire>  HASH  a dead letter: the fire's schedule id, task, payload,
--                       due, attempts, last error, when, and the failure
--                       policy to re-drive it with
--   <p>wake       pub/sub channel: a new earliest time, published as ms
--
-- A schedule has exactly one pending occurrence. Its "due" field is the
-- occurrence's nominal time and, with the id, names the fire ("<id>@<due>");
-- the due set's score is only when it may next be claimed (later than due
-- after a nack). Redis TIME is the only clock.
--
-- Epoch: a namespace's data can vanish under a running fleet (Redis
-- restarted without persistence, FLUSHALL, failover to a replica that had
-- not received the last writes). Its epoch key goes with it, and the first
-- claim afterwards creates a new one: claim returns the epoch, so each
-- process notices the change (and reports data_lost) without another round
-- trip. Ack, nack and extend carry the epoch the fire was claimed in and
-- fail with DATA_LOST when it is not the namespace's epoch any more: a fire
-- claimed before the loss is never acknowledged against the new data.
--
-- Tokens: fencing tokens must keep growing across such a loss, for the
-- whole fleet, although the counter itself may be lost (or rolled back:
-- AOF everysec loses up to a second of INCRs). So a claim hands out tokens
-- above both the counter and tokens_per_ms * Redis's time in ms: tokens are
-- at least "microseconds since 1970", and a claim made after a loss starts
-- above every token handed out before it as long as (a) Redis's clock did
-- not go back (across a failover: the replica's clock is not behind the
-- old primary's by more than the time between the last claim before the
-- loss and the first after it) and (b) the fleet never took more than
-- tokens_per_ms tokens per millisecond over any stretch (a million claims
-- a second: Redis runs these functions one at a time, far slower). Tokens
-- stay below 2^53 (exact in Lua's doubles) until the year 2255.
--
-- Failure policy (per schedule, fields max_attempts, backoff, backoff_mult,
-- backoff_max): attempt k of an occurrence that fails (nack) is retried
-- after a wait drawn from [b/2, b], b = min(backoff_max, backoff *
-- backoff_mult^(k-1)); the attempt numbered max_attempts that fails, or
-- whose lease runs out, dead-letters the occurrence instead: a record under
-- <p>dl:<fire>, and a periodic schedule moves on to its next occurrence (a
-- one-shot ends). Later occurrences wait while one is retried: a schedule
-- has one pending occurrence, so its runs never overlap.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function fmt(n)
  return string.format('%.0f', n)
end

local tokens_per_ms = 1000

-- The namespace's epoch, created (by `owner`, at `now`) when missing.
local function epoch_of(p, now, owner)
  local e = redis.call('GET', p .. 'epoch')
  if e then return e end
  e = fmt(now) .. '/' .. owner
  redis.call('SET', p .. 'epoch', e)
  return e
end

-- Fails with DATA_LOST unless `epoch` (sent by a caller that claimed in it)
-- is the namespace's epoch. A caller that sends none is not checked.
local function check_epoch(p, epoch)
  if epoch == nil or epoch == '' then return end
  if redis.call('GET', p .. 'epoch') ~= epoch then
    error({err = 'DATA_LOST the namespace lost its data since epoch ' .. epoch})
  end
end

local function prefix_of(keys)
  return string.sub(keys[1], 1, -4)   -- strip "due"
end

local function to_int(s, what)
  local n = tonumber(s)
  if n == nil or n ~= math.floor(n) then
    error({err = 'BADARG ' .. what .. ' must be an integer'})
  end
  return n
end

-- Publishes the wake channel when `id` is now the earliest entry.
local function wake_if_head(p, id, score)
  local head = redis.call('ZRANGE', p .. 'due', 0, 0)
  if head[1] == id then
    redis.call('PUBLISH', p .. 'wake', fmt(score))
  end
end

-- Earliest moment anything may need doing: the head of the due set or the
-- first lease to expire; -1 when both are empty.
local function next_event(p)
  local nxt = -1
  local d = redis.call('ZRANGE', p .. 'due', 0, 0, 'WITHSCORES')
  if d[2] then nxt = tonumber(d[2]) end
  local l = redis.call('ZRANGE', p .. 'inflight', 0, 0, 'WITHSCORES')
  if l[2] then
    local e = tonumber(l[2])
    if nxt < 0 or e < nxt then nxt = e end
  end
  return nxt
end

local function remove_schedule(p, id)
  local existed = redis.call('DEL', p .. 's:' .. id)
  redis.call('ZREM', p .. 'due', id)
  redis.call('ZREM', p .. 'inflight', id)
  return existed
end

-- The policy of schedules stored without one: created with the default
-- policy (failure_policy{} in scheduler_options.hpp: keep the two equal),
-- or by chronopool_v1.
local default_policy = {max_attempts = 5, backoff = 1000, mult = 2, backoff_max = 60000}
local max_error_bytes = 1024

-- The next occurrence of a periodic schedule whose occurrence `due` is
-- finished (acknowledged or dead-lettered), or nil for a one-shot.
local function next_due(kind, period, due, now)
  if kind == 'rate' then return due + period end
  if kind == 'delay' then return now + period end
  return nil
end

-- Moves occurrence `due` of schedule `id` (leased or not) to the dead
-- letters with `attempts` and `err`; a periodic schedule gets its next
-- occurrence, a one-shot is deleted. Returns the next due, or -1.
local function dead_letter(p, id, due, attempts, err, now)
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'task', 'payload', 'kind', 'period', 'max_attempts', 'backoff',
                       'backoff_mult', 'backoff_max')
  local fire = id .. '@' .. fmt(due)
  local dkey = p .. 'dl:' .. fire
  redis.call('HSET', dkey, 'schedule', id, 'fire', fire, 'task', f[1], 'payload', f[2], 'due', fmt(due),
             'attempts', fmt(attempts), 'error', string.sub(err or '', 1, max_error_bytes), 'at', fmt(now),
             'max_attempts', f[5] or fmt(default_policy.max_attempts),
             'backoff', f[6] or fmt(default_policy.backoff),
             'backoff_mult', f[7] or tostring(default_policy.mult),
             'backoff_max', f[8] or fmt(default_policy.backoff_max))
  redis.call('ZADD', p .. 'dead', now, fire)
  redis.call('ZREM', p .. 'inflight', id)
  local nxt = next_due(f[3], tonumber(f[4]), due, now)
  if nxt == nil then
    redis.call('DEL', skey)
    redis.call('ZREM', p .. 'due', id)
    return -1
  end
  redis.call('HSET', skey, 'due', fmt(nxt), 'last_error', string.sub(err or '', 1, max_error_bytes))
  redis.call('ZADD', p .. 'due', nxt, id)
  wake_if_head(p, id, nxt)
  return nxt
end

-- Checks and returns the failure policy's arguments as strings to store.
local function policy_args(args, first)
  local max_attempts = to_int(args[first], 'max_attempts')
  local backoff = to_int(args[first + 1], 'backoff')
  local mult = tonumber(args[first + 2])
  local backoff_max = to_int(args[first + 3], 'backoff_max')
  if max_attempts < 1 then error({err = 'BADARG max_attempts must be at least 1'}) end
  if backoff < 0 or backoff_max < 0 then error({err = 'BADARG backoff must not be negative'}) end
  if mult == nil or mult ~= mult or mult < 1 or mult == math.huge then
    error({err = 'BADARG backoff_mult must be a finite number of at least 1'})
  end
  return {'max_attempts', fmt(max_attempts), 'backoff', fmt(backoff), 'backoff_mult', args[first + 2],
          'backoff_max', fmt(backoff_max)}
end

-- cp_put_v3: creates a schedule; one with the same id fails EXISTS unless
-- `exists` says otherwise:
--   1 (replace): replaced, unless it was created with the same start time
--     (at_mode abs) and has exactly these parameters: then it is kept as it
--     is, so re-creating schedules at each deploy does not run again what
--     ran (a start relative to now always replaces);
--   2 (update): its task, payload, kind, period, misfire settings and
--     policy are set in place, keeping its pending occurrence, lease and
--     counts (the new start is not applied).
-- ARGV: id, task, payload, kind (once|rate|delay), at_mode (abs|in),
--       at (ms: unix time for abs, delay for in), period_ms,
--       misfire (once|skip|catch_up), catch_up_max, exists (0|1|2),
--       [max_attempts, backoff_ms, backoff_mult, backoff_max_ms]
-- The failure policy is sent, and stored, only when it is not the default
-- one: a creation then costs what it did in chronopool_v1.
-- Returns {due, now}: the pending occurrence's due (a kept or updated
-- schedule's own).
local function put(keys, args)
  local p = prefix_of(keys)
  local id, task, payload, kind = args[1], args[2], args[3], args[4]
  local at_mode, at = args[5], to_int(args[6], 'at')
  local period = to_int(args[7], 'period')
  local misfire, catch_up = args[8], to_int(args[9], 'catch_up')
  local exists_mode = args[10]
  local policy = {}
  if args[11] ~= nil then policy = policy_args(args, 11) end
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
                         'max_attempts', 'backoff', 'backoff_mult', 'backoff_max')
    -- A policy equal to the default is not stored (see put_call).
    local same_policy = true
    for i = 0, 3 do
      if (f[9 + i] or nil) ~= policy[2 * i + 2] then same_policy = false end
    end
    local same = f[1] == task and f[2] == payload and f[3] == kind and f[4] == fmt(period) and
                 f[5] == misfire and f[6] == fmt(catch_up) and same_policy and
                 at_mode == 'abs' and f[7] == fmt(due)
    if same then return {tonumber(f[8]), now} end
    if exists_mode == '2' then
      redis.call('HSET', key, 'task', task, 'payload', payload, 'kind', kind, 'period', fmt(period),
                 'misfire', misfire, 'catch_up', fmt(catch_up))
      if #policy > 0 then
        redis.call('HSET', key, unpack(policy))
      else
        redis.call('HDEL', key, 'max_attempts', 'backoff', 'backoff_mult', 'backoff_max')
      end
      return {tonumber(f[8]), now}
    end
    remove_schedule(p, id)
  end
  -- 'start': the due it was created with, to tell an identical re-creation.
  redis.call('HSET', key, 'task', task, 'payload', payload, 'kind', kind,
             'period', fmt(period), 'due', fmt(due), 'start', fmt(due), 'misfire', misfire,
             'catch_up', fmt(catch_up), 'created', fmt(now), 'fires', '0',
             'last_token', '0', unpack(policy))
  redis.call('ZADD', p .. 'due', due, id)
  wake_if_head(p, id, due)
  return {due, now}
end

-- The occurrence a claim at `now` fires for a periodic schedule whose
-- pending one is `due`, after the misfire policy: nil means "skipped,
-- requeued for later".
local function apply_misfire(p, id, kind, period, misfire, catch_up, due, now)
  if now < due + period then return due end
  if kind == 'delay' then
    if misfire ~= 'skip' then return due end
    local nxt = now + period
    redis.call('HSET', p .. 's:' .. id, 'due', fmt(nxt))
    redis.call('ZADD', p .. 'due', nxt, id)
    return nil
  end
  -- Fixed rate: the occurrences keep to the grid due + k * period.
  local latest = due + math.floor((now - due) / period) * period
  local fire
  if misfire == 'skip' then
    local nxt = latest + period
    redis.call('HSET', p .. 's:' .. id, 'due', fmt(nxt))
    redis.call('ZADD', p .. 'due', nxt, id)
    return nil
  elseif misfire == 'catch_up' then
    fire = latest - (catch_up - 1) * period
    if fire < due then fire = due end
  else
    fire = latest
  end
  if fire ~= due then redis.call('HSET', p .. 's:' .. id, 'due', fmt(fire)) end
  return fire
end

-- cp_claim_v3: returns expired leases to the due set, then leases up to n
-- (at most 1000) due fires to `owner` for lease_ms.
-- ARGV: owner, lease_ms, n
-- Returns {now, next_event, epoch, fire...}, each fire {id, due, token,
-- attempt, task, payload, lease_expiry}; next_event is -1 when nothing is
-- scheduled; epoch is the namespace's (created here when missing).
-- A fire whose last allowed attempt's lease ran out is dead-lettered here.
-- Cost per fire: one HMGET and one HSET; the sorted-set and counter updates
-- are made once per call.
local function claim(keys, args)
  local p = prefix_of(keys)
  local owner = args[1]
  local lease_ms = to_int(args[2], 'lease_ms')
  local n = to_int(args[3], 'n')
  if lease_ms <= 0 then error({err = 'BADARG lease_ms must be positive'}) end
  if n <= 0 then error({err = 'BADARG n must be positive'}) end
  if n > 1000 then n = 1000 end
  local now = now_ms()
  local epoch = epoch_of(p, now, owner)

  -- A lease that ran out goes back to be claimed again, same occurrence.
  local expired = redis.call('ZRANGEBYSCORE', p .. 'inflight', '-inf', now, 'LIMIT', 0, 256)
  if #expired > 0 then
    redis.call('ZREM', p .. 'inflight', unpack(expired))
    for _, id in ipairs(expired) do
      if redis.call('EXISTS', p .. 's:' .. id) == 1 then redis.call('ZADD', p .. 'due', now, id) end
    end
  end

  local out = {now, 0, epoch}
  local ids = redis.call('ZRANGEBYSCORE', p .. 'due', '-inf', now, 'LIMIT', 0, n)
  if #ids > 0 then
    redis.call('ZREM', p .. 'due', unpack(ids))
    -- One block of tokens per call, above the counter and the clock (see
    -- "Tokens"); a skipped id wastes one, which is harmless: tokens must
    -- only grow.
    local token = tonumber(redis.call('GET', p .. 'fence') or '0')
    if token < now * tokens_per_ms then token = now * tokens_per_ms end
    redis.call('SET', p .. 'fence', fmt(token + #ids))
    local expiry = now + lease_ms
    local leased = {}
    for _, id in ipairs(ids) do
      token = token + 1
      local skey = p .. 's:' .. id
      local f = redis.call('HMGET', skey, 'task', 'payload', 'kind', 'period', 'due', 'misfire',
                           'catch_up', 'lease_due', 'lease_attempt', 'max_attempts')
      if f[1] then
        local due = tonumber(f[5])
        -- An occurrence leased before (its lease ran out, or it was nacked)
        -- is that same fire again: it runs however late, whatever the misfire
        -- policy, or a claimed fire could be lost. One-shots always fire.
        local retried = f[8] and tonumber(f[8]) == due
        if f[3] ~= 'once' and not retried then
          due = apply_misfire(p, id, f[3], tonumber(f[4]), f[6], tonumber(f[7]), due, now)
        end
        local attempt = 1
        if retried then attempt = tonumber(f[9]) + 1 end
        -- A lease that ran out on the last attempt (its process died or
        -- stalled, every time) dead-letters the occurrence like a failure.
        if retried and attempt > tonumber(f[10] or default_policy.max_attempts) then
          dead_letter(p, id, due, attempt - 1, 'the lease of attempt ' .. fmt(attempt - 1) ..
                      ' ran out (its process died, stalled or stopped)', now)
          due = nil
        end
        if due ~= nil then
          -- The expiry lives in the inflight set only; cp_get_v3 reports it.
          redis.call('HSET', skey, 'lease_owner', owner, 'lease_token', fmt(token), 'lease_due', fmt(due),
                     'lease_attempt', attempt)
          leased[#leased + 1] = expiry
          leased[#leased + 1] = id
          out[#out + 1] = {id, due, token, attempt, f[1], f[2], expiry}
        end
      end
    end
    if #leased > 0 then redis.call('ZADD', p .. 'inflight', unpack(leased)) end
  end
  out[2] = next_event(p)
  return out
end

-- Checks that `token` still holds the lease of `id`; returns the lease's
-- due, or nil.
local function lease_due(p, id, token)
  local l = redis.call('HMGET', p .. 's:' .. id, 'lease_token', 'lease_due')
  if l[1] == false or l[1] ~= token or redis.call('ZSCORE', p .. 'inflight', id) == false then
    return nil
  end
  return tonumber(l[2])
end

-- cp_ack_v3: the fire holding `token` is done. A periodic schedule gets its
-- next occurrence (rate: due + period; delay: now + period); a one-shot is
-- deleted. Repeating the ack of the last acknowledged token is harmless.
-- ARGV: id, token[, epoch]
-- Returns {1, next_due} (next_due -1 when the schedule ended), {0, -1} for
-- a repeated ack or a schedule that no longer exists; error STALE when
-- another claim superseded the token, DATA_LOST when the epoch changed.
local function ack(keys, args)
  local p = prefix_of(keys)
  local id, token = args[1], args[2]
  check_epoch(p, args[3])
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'lease_token', 'lease_due', 'kind', 'period', 'last_token')
  if f[3] == false then
    -- Cancelled, or a one-shot whose ack was applied already: nobody else
    -- holds this fire.
    return {0, -1}
  end
  if f[1] ~= token or redis.call('ZSCORE', p .. 'inflight', id) == false then
    if f[5] == token then return {0, -1} end  -- a repeated ack, its first reply lost
    error({err = 'STALE the lease of ' .. id .. ' is not held by token ' .. token})
  end
  redis.call('ZREM', p .. 'inflight', id)
  if f[3] == 'once' then
    redis.call('DEL', skey)
    return {1, -1}
  end
  local nxt = next_due(f[3], tonumber(f[4]), tonumber(f[2]), now_ms())
  redis.call('HSET', skey, 'due', fmt(nxt), 'last_token', token)
  redis.call('HINCRBY', skey, 'fires', 1)
  redis.call('ZADD', p .. 'due', nxt, id)
  wake_if_head(p, id, nxt)
  return {1, nxt}
end

-- cp_nack_v3: the fire holding `token` failed (or was given back) with
-- error text `err`. Unless it was the schedule's last attempt, the same
-- occurrence may be claimed again after the policy's backoff, jittered by
-- `jitter` (0 to 1000000: the caller's random draw, as Redis seeds Lua's
-- generator the same for every call); the last attempt dead-letters it.
-- ARGV: id, token, jitter, err[, epoch]
-- Returns {0, when it may be claimed again} or {1, next due of the schedule
-- after the dead letter, -1 when it ended}; errors STALE and DATA_LOST as
-- for ack.
local function nack(keys, args)
  local p = prefix_of(keys)
  local id, token = args[1], args[2]
  check_epoch(p, args[5])
  local jitter = to_int(args[3], 'jitter')
  local err = string.sub(args[4] or '', 1, max_error_bytes)
  if jitter < 0 then jitter = 0 elseif jitter > 1000000 then jitter = 1000000 end
  local due = lease_due(p, id, token)
  if due == nil then
    error({err = 'STALE the lease of ' .. id .. ' is not held by token ' .. token})
  end
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'lease_attempt', 'max_attempts', 'backoff', 'backoff_mult', 'backoff_max')
  local attempt = tonumber(f[1])
  local now = now_ms()
  if attempt >= tonumber(f[2] or default_policy.max_attempts) then
    return {1, dead_letter(p, id, due, attempt, err, now)}
  end
  local base = tonumber(f[3] or default_policy.backoff) *
               tonumber(f[4] or default_policy.mult) ^ (attempt - 1)
  local cap = tonumber(f[5] or default_policy.backoff_max)
  if base > cap then base = cap end
  -- Equal jitter: a wait in [base/2, base], so waits still grow with the
  -- attempts while a fleet's retries spread out.
  local at = now + math.floor(base - (base / 2) * jitter / 1000000)
  redis.call('HSET', skey, 'last_error', err)
  redis.call('ZREM', p .. 'inflight', id)
  redis.call('ZADD', p .. 'due', at, id)
  wake_if_head(p, id, at)
  return {0, at}
end

-- cp_extend_v3: pushes the lease held by `token` to now + lease_ms.
-- ARGV: id, token, lease_ms[, epoch]
-- Returns the new expiry; error STALE when the token lost the lease,
-- DATA_LOST as for ack.
local function extend(keys, args)
  local p = prefix_of(keys)
  local id, token = args[1], args[2]
  check_epoch(p, args[4])
  local lease_ms = to_int(args[3], 'lease_ms')
  if lease_ms <= 0 then error({err = 'BADARG lease_ms must be positive'}) end
  if lease_due(p, id, token) == nil then
    error({err = 'STALE the lease of ' .. id .. ' is not held by token ' .. token})
  end
  local expiry = now_ms() + lease_ms
  redis.call('ZADD', p .. 'inflight', 'XX', expiry, id)
  return expiry
end

-- cp_release_v3: gives back a fire leased to `token` whose handler never
-- started (its process is stopping): the same occurrence may be claimed
-- again at once, and this attempt does not count against max_attempts.
-- ARGV: id, token[, epoch]
-- Returns 1 when given back, 0 when the token no longer held the lease;
-- error DATA_LOST as for ack.
local function release(keys, args)
  local p = prefix_of(keys)
  local id, token = args[1], args[2]
  check_epoch(p, args[3])
  if lease_due(p, id, token) == nil then return 0 end
  local skey = p .. 's:' .. id
  -- The next claim of this occurrence counts lease_attempt + 1 again.
  local attempt = tonumber(redis.call('HGET', skey, 'lease_attempt'))
  redis.call('HSET', skey, 'lease_attempt', fmt(attempt - 1))
  redis.call('ZREM', p .. 'inflight', id)
  local now = now_ms()
  redis.call('ZADD', p .. 'due', now, id)
  wake_if_head(p, id, now)
  return 1
end

-- cp_cancel_v3: deletes a schedule, its pending occurrence and any lease (a
-- running fire's ack then fails STALE). ARGV: id. Returns 1 if it existed.
local function cancel(keys, args)
  return remove_schedule(prefix_of(keys), args[1])
end

-- cp_get_v3: the schedule's fields (with those of its latest lease) as a
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

-- cp_dead_list_v3: up to n dead letters, oldest first, each a flat list of
-- fields: schedule, fire, task, due, attempts, error, at (no payload).
-- ARGV: n
local function dead_list(keys, args)
  local p = prefix_of(keys)
  local n = to_int(args[1], 'n')
  if n <= 0 then error({err = 'BADARG n must be positive'}) end
  local out = {}
  for _, fire in ipairs(redis.call('ZRANGE', p .. 'dead', 0, n - 1)) do
    local f = redis.call('HMGET', p .. 'dl:' .. fire, 'schedule', 'fire', 'task', 'due', 'attempts', 'error', 'at')
    if f[1] then out[#out + 1] = f end
  end
  return out
end

-- cp_dead_redrive_v3: runs a dead letter again, as a one-shot schedule due
-- at the occurrence's time (so at once) with a fresh count of attempts and
-- the same failure policy. It takes the schedule's own id when that is free
-- (a dead-lettered one-shot comes back with its fire id), else the fire id
-- (a periodic schedule that moved on keeps running untouched).
-- ARGV: fire. Returns the id of the schedule created, '' when there is no
-- such dead letter; error EXISTS when both ids are taken.
local function dead_redrive(keys, args)
  local p = prefix_of(keys)
  local fire = args[1]
  local dkey = p .. 'dl:' .. fire
  local f = redis.call('HMGET', dkey, 'schedule', 'task', 'payload', 'due', 'max_attempts', 'backoff',
                       'backoff_mult', 'backoff_max')
  if not f[1] then return '' end
  local id = f[1]
  if redis.call('EXISTS', p .. 's:' .. id) == 1 then id = fire end
  local skey = p .. 's:' .. id
  if redis.call('EXISTS', skey) == 1 then error({err = 'EXISTS schedule ' .. id .. ' exists'}) end
  local now = now_ms()
  redis.call('HSET', skey, 'task', f[2], 'payload', f[3], 'kind', 'once', 'period', '0', 'due', f[4],
             'misfire', 'once', 'catch_up', '1', 'created', fmt(now), 'fires', '0', 'last_token', '0',
             'max_attempts', f[5], 'backoff', f[6], 'backoff_mult', f[7], 'backoff_max', f[8])
  redis.call('ZADD', p .. 'due', tonumber(f[4]), id)
  redis.call('DEL', dkey)
  redis.call('ZREM', p .. 'dead', fire)
  wake_if_head(p, id, tonumber(f[4]))
  return id
end

-- cp_dead_delete_v3: deletes a dead letter. ARGV: fire. Returns 1 if it existed.
local function dead_delete(keys, args)
  local p = prefix_of(keys)
  redis.call('ZREM', p .. 'dead', args[1])
  return redis.call('DEL', p .. 'dl:' .. args[1])
end

-- cp_time_v3: Redis's clock, the one that decides what is due.
local function server_time(keys, args)
  return now_ms()
end

-- At maxmemory with noeviction, Redis refuses a function unless it is
-- flagged allow-oom. Creating a schedule needs memory, so cp_put_v3 is
-- refused there (the caller gets OOM), and so is a re-drive (the dead letter
-- stays). The others free memory (ack of a one-shot, cancel, deleting a
-- dead letter) or rewrite fields of the same size (claim, ack of a periodic
-- schedule, nack, extend), so the fleet can drain what is already scheduled
-- while Redis is full. Two of them may add a little: a nack stores the
-- error text (at most 1 KiB), and a dead letter copies the payload of a
-- periodic schedule. They run anyway: refusing them would not lose the fire
-- but keep it leased, retried and failing for ever, and a full Redis should
-- not turn a bounded failure into an endless one.
redis.register_function('cp_put_v3', put)
redis.register_function{function_name = 'cp_claim_v3', callback = claim, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_ack_v3', callback = ack, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_nack_v3', callback = nack, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_extend_v3', callback = extend, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_release_v3', callback = release, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_cancel_v3', callback = cancel, flags = {'allow-oom'}}
redis.register_function{function_name = 'cp_get_v3', callback = get, flags = {'no-writes'}}
redis.register_function{function_name = 'cp_time_v3', callback = server_time, flags = {'no-writes'}}
redis.register_function{function_name = 'cp_dead_list_v3', callback = dead_list, flags = {'no-writes'}}
redis.register_function('cp_dead_redrive_v3', dead_redrive)
redis.register_function{function_name = 'cp_dead_delete_v3', callback = dead_delete, flags = {'allow-oom'}}

-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 3 of 6 (see library.lua for the
-- keys and the rules): claims, leases and acknowledgements of fires.

-- requeued for later" (no earlier than its extra fire `xnext`, if any).
local function apply_misfire(p, id, kind, period, misfire, catch_up, due, now, xnext)
  if now < due + period then return due end
  if kind == 'delay' then
    if misfire ~= 'skip' then return due end
    local nxt = now + period
    redis.call('HSET', p .. 's:' .. id, 'due', fmt(nxt))
    requeue(p, id, nxt, xnext, nil)
    return nil
  end
  -- Fixed rate: the occurrences keep to the grid due + k * period.
  local latest = due + math.floor((now - due) / period) * period
  local fire
  if misfire == 'skip' then
    local nxt = latest + period
    redis.call('HSET', p .. 's:' .. id, 'due', fmt(nxt))
    requeue(p, id, nxt, xnext, nil)
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

-- cp_claim_v5: returns expired leases to the due set, then leases up to n
-- (at most 1000) due fires to `owner` for lease_ms, and no more than fit
-- in max_bytes of task names and payloads, but always at least one (so a
-- few huge payloads cannot make one reply, and every fire behind it, wait
-- for all of them; a fire left out stays due, for the next claim).
-- ARGV: owner, lease_ms, n[, max_bytes (absent or 0: no bound)]
-- Returns {now, next_event, epoch, fire...}, each fire {id, due, token,
-- attempt, task, payload, lease_expiry} and, of a cron schedule, its cron
-- expression and zone after those (the acknowledging process computes the
-- next instants with them, see "Cron"); next_event is -1 when nothing is
-- scheduled; epoch is the namespace's (created here when missing).
-- A fire whose last allowed attempt's lease ran out is dead-lettered here;
-- an expired lease is recorded in its schedule's history. A paused schedule's expired lease does not go back.
-- Cost per fire: one HMGET and one HSET (on the fast path, mg '0': see
-- library.lua; else one HMGET more, and one ZSCORE for an extra fire being
-- retried; one HMGET more of a cron schedule, for its expression); the
-- sorted-set and counter updates are made once per call.
local function claim(keys, args)
  local p = prefix_of(keys)
  local owner = args[1]
  local lease_ms = to_int(args[2], 'lease_ms')
  local n = to_int(args[3], 'n')
  if lease_ms <= 0 then error({err = 'BADARG lease_ms must be positive'}) end
  if n <= 0 then error({err = 'BADARG n must be positive'}) end
  if n > 1000 then n = 1000 end
  local max_bytes = 0
  if args[4] ~= nil and args[4] ~= '' then max_bytes = to_int(args[4], 'max_bytes') end
  if max_bytes < 0 then error({err = 'BADARG max_bytes must not be negative'}) end
  check_library(p)
  local now = now_ms()
  local epoch = epoch_of(p, now, owner)

  -- A lease that ran out goes back to be claimed again, same occurrence.
  local expired = redis.call('ZRANGEBYSCORE', p .. 'inflight', '-inf', now, 'LIMIT', 0, 256)
  if #expired > 0 then
    redis.call('ZREM', p .. 'inflight', unpack(expired))
    for _, id in ipairs(expired) do
      local l = redis.call('HMGET', p .. 's:' .. id, 'kind', 'paused', 'lease_due', 'lease_token', 'lease_attempt',
                           'history')
      if l[1] then
        if l[3] then
          record_run(p, id, tonumber(l[6]) or default_history, l[3], l[4], fmt(now), l[5], 'lease_expired',
                     'the lease ran out (its process died, stalled or stopped)')
        end
        if not l[2] then redis.call('ZADD', p .. 'due', now, id) end
      end
    end
  end

  local out = {now, 0, epoch}
  local ids = redis.call('ZRANGEBYSCORE', p .. 'due', '-inf', now, 'LIMIT', 0, n)
  if #ids > 0 then
    -- The fields of the ids taken: in due order, while the reply's task
    -- names and payloads fit in max_bytes (the first always fits). Read
    -- before anything is written, so the ids left out stay as they were.
    local rows = {}
    local taken = 0
    local bytes = 0
    for i = 1, #ids do
      local f = redis.call('HMGET', p .. 's:' .. ids[i], 'task', 'payload', 'kind', 'period', 'due', 'misfire',
                           'catch_up', 'lease_due', 'lease_attempt', 'mg')
      if f[1] and max_bytes > 0 then
        bytes = bytes + #f[1] + #f[2]
        if bytes > max_bytes and taken > 0 then break end
      end
      taken = i
      rows[i] = f
    end
    redis.call('ZREM', p .. 'due', unpack(ids, 1, taken))
    -- One block of tokens per call, above the counter and the clock (see
    -- "Tokens"); a skipped id wastes one, which is harmless: tokens must
    -- only grow.
    local token = tonumber(redis.call('GET', p .. 'fence') or '0')
    if token < now * tokens_per_ms then token = now * tokens_per_ms end
    redis.call('SET', p .. 'fence', fmt(token + taken))
    local expiry = now + lease_ms
    local leased = {}
    for i = 1, taken do
      token = token + 1
      local id, f = ids[i], rows[i]
      local skey = p .. 's:' .. id
      if f[1] then
        local managed = f[10] ~= '0'
        if managed then
          local m = redis.call('HMGET', skey, 'lease_x', 'xnext')
          f[11], f[12] = m[1], m[2]
        end
        if f[3] == 'cron' then
          local c = redis.call('HMGET', skey, 'cron', 'tz', 'cnext')
          f[13], f[14], f[15] = c[1], c[2], c[3]
        end
        local due = tonumber(f[5])
        local extra = false
        -- An occurrence leased before (its lease ran out, or it was nacked)
        -- is that same fire again: it runs however late, whatever the misfire
        -- policy, or a claimed fire could be lost. One-shots always fire.
        -- Extra fires wait while the periodic occurrence is retried, and the
        -- periodic one waits while an extra fire is.
        local retried = f[8] and f[11] ~= '1' and tonumber(f[8]) == due
        if not retried and f[11] == '1' and f[8] and redis.call('ZSCORE', p .. 'x:' .. id, f[8]) then
          retried, extra, due = true, true, tonumber(f[8])
        elseif not retried and f[12] and tonumber(f[12]) <= now and tonumber(f[12]) < due then
          extra, due = true, tonumber(f[12])  -- the earlier by nominal time goes first
        end
        -- A cron schedule's misfires are decided when its fires finish
        -- (cron_next), from instants a process computed.
        if f[3] ~= 'once' and f[3] ~= 'cron' and not retried and not extra then
          due = apply_misfire(p, id, f[3], tonumber(f[4]), f[6], tonumber(f[7]), due, now, f[12])
        end
        local attempt = 1
        if retried then attempt = tonumber(f[9]) + 1 end
        -- A lease that ran out on the last attempt (its process died or
        -- stalled, every time) dead-letters the occurrence like a failure.
        -- A cron schedule moves on to cnext here; without one (nobody
        -- computed it since Lua last moved it) the fire gets one more attempt,
        -- whose ack or nack brings the instants.
        if retried and attempt > tonumber(redis.call('HGET', skey, 'max_attempts') or default_policy.max_attempts) and
           (f[3] ~= 'cron' or extra or (f[15] and tonumber(f[15]) > due)) then
          dead_letter(p, id, due, attempt - 1, 'the lease of attempt ' .. fmt(attempt - 1) ..
                      ' ran out (its process died, stalled or stopped)', now)
          due = nil
        end
        if due ~= nil then
          -- The expiry lives in the inflight set only; cp_get_v5 reports it.
          -- No lease_x on the fast path: it has no extra fires.
          if managed then
            redis.call('HSET', skey, 'lease_owner', owner, 'lease_token', fmt(token), 'lease_due', fmt(due),
                       'lease_attempt', attempt, 'lease_x', extra and '1' or '0')
          else
            redis.call('HSET', skey, 'lease_owner', owner, 'lease_token', fmt(token), 'lease_due', fmt(due),
                       'lease_attempt', attempt)
          end
          leased[#leased + 1] = expiry
          leased[#leased + 1] = id
          if f[13] then
            out[#out + 1] = {id, due, token, attempt, f[1], f[2], expiry, f[13], f[14]}
          else
            out[#out + 1] = {id, due, token, attempt, f[1], f[2], expiry}
          end
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

-- cp_ack_v5: the fire holding `token` is done, and recorded in the
-- schedule's history. A periodic schedule
-- gets its next occurrence (rate: due + period; delay: now + period) unless
-- the fire was an extra one, which leaves the position as it was; a one-shot
-- is deleted. Repeating the ack of the last acknowledged token is harmless.
-- ARGV: id, token[, epoch[, a, a2, j, j2]] (epoch may be empty: not
-- checked; the four instants: a cron fire's plan, see "Cron")
-- Returns {1, next_due} (the schedule's pending due; -1 when it ended), {0, -1} for
-- a repeated ack or a schedule that no longer exists; error STALE when
-- another claim superseded the token, DATA_LOST when the epoch changed.
local function ack(keys, args)
  local p = prefix_of(keys)
  local id, token = args[1], args[2]
  check_epoch(p, args[3])
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'lease_token', 'lease_due', 'kind', 'period', 'last_token', 'mg',
                       'lease_attempt', 'fires')
  if f[3] == false then
    -- Cancelled, or a one-shot whose ack was applied already: nobody else
    -- holds this fire.
    return {0, -1}
  end
  -- The ZREM is the lease's second check: it removes nothing (and the
  -- call changes nothing) when the lease is no longer in flight.
  if f[1] ~= token or redis.call('ZREM', p .. 'inflight', id) == 0 then
    if f[5] == token then return {0, -1} end  -- a repeated ack, its first reply lost
    error({err = 'STALE the lease of ' .. id .. ' is not held by token ' .. token})
  end
  if f[3] == 'once' then
    redis.call('DEL', skey, p .. 'h:' .. id)
    redis.call('ZREM', p .. 'ids', id)
    return {1, -1}
  end
  -- lease_x, paused, xnext, history: absent on the fast path (mg '0').
  local m = {}
  if f[6] ~= '0' then m = redis.call('HMGET', skey, 'lease_x', 'paused', 'xnext', 'history', 'due') end
  local now = now_ms()
  local due = tonumber(f[2])
  local finished = fmt(now)
  local fires = fmt((tonumber(f[8]) or 0) + 1)
  record_run(p, id, tonumber(m[4]) or default_history, f[2], token, finished, f[7], 'ok', '')
  if m[1] == '1' then
    local pending = tonumber(m[5])
    local xnext = extra_done(p, id, due)
    redis.call('HSET', skey, 'last_token', token, 'fires', fires)
    requeue(p, id, pending, xnext, m[2])
    return {1, pending}
  end
  local nxt = next_due(skey, f[3], tonumber(f[4]), due, now, plan_arg(args, 4))
  if nxt == nil then nxt = max_time end  -- a cron fire acknowledged without a plan (see dead_letter)
  redis.call('HSET', skey, 'due', fmt(nxt), 'last_token', token, 'fires', fires)
  requeue(p, id, nxt, m[3], m[2])
  return {1, nxt}
end

-- cp_nack_v5: the fire holding `token` failed (or was given back) with
-- error text `err`, recorded in the schedule's history. Unless it was the
-- schedule's last attempt, the same
-- occurrence may be claimed again after the policy's backoff, jittered by
-- `jitter` (0 to 1000000: the caller's random draw, as Redis seeds Lua's
-- generator the same for every call); the last attempt dead-letters it.
-- ARGV: id, token, jitter, err[, epoch[, a, a2, j, j2]] (a cron fire's
-- plan, for a dead letter: see "Cron")
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
  local f = redis.call('HMGET', skey, 'lease_attempt', 'max_attempts', 'backoff', 'backoff_mult', 'backoff_max',
                       'paused', 'failures', 'history')
  local keep = tonumber(f[8]) or default_history
  local attempt = tonumber(f[1])
  local now = now_ms()
  local failures = fmt((tonumber(f[7]) or 0) + 1)
  if attempt >= tonumber(f[2] or default_policy.max_attempts) then
    record_run(p, id, keep, fmt(due), token, fmt(now), f[1], 'dead_lettered', err)
    redis.call('HSET', skey, 'failures', failures)
    return {1, dead_letter(p, id, due, attempt, err, now, plan_arg(args, 6))}
  end
  record_run(p, id, keep, fmt(due), token, fmt(now), f[1], 'failed', err)
  local base = tonumber(f[3] or default_policy.backoff) *
               tonumber(f[4] or default_policy.mult) ^ (attempt - 1)
  local cap = tonumber(f[5] or default_policy.backoff_max)
  if base > cap then base = cap end
  -- Equal jitter: a wait in [base/2, base], so waits still grow with the
  -- attempts while a fleet's retries spread out.
  local at = now + math.floor(base - (base / 2) * jitter / 1000000)
  -- retry_at: where resume puts it back if it is paused meanwhile.
  redis.call('HSET', skey, 'last_error', err, 'failures', failures, 'retry_at', fmt(at))
  redis.call('ZREM', p .. 'inflight', id)
  if not f[6] then
    redis.call('ZADD', p .. 'due', at, id)
    wake_if_head(p, id, at)
  end
  return {0, at}
end

-- cp_extend_v5: pushes the lease held by `token` to now + lease_ms.
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

-- cp_release_v5: gives back a fire leased to `token` whose handler never
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
  local f = redis.call('HMGET', skey, 'lease_attempt', 'paused')
  redis.call('HSET', skey, 'lease_attempt', fmt(tonumber(f[1]) - 1))
  redis.call('ZREM', p .. 'inflight', id)
  if f[2] then return 1 end  -- paused: resume puts it back
  local now = now_ms()
  redis.call('ZADD', p .. 'due', now, id)
  wake_if_head(p, id, now)
  return 1
end

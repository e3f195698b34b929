-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's Redis function library, part 4 of 6 (see library.lua for the
-- keys and the rules): dead letters, listed, re-driven and deleted.

-- cp_dead_list_v5: up to n dead letters, oldest first, each a flat list of
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

-- cp_dead_redrive_v5: runs a dead letter again, as a one-shot schedule due
-- at the occurrence's time (so at once) with a fresh count of attempts and
-- the same failure policy. It takes the schedule's own id when that is free
-- (a dead-lettered one-shot comes back with its fire id), else the fire id
-- (a periodic schedule that moved on keeps running untouched).
-- ARGV: fire. Returns the id of the schedule created, '' when there is no
-- such dead letter; error EXISTS when both ids are taken.
local function dead_redrive(keys, args)
  local p = prefix_of(keys)
  check_library(p)
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
  redis.call('HSET', skey, 'mg', '0', 'task', f[2], 'payload', f[3], 'kind', 'once', 'period', '0', 'due', f[4],
             'misfire', 'once', 'catch_up', '1', 'created', fmt(now), 'fires', '0', 'last_token', '0',
             'max_attempts', f[5], 'backoff', f[6], 'backoff_mult', f[7], 'backoff_max', f[8])
  redis.call('ZADD', p .. 'due', tonumber(f[4]), id)
  redis.call('ZADD', p .. 'ids', 0, id)
  redis.call('DEL', dkey)
  redis.call('ZREM', p .. 'dead', fire)
  wake_if_head(p, id, tonumber(f[4]))
  return id
end

-- cp_dead_delete_v5: deletes a dead letter. ARGV: fire. Returns 1 if it existed.
local function dead_delete(keys, args)
  local p = prefix_of(keys)
  redis.call('ZREM', p .. 'dead', args[1])
  return redis.call('DEL', p .. 'dl:' .. args[1])
end

#!lua name=chronopool_v5
-- chronopool library revision 3
-- Copyright (c) 2026 The chronopool authors
-- SPDX-License-Identifier: BSL-1.0
--
-- chronopool's durable schedules: the server-side half.
--
-- The library is kept in six files, concatenated in this order into the
-- one source FUNCTION LOAD takes (CMakeLists.txt, functions_source.hpp.in):
-- library.lua (this one: the keys, the rules and the shared helpers),
-- schedules.lua, fires.lua, dead_letters.lua, manage.lua (listing,
-- inspecting, pausing, triggering, backfilling) and register.lua, which
-- registers the functions. Later files use the locals of earlier ones.
--
-- Every function takes one key, a partition's due set "<p>due"; all other
-- keys of a call share its prefix <p> and hash tag, so in a cluster a call
-- touches the one slot the key routes to.
--
-- Partitions (1 to 1024, stored in "cp:{<ns>}:partitions" by the first
-- process, see cp_partitions_v5): with one, <p> is "cp:{<ns>}:" (the layout
-- from before partitions); partition k of P > 1 is "cp:{<ns>{<k>}:", a tag
-- no namespace has (namespaces hold no braces). A schedule is in partition
-- fnv1a32(its id up to the first '@') mod P (key_space.hpp), so its fire
-- ids and dead letters are too. Claims and creations on "cp:{<ns>}:" of a
-- namespace with P > 1 are refused (check_library). The rules below hold
-- per partition; all announce on "cp:{<ns>}:wake" (wake_if_head).
--
-- Keys of a partition:
--   <p>due        ZSET  schedule id -> when it may be claimed (ms, Redis TIME)
--   <p>inflight   ZSET  schedule id -> when its lease expires (ms)
--   <p>s:<id>     HASH  the schedule: task, payload, kind, period, due, ...
--                       and the lease of its latest fire: lease_owner,
--                       lease_token, lease_due, lease_attempt, lease_x (1:
--                       the lease is of an extra fire)
--                       (one hash, so a claim or an ack touches one key per fire);
--                       paused (1 while paused: then in neither due set),
--                       xnext (the earliest extra fire, absent without one),
--                       retry_at (when a nacked fire may run again), counts
--                       fires, failures, dead_letters, last_error;
--                       mg ("managed": see "The fast path"), the first field;
--                       of a cron schedule (kind cron): cron, tz (its
--                       expression and IANA zone), cnext (the instant after
--                       its pending occurrence) and cbudget (see "Cron")
--   <p>ids        ZSET  every schedule id, score 0: listed in id order
--   <p>ids_built  STRING set once the ids index holds the schedules created
--                       before it existed (by chronopool_v3)
--   <p>h:<id>     LIST  the schedule's last runs, newest first, capped
--                       (see record_run)
--   <p>x:<id>     ZSET  extra fires of the schedule (trigger, backfill): the
--                       occurrence's ms as member and score
--   <p>fence      STRING the last fencing token handed out (see "Tokens")
--   <p>epoch      STRING the namespace's epoch, "<ms>/<owner>": created by
--                       the first claim that finds it missing (see "Epoch")
--   <p>dead       ZSET  fire id -> when it was dead-lettered (ms)
--   <p>dl:<fire>  HASH  a dead letter: the fire's schedule id, task, payload,
--                       due, attempts, last error, when, and the failure
--                       policy to re-drive it with
--   <p>library    STRING the library whose layout the namespace's data has
--                       (see "Versions"); absent: this one's
--   <p>wake       pub/sub channel: a new earliest time, published as ms
--                       (partition k of several: "<k> <ms>")
--
-- A schedule has exactly one pending occurrence. Its "due" field is the
-- occurrence's nominal time and, with the id, names the fire ("<id>@<due>");
-- the due set's score is only when it may next be claimed (later than due
-- after a nack). Redis TIME is the only clock.
--
-- Extra fires (trigger now, backfill) are occurrences run besides the
-- periodic ones, without moving the schedule's position: the schedule still
-- has one lease at a time, so its runs never overlap. A claim fires, of
-- what is due, the occurrence being retried if there is one, else the
-- earlier by nominal time of the pending periodic occurrence and the
-- earliest extra fire. The due set's score is the earlier of the two while
-- nothing is being retried.
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
-- whole fleet (per partition: two partitions may hand out one token), although the counter itself may be lost (or rolled back:
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
-- The fast path: claims and acks run for every fire, so they read only the
-- fields every fire needs. A schedule's first field, mg, says whether the
-- rest may matter: '0' promises that the schedule is not paused, has no
-- extra fires (no xnext, no lease_x '1') and keeps the default history
-- length (no history field), so claim and ack skip those fields (an absent
-- field costs a scan of the whole hash) and the claim writes no lease_x.
-- Whatever sets one of them first sets mg to '1' (pause, trigger,
-- backfill, a put with another history length), and it stays '1'. A
-- schedule without mg (created by an earlier revision) takes the full path.
--
-- Versions: the library's name changes when its functions' arguments or
-- replies, or the layout of the data, change incompatibly; within one name,
-- the revision on its second line grows with every change of its code, and
-- a process loads its code only over a lower revision (see
-- parse_library_state in function_calls.cpp), so the fleet runs the newest
-- code it has and never flips between builds. A later library that writes
-- a namespace in a layout this one cannot read sets <p>library to its own
-- name (and replaces the epoch, so that fires claimed here cannot be
-- acknowledged there): from then on this library refuses the namespace
-- with VERSION (claims, creations, re-drives, and the acknowledgements,
-- give-backs and extensions whose epoch is gone) instead of misreading it.
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

-- An integer as Redis keeps it. '%d' formats through a C long (64 bits
-- here), far cheaper than '%.0f' (glibc's floating-point path), and exact
-- for every integer these functions handle (below 2^53); anything outside
-- +-2^62, infinities and NaN take '%.0f'.
local function fmt(n)
  if n > -4611686018427387904 and n < 4611686018427387904 then return string.format('%d', n) end
  return string.format('%.0f', n)
end

local tokens_per_ms = 1000

local library_name = 'chronopool_v5'

-- Fails with VERSION when the namespace's data is another library's
-- layout, PARTITIONS when `p` is "cp:{<ns>}:" of a partitioned namespace.
local function check_library(p)
  local m = redis.call('MGET', p .. 'library', p .. 'partitions')
  local lib = m[1]
  if lib and lib ~= library_name then
    error({err = 'VERSION the namespace holds data of ' .. lib .. ', which ' .. library_name ..
           ' cannot work with: stop the processes running ' .. library_name .. ' (see the upgrade rules)'})
  end
  if m[2] and m[2] ~= '1' then
    error({err = 'PARTITIONS the namespace has ' .. m[2] .. ' partitions, and this call addresses it as one ' ..
           '(configure partitions = ' .. m[2] .. ')'})
  end
end

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
    check_library(p)
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

-- Publishes the wake channel when `id` is now the earliest entry (the
-- namespace's one channel: classic pub/sub reaches every cluster node).
local function wake_if_head(p, id, score)
  local head = redis.call('ZRANGE', p .. 'due', 0, 0)
  if head[1] == id then
    local ns, k = string.match(p, '^cp:{([^{}]*){(%d+)}:$')
    if ns then
      redis.call('PUBLISH', 'cp:{' .. ns .. '}:wake', k .. ' ' .. fmt(score))
    else
      redis.call('PUBLISH', p .. 'wake', fmt(score))
    end
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

-- Deletes a schedule with everything of it: pending occurrence, lease,
-- pause, extra fires, history (its dead letters stay).
local function remove_schedule(p, id)
  local existed = redis.call('EXISTS', p .. 's:' .. id)
  redis.call('DEL', p .. 's:' .. id, p .. 'h:' .. id, p .. 'x:' .. id)
  redis.call('ZREM', p .. 'due', id)
  redis.call('ZREM', p .. 'inflight', id)
  redis.call('ZREM', p .. 'ids', id)
  return existed
end

-- Puts schedule `id` back in the due set at `at`, its periodic
-- occurrence's time, or at its earliest extra fire `xnext` (a field value,
-- or nil) when that is earlier; a paused schedule stays out (resume puts it
-- back). Announces a new head.
local function requeue(p, id, at, xnext, paused)
  if paused then return end
  if xnext then
    local x = tonumber(xnext)
    if x < at then at = x end
  end
  redis.call('ZADD', p .. 'due', at, id)
  wake_if_head(p, id, at)
end

-- How many past runs a schedule keeps when it was created without a
-- history length (its field "history" is stored only when it differs).
local default_history = 10

-- The history length a caller sent (absent or empty: the default).
local function history_arg(s)
  if s == nil or s == '' then return default_history end
  local n = to_int(s, 'history')
  if n < 0 then error({err = 'BADARG history must not be negative'}) end
  return n
end

-- Records a finished attempt in the schedule's history, newest first (0:
-- none). An entry is one string, "<due> <token> <finished> <attempt>
-- <outcome> <error text>": the numbers and the outcome (ok, failed,
-- dead_lettered, lease_expired) hold no spaces, so the error text is the
-- rest, whatever it contains. The numbers come as the strings Redis keeps
-- (no formatting here: this runs in every ack). The attempt's fencing
-- token also says when it was claimed: a claim hands out tokens from
-- tokens_per_ms * its time in ms (see "Tokens"), so token / tokens_per_ms
-- is that time to the millisecond while the fleet stays below
-- tokens_per_ms claims a millisecond, which "Tokens" assumes already; no
-- field "claimed at" is written by every claim. The list is cut
-- back to `keep` entries once it holds more than 2 keep, so most runs cost
-- one LPUSH; it never holds more than 2 keep, and readers show the first
-- `keep` (cp_inspect).
local function record_run(p, id, keep, due, token, finished, attempt, outcome, err)
  if keep <= 0 then return end
  local h = p .. 'h:' .. id
  local n = redis.call('LPUSH', h, due .. ' ' .. (token or '0') .. ' ' .. finished .. ' ' .. (attempt or '0') ..
                       ' ' .. outcome .. ' ' .. (err or ''))
  if n > 2 * keep then redis.call('LTRIM', h, 0, keep - 1) end
end

-- Extra fire `x` of schedule `id` is finished: dropped, and the schedule's
-- xnext follows the earliest one left. Returns that one as a field value
-- (nil: none left).
local function extra_done(p, id, x)
  local xkey = p .. 'x:' .. id
  redis.call('ZREM', xkey, fmt(x))
  local head = redis.call('ZRANGE', xkey, 0, 0, 'WITHSCORES')
  if head[2] then
    redis.call('HSET', p .. 's:' .. id, 'xnext', head[2])
    return head[2]
  end
  redis.call('HDEL', p .. 's:' .. id, 'xnext')
  return nil
end

-- The policy of schedules stored without one: created with the default
-- policy (failure_policy{} in scheduler_options.hpp: keep the two equal),
-- or by chronopool_v1.
local default_policy = {max_attempts = 5, backoff = 1000, mult = 2, backoff_max = 60000}
local max_error_bytes = 1024

-- "Never", as the processes send it (detail::max_time_ms: 2^50 ms).
local max_time = 1125899906842624

-- A cron plan sent at args[first ..]: {a, a2, j, j2} (see "Cron"), or nil.
local function plan_arg(args, first)
  if args[first] == nil or args[first] == '' then return nil end
  return {to_int(args[first], 'a'), to_int(args[first + 1], 'a2'), to_int(args[first + 2], 'j'),
          to_int(args[first + 3], 'j2')}
end

-- How many missed instants a cron schedule makes up in a streak.
local function cron_budget(misfire, catch_up)
  if misfire == 'skip' then return 0 end
  if misfire == 'catch_up' then return tonumber(catch_up) or 1 end
  return 1
end

-- The next occurrence of cron schedule `skey` after its occurrence `due`
-- finished at `now`, from `plan` (see "Cron"); without a plan, the stored
-- cnext when it lies after due (nil otherwise). Keeps cnext and cbudget up
-- to date.
local function cron_next(skey, due, now, plan)
  local c = redis.call('HMGET', skey, 'misfire', 'catch_up', 'cbudget', 'cnext')
  if plan == nil then
    redis.call('HDEL', skey, 'cnext', 'cbudget')
    local n = tonumber(c[4])
    if n ~= nil and n > due then return n end
    return nil
  end
  local a, a2, j, j2 = plan[1], plan[2], plan[3], plan[4]
  if a > now then
    redis.call('HDEL', skey, 'cbudget')
    redis.call('HSET', skey, 'cnext', fmt(a2))
    return a
  end
  local budget = tonumber(c[3]) or cron_budget(c[1], c[2])
  if budget > 0 then
    redis.call('HSET', skey, 'cbudget', fmt(budget - 1), 'cnext', fmt(a2))
    return a
  end
  redis.call('HDEL', skey, 'cbudget')
  redis.call('HSET', skey, 'cnext', fmt(j2))
  return j
end

-- The next occurrence of a periodic schedule whose occurrence `due` is
-- finished (acknowledged or dead-lettered), or nil for a one-shot (and for
-- a cron schedule whose next instant nobody computed: see cron_next).
local function next_due(skey, kind, period, due, now, plan)
  if kind == 'rate' then return due + period end
  if kind == 'delay' then return now + period end
  if kind == 'cron' then return cron_next(skey, due, now, plan) end
  return nil
end

-- Moves occurrence `due` of schedule `id` (its latest lease's) to the dead
-- letters with `attempts` and `err`. An extra fire is dropped and the
-- schedule keeps its position; otherwise a periodic schedule gets its next
-- occurrence, a one-shot is deleted. Returns the schedule's pending due, or -1.
-- `plan`: a cron fire's instants (see "Cron"), nil otherwise.
local function dead_letter(p, id, due, attempts, err, now, plan)
  local skey = p .. 's:' .. id
  local f = redis.call('HMGET', skey, 'task', 'payload', 'kind', 'period', 'max_attempts', 'backoff',
                       'backoff_mult', 'backoff_max', 'lease_x', 'xnext', 'paused', 'due', 'dead_letters')
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
  local count = fmt((tonumber(f[13]) or 0) + 1)
  local text = string.sub(err or '', 1, max_error_bytes)
  if f[9] == '1' then
    -- An extra fire: the periodic occurrence stays where it was.
    local xnext = extra_done(p, id, due)
    local pending = tonumber(f[12])
    redis.call('HSET', skey, 'last_error', text, 'dead_letters', count)
    requeue(p, id, pending, xnext, f[11])
    return pending
  end
  local nxt = next_due(skey, f[3], tonumber(f[4]), due, now, plan)
  -- A cron schedule whose next instant nobody computed (claim checks
  -- cnext before dead-lettering, and processes send a plan) would wait for
  -- ever rather than vanish like a one-shot.
  if nxt == nil and f[3] == 'cron' then nxt = max_time end
  if nxt == nil then
    redis.call('DEL', skey, p .. 'h:' .. id, p .. 'x:' .. id)
    redis.call('ZREM', p .. 'due', id)
    redis.call('ZREM', p .. 'ids', id)
    return -1
  end
  redis.call('HSET', skey, 'due', fmt(nxt), 'last_error', text, 'dead_letters', count)
  requeue(p, id, nxt, f[10], f[11])
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

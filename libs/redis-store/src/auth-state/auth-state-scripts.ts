import { LuaScript } from '../lua-script';

/** Redis's own clock in ms: every instance's leases are measured on one clock. */
const NOW_MS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Keeps a key at least `lease` ms more (never shortens what another instance set). */
const KEEP_FOR_LEASE = `
if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease) end
`;

/**
 * Takes a connection slot for a subject, counted across instances.
 *
 * The subject's hash holds, per instance, its open streams (`n:<id>`) and the end of its
 * lease (`u:<id>`, on Redis's clock), which the instance pushes forward while it lives.
 * The total counts live instances only: the fields of an instance whose lease ran out
 * (it died, or lost Redis for longer than the lease) are deleted here, so its slots come
 * back at most one lease after it is gone. One key, so one slot on Redis Cluster.
 *
 * KEYS: the subject's hash. ARGV: instance id, max (0: unlimited), lease ms.
 * Returns { 1, total } when taken, { 0, total } when the subject already holds max.
 */
export const ACQUIRE_CONNECTION_SCRIPT = new LuaScript<[number, number]>(
  'acquireConnectionSlot',
  `${NOW_MS}
local me, max, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local fields = redis.call('HGETALL', KEYS[1])
local counts, leases = {}, {}
for i = 1, #fields, 2 do
  local kind, id = string.sub(fields[i], 1, 2), string.sub(fields[i], 3)
  if kind == 'n:' then counts[id] = tonumber(fields[i + 1])
  elseif kind == 'u:' then leases[id] = tonumber(fields[i + 1]) end
end
local total = 0
for id, n in pairs(counts) do
  local untilMs = leases[id]
  if untilMs == nil or untilMs <= now then
    redis.call('HDEL', KEYS[1], 'n:' .. id, 'u:' .. id)
  else
    total = total + n
  end
end
for id in pairs(leases) do
  if counts[id] == nil then redis.call('HDEL', KEYS[1], 'u:' .. id) end
end
if max > 0 and total >= max then return { 0, total } end
redis.call('HINCRBY', KEYS[1], 'n:' .. me, 1)
redis.call('HSET', KEYS[1], 'u:' .. me, now + lease)
${KEEP_FOR_LEASE}
return { 1, total + 1 }
`,
);

/**
 * Gives one of this instance's slots back. A count that is already gone (its lease ran
 * out and another instance reaped it) is left alone rather than driven negative.
 *
 * KEYS: the subject's hash. ARGV: instance id. Returns 1 when a slot was given back.
 */
export const RELEASE_CONNECTION_SCRIPT = new LuaScript<number>(
  'releaseConnectionSlot',
  `
local field = 'n:' .. ARGV[1]
local n = tonumber(redis.call('HGET', KEYS[1], field))
if n == nil then return 0 end
if n <= 1 then
  redis.call('HDEL', KEYS[1], field, 'u:' .. ARGV[1])
else
  redis.call('HINCRBY', KEYS[1], field, -1)
end
return 1
`,
);

/**
 * Renews this instance's lease on a subject and, unless told to keep it (-1, while an
 * acquire is in flight and the local count is not final), sets its count to what the
 * instance really holds: a release that failed during an outage, or a count reaped while
 * the instance was cut off, is corrected here. A count of 0 removes the instance's fields.
 *
 * KEYS: the subject's hash. ARGV: instance id, count (or -1), lease ms.
 */
export const REFRESH_CONNECTIONS_SCRIPT = new LuaScript<number>(
  'refreshConnectionLease',
  `${NOW_MS}
local me, count, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if count == 0 then
  redis.call('HDEL', KEYS[1], 'n:' .. me, 'u:' .. me)
  return 0
end
if count < 0 then
  if redis.call('HEXISTS', KEYS[1], 'n:' .. me) == 0 then return 0 end
else
  redis.call('HSET', KEYS[1], 'n:' .. me, count)
end
redis.call('HSET', KEYS[1], 'u:' .. me, now + lease)
${KEEP_FOR_LEASE}
return 1
`,
);

/**
 * Counts a ticket about to be issued against the subject's bound of unredeemed tickets;
 * the count lives as long as the subject's newest ticket could.
 *
 * KEYS: the subject's ticket count. ARGV: max per subject, ticket ttl ms.
 * Returns the new count, or 0 when the subject already holds max.
 */
export const COUNT_TICKET_SCRIPT = new LuaScript<number>(
  'countStreamTicket',
  `
local lease = tonumber(ARGV[2])
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
${KEEP_FOR_LEASE}
return n
`,
);

/** A redeemed ticket no longer counts. KEYS: the subject's ticket count. */
export const UNCOUNT_TICKET_SCRIPT = new LuaScript<number>(
  'uncountStreamTicket',
  `
local n = tonumber(redis.call('GET', KEYS[1]))
if n ~= nil and n > 0 then redis.call('DECR', KEYS[1]) end
return 0
`,
);

/**
 * A fixed-window rate limit with a block, as @nestjs/throttler's in-memory storage: hits
 * are counted per window; the hit that goes over the limit blocks the key for the block
 * duration, and every hit while blocked is refused.
 *
 * KEYS: hits, block (one hash tag). ARGV: window ms, limit, block ms.
 * Returns { hits, window ms left, blocked (1/0), block ms left }.
 */
export const RATE_LIMIT_SCRIPT = new LuaScript<[number, number, number, number]>(
  'hitRateLimit',
  `
local windowMs, limit, blockMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local hits = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], windowMs)
  left = windowMs
end
local blockLeft = redis.call('PTTL', KEYS[2])
if blockLeft > 0 then return { hits, left, 1, blockLeft } end
if hits > limit then
  redis.call('SET', KEYS[2], '1', 'PX', blockMs)
  return { hits, left, 1, blockMs }
end
return { hits, left, 0, 0 }
`,
);
